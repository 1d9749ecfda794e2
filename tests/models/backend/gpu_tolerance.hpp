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

// GELU, tanh form, at one input x (both sides evaluate the same fp32 expression; they differ in
// tanhf's last bits and in which products the compiler fuses). Per side, with U = 2⁻²⁴:
//   u = k·(x + c·x³): ≤ 5 roundings of terms of one sign, |δu| ≤ 5U|u|
//   t = tanh(u): |δt| ≤ sech²(u)·|δu| + 2 ulp of t ≤ sech²(u)·5U|u| + 4U|t|
// The forward 0.5·x·(1 + t) then adds ≤ 3 roundings: |δout| ≤ 0.5|x|·(|δt| + 3U(1 + |t|)).
// The error of the output is set by |x|, not by the output: where 1 + t is small (x < 0) the
// output is small and tanh's error, scaled by 0.5|x|, is not. Two sides: twice one side's error,
// plus one ulp of the storage type for the final rounding landing on either side of a value.
struct GeluTerms {
  static constexpr double k = 0.7978845608028654, c = 0.044715;  // √(2/π) and GPT-2's cubic term
  double t, u, dt;                                               // tanh(u), its argument, one side's |δt|
  explicit GeluTerms(double x) {
    u = k * (x + c * x * x * x);
    t = std::tanh(u);
    dt = (1 - t * t) * 5 * kFp32Unit * std::fabs(u) + 4 * kFp32Unit * std::fabs(t);
  }
};
inline double gelu_forward_bound(DType storage, double x, double want) {
  const GeluTerms g(x);
  const double side = 0.5 * std::fabs(x) * (g.dt + 3 * kFp32Unit * (1 + std::fabs(g.t)));
  return ulp(storage, want) + 2 * side;
}
// Backward: dx = d·(A + B), A = 0.5(1 + t), B = 0.5·x·s·k·(1 + 3c·x²), s = 1 − t². Per side:
//   |δA| ≤ 0.5|δt| + U·A;  |δs| ≤ 2|t||δt| + 2U;  |δB| ≤ 0.5|x|·k(1 + 3c·x²)·|δs| + 6U|B|;
//   |δdx| ≤ |d|·(|δA| + |δB| + U(A + |B|)) + U|dx|.
// A and B have opposite signs for x < 0, and A + B passes through zero near x ≈ −0.75: the bound
// follows the terms A + |B|, not their sum, so the cancellation there is covered.
inline double gelu_backward_bound(DType storage, double x, double d, double want) {
  constexpr double k = GeluTerms::k, c = GeluTerms::c;
  const GeluTerms g(x);
  const double s = 1 - g.t * g.t, a = 0.5 * (1 + g.t), w = 0.5 * std::fabs(x) * k * (1 + 3 * c * x * x), b = w * s;
  const double da = 0.5 * g.dt + kFp32Unit * a, ds = 2 * std::fabs(g.t) * g.dt + 2 * kFp32Unit,
               db = w * ds + 6 * kFp32Unit * b;
  const double side = std::fabs(d) * (da + db + kFp32Unit * (a + b)) + kFp32Unit * std::fabs(want);
  return ulp(storage, want) + 2 * side;
}

}  // namespace gcb::models::test
