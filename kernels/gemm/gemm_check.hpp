// Seeded GEMM inputs and the accuracy check every GEMM timing carries: sampled output entries
// against an FP64 dot product on the host, error relative to Σ|a·b| (the quantity rounding-
// error bounds are stated in), thresholds per dtype with their reason, and a full scan for
// non-finite output. Pure host code; the GPU path copies its output back first.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/dtype.hpp"
#include "kernels/gemm/gemm_types.hpp"

namespace gcb::kernels {

enum class GemmData { random, zeros };  // zeros only to show the power effect (kernels.md §3.3)

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

// Allowed |d − ref| / Σ_k |a_ik·b_jk| for an input type, K and accumulation mode. Stated in
// gemm_check.cpp beside each case with its reason.
double gemm_tolerance(DType input, int64_t k, bool fast_accum = false);

struct GemmOperandsView {
  DType a_type = DType::f32;  // storage type of a (tf32 inputs are stored as fp32)
  DType b_type = DType::f32;  // storage type of b (gemm_b_type)
  const void* a = nullptr;    // row-major [M, K]
  const void* b = nullptr;    // row-major [N, K]
  double a_dequant = 1.0;     // value = stored · dequant (FP8 per-tensor scaling)
  double b_dequant = 1.0;
  DType output = DType::f32;
  const void* d = nullptr;    // row-major [M, N]
};

struct GemmCheck {
  double max_rel_error = 0;   // over the samples
  double tolerance = 0;
  int64_t worst_i = -1, worst_j = -1;
  size_t non_finite = 0;      // over the whole output
  std::string failure;        // "" when the check passed, else the first offending indices
};

GemmCheck check_gemm(const GemmShape& s, const GemmOperandsView& v, const std::vector<GemmSample>& samples,
                     double tolerance);

}  // namespace gcb::kernels
