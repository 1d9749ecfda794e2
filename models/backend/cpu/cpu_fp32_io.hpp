// fp32 access to typed backend memory for the CPU oracle. fp32 memory is used in place, so the
// fp32 path is exactly the plain loops; bf16 and fp16 go through an fp32 copy: inputs are widened
// (exact), outputs are rounded to nearest even once, when committed — what a GPU kernel does in
// registers. The copies are host scratch of the emulation, outside the memory accounting.
#pragma once

#include <cstddef>
#include <vector>

#include "models/backend/backend.hpp"

namespace gcb::models {

// An input as fp32; a null view gives a null pointer (optional inputs such as a bias).
class Fp32Input {
 public:
  Fp32Input(View v, size_t n);
  const float* get() const { return ptr_; }

 private:
  std::vector<float> copy_;
  const float* ptr_ = nullptr;
};

// An output as fp32. `accumulate` loads the current values first (ops that add into their
// destination). commit() stores the result into the view; nothing reaches it before.
class Fp32Output {
 public:
  enum class Mode { overwrite, accumulate };
  Fp32Output(View v, size_t n, Mode mode);
  float* get() { return ptr_; }
  void commit();

 private:
  View view_;
  size_t n_ = 0;
  std::vector<float> copy_;
  float* ptr_ = nullptr;
};

// Rounds x to the storage type t and back (identity for fp32): the value a store keeps.
float round_to(DType t, float x);

}  // namespace gcb::models
