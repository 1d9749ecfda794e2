// How far a CUDA op may lie from the CPU oracle on the same inputs, derived rather than tuned.
// Both backends read the same stored bits (inputs widened exactly), compute in fp32 and round
// each stored value once; they differ in the order of fp32 sums, in the last bits of expf /
// tanhf / logf, and — because of those — in which way a stored value rounds:
//   storage  one unit in the last place of the output type: two correct roundings of reals that
//            differ by less than an ulp land at most one ulp apart. bf16 keeps 8 significant bits,
//            so ulp(x) = 2^(⌊log2|x|⌋ − 7) ≤ 2⁻⁷|x|; fp32 keeps 24, ulp(x) ≤ 2⁻²³|x|.
//   sums     a sum of n fp32 terms in two different orders: each within γ_n·Σ|terms| of the exact
//            sum (γ_n ≈ n·2⁻²⁴, Higham, "Accuracy and Stability of Numerical Algorithms" §4.2),
//            so 2·n·2⁻²⁴·Σ|terms| apart.
//   libm     CUDA's expf, tanhf and logf are within 2 ulp of fp32 (CUDA C++ Programming Guide,
//            "Mathematical Functions", single precision), the host's within 1: 4·2⁻²⁴ relative
//            per evaluation on the path.
// Integer and bookkeeping ops (copies, casts, init, embedding gathers) must be exact.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>

#include "core/dtype.hpp"

namespace gcb::models::test {

inline constexpr double kFp32Unit = 0x1p-24;  // unit roundoff of fp32 (accumulation)

// One ulp of `t` at magnitude |x| (the spacing of representable values there).
inline double ulp(DType t, double x) {
  const int mantissa = t == DType::bf16 ? 7 : t == DType::f16 ? 10 : t == DType::f64 ? 52 : 23;
  const double a = std::max(std::fabs(x), 1e-30);
  return std::ldexp(1.0, static_cast<int>(std::floor(std::log2(a))) - mantissa);
}

struct OpTolerance {
  DType storage = DType::f32;
  size_t sum_length = 1;  // n of the longest fp32 sum behind one output
  double sum_abs = 0;     // Σ|terms| of that sum (or a bound on it)
  int libm_calls = 0;     // transcendental evaluations on an output's path
  double extra = 0;       // a stated, op-specific absolute term (e.g. bf16 P inside attention)

  // The allowed |got − want| for an output whose reference value is `want`.
  double bound(double want) const {
    return ulp(storage, want) + 2.0 * static_cast<double>(sum_length) * kFp32Unit * sum_abs +
           4.0 * kFp32Unit * libm_calls * std::fabs(want) + extra;
  }
};

}  // namespace gcb::models::test
