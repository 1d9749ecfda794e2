// Accuracy verdicts for attention outputs against the FP64 reference, shared by the benchmark
// and the tests so both apply the same, stated thresholds.
#pragma once

#include <string>

#include "core/dtype.hpp"
#include "kernels/attention/attention_ref.hpp"

namespace gcb::kernels::attn {

// Scale-free errors: RMSE / RMS(reference) and max |error| / max |reference|.
struct RelativeError {
  double rel_rmse = 0, rel_max = 0;
  double rmse = 0, max_abs = 0;
  size_t worst = 0, non_finite = 0;
};
RelativeError relative_error(const double* want, const float* got, size_t n);

// Thresholds for 16-bit inputs with FP32 accumulation. Each output is a sum of products whose
// operands (Q, K, V, and P or dS before each mma) are rounded to the 16-bit type, unit roundoff
// u = 2^-11 (fp16) or 2^-8 (bf16); rounding errors of random sign leave a relative RMS error of
// order u, so RMSE ≤ 4u and max ≤ 20u (tails over millions of outputs); the backward pass
// rounds twice as many operands (P and dS), so 2× that. A wrong mask or a missing rescale gives
// errors of order 1. FP32 (the CPU tiled path) uses 1e-4 / 1e-3 (FP32 sums of ≤ 10⁴ terms).
struct Tolerance {
  double rel_rmse, rel_max;
};
Tolerance attention_tolerance(DType t, bool backward);

// "" when within tolerance and finite, else what is wrong (tensor name, worst index, values).
std::string check_error(const std::string& tensor, const RelativeError& e, Tolerance tol);

}  // namespace gcb::kernels::attn
