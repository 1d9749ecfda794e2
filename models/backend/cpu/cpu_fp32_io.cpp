// Fp32Input and Fp32Output (cpu_fp32_io.hpp): the CPU oracle's fp32 view of typed backend memory — in place for fp32, a
// widened copy for bf16 and fp16 whose output is rounded to nearest even on commit().
#include "models/backend/cpu/cpu_fp32_io.hpp"

#include <cstdint>
#include <string>

#include "core/error.hpp"

namespace gcb::models {
namespace {

void check_type(DType t) {
  GCB_CHECK(t == DType::f32 || t == DType::bf16 || t == DType::f16,
            "CpuBackend: tensors are fp32, bf16 or fp16, not " + std::string(dtype_name(t)));
}

float widen(DType t, const void* p, size_t i) {
  const uint16_t bits = static_cast<const uint16_t*>(p)[i];
  return t == DType::bf16 ? bf16_to_float(bits) : fp16_to_float(bits);
}

}  // namespace

float round_to(DType t, float x) {
  if (t == DType::bf16) return bf16_to_float(float_to_bf16(x));
  if (t == DType::f16) return fp16_to_float(float_to_fp16(x));
  return x;
}

Fp32Input::Fp32Input(View v, size_t n) {
  if (!v) return;
  check_type(v.dtype);
  if (v.dtype == DType::f32) {
    ptr_ = static_cast<const float*>(v.data);
    return;
  }
  copy_.resize(n);
  for (size_t i = 0; i < n; ++i) copy_[i] = widen(v.dtype, v.data, i);
  ptr_ = copy_.data();
}

Fp32Output::Fp32Output(View v, size_t n, Mode mode) : view_(v), n_(n) {
  if (!v) return;
  check_type(v.dtype);
  if (v.dtype == DType::f32) {
    ptr_ = static_cast<float*>(v.data);
    return;
  }
  copy_.assign(n, 0.0f);
  if (mode == Mode::accumulate) {
    for (size_t i = 0; i < n; ++i) copy_[i] = widen(v.dtype, v.data, i);
  }
  ptr_ = copy_.data();
}

void Fp32Output::commit() {
  if (!view_ || view_.dtype == DType::f32) return;
  auto* out = static_cast<uint16_t*>(view_.data);
  if (view_.dtype == DType::bf16) {
    for (size_t i = 0; i < n_; ++i) out[i] = float_to_bf16(copy_[i]);
  } else {
    for (size_t i = 0; i < n_; ++i) out[i] = float_to_fp16(copy_[i]);
  }
}

}  // namespace gcb::models
