// Seeded GEMM inputs and the accuracy check every GEMM timing carries: sampled output entries
// against an FP64 dot product on the host, each error held to a bound that grows like the true
// sum does (√K for zero-mean random inputs, not K: a bound relative to Σ|a·b| let a bf16 result
// 28 % off pass at K = 8192), thresholds per dtype with their reason, and a full scan for
// non-finite output. Pure host code; the GPU path copies its output back first.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/dtype.hpp"
#include "kernels/gemm/gemm_types.hpp"

namespace gcb::kernels {

enum class GemmData { random, zeros };  // zeros only to show the power effect (NVIDIA Matrix Multiplication Background)

// Fills `count` elements of type `t` at `host`: N(0,1) (Box–Muller over splitmix64, so the
// values are the same on every platform) multiplied by `scale` and rounded to `t`; int8 gets
// uniform integers in [-64, 64] (exact int32 accumulation up to K = 2^17). Returns max |value|
// before rounding (the amax an FP8 recipe would record).
double fill_gemm_input(DType t, void* host, size_t count, uint64_t seed, GemmData data, double scale = 1.0);
// max |x| over `count` N(0,1) values of fill_gemm_input with the same seed (for FP8 scales).
double gemm_input_amax(size_t count, uint64_t seed);

struct GemmSample {
  int64_t i = 0, j = 0;
};
// `count` seeded (i, j) pairs, always including the four corners (first and last row/column
// catch layout and tail bugs of non-multiple-of-tile shapes).
std::vector<GemmSample> gemm_samples(const GemmShape& s, int count, uint64_t seed);

// The allowed error of one output entry: |d − ref| ≤ output·|ref| + accumulation·‖a∘b‖₂, where
// ‖a∘b‖₂ = √(Σ_k (a_ik·b_jk)²) is the size of the terms (for N(0,1) inputs ≈ √K, like |ref|).
// `output` is the unit roundoff of the output rounding, `accumulation` bounds the summation and
// input-rounding error for zero-mean random inputs, whose partial sums grow like √k. Stated in
// gemm_check.cpp beside each type with its reason.
struct GemmErrorBound {
  double output = 0;
  double accumulation = 0;
};
GemmErrorBound gemm_error_bound(DType input, int64_t k, bool fast_accum = false);

struct GemmOperandsView {
  DType a_type = DType::f32;  // storage type of a (tf32 inputs are stored as fp32)
  DType b_type = DType::f32;  // storage type of b (gemm_b_type)
  const void* a = nullptr;    // row-major [M, K]
  const void* b = nullptr;    // row-major [N, K]
  double a_dequant = 1.0;     // value = stored · dequant (FP8 per-tensor scaling)
  double b_dequant = 1.0;
  DType output = DType::f32;
  const void* d = nullptr;  // row-major [M, N]
};

struct GemmCheck {
  double max_rel_error = 0;       // over the samples: |d − ref| / ‖a∘b‖₂
  double max_error_vs_bound = 0;  // over the samples: |d − ref| / allowed (≤ 1 passes)
  GemmErrorBound bound;
  int64_t worst_i = -1, worst_j = -1;  // the sample with the largest error vs its bound
  size_t non_finite = 0;               // over the whole output
  std::string failure;                 // "" when the check passed, else the first offending indices
};

GemmCheck check_gemm(const GemmShape& s, const GemmOperandsView& v, const std::vector<GemmSample>& samples,
                     GemmErrorBound bound);

}  // namespace gcb::kernels
