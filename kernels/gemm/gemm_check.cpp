// GEMM inputs, FP64 sampled reference and tolerances (see gemm_check.hpp).
#include "kernels/gemm/gemm_check.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <fmt/format.h>
#include <numbers>

#include "core/error.hpp"
#include "core/hash.hpp"

namespace gcb::kernels {

namespace {

// Uniform in (0, 1]: 53 random bits, never 0 (log(0) would be -Inf).
double uniform01(uint64_t& state) { return (static_cast<double>(splitmix64_next(state) >> 11) + 1.0) * 0x1.0p-53; }

// The i-th N(0,1) value of the stream `seed`: one Box–Muller pair per two indices.
template <typename F>
void for_each_normal(size_t count, uint64_t seed, F&& f) {
  uint64_t state = seed * 0x2545f4914f6cdd1dULL + 1;
  for (size_t i = 0; i < count; i += 2) {
    const double r = std::sqrt(-2.0 * std::log(uniform01(state)));
    const double t = 2.0 * std::numbers::pi * uniform01(state);
    f(i, r * std::cos(t));
    if (i + 1 < count) f(i + 1, r * std::sin(t));
  }
}

constexpr double u(int mantissa_bits) { return std::ldexp(1.0, -mantissa_bits); }

}  // namespace

double fill_gemm_input(DType t, void* host, size_t count, uint64_t seed, GemmData data, double scale) {
  if (data == GemmData::zeros) {
    for (size_t i = 0; i < count; ++i) store_as(t, host, i, 0.0);
    return 0.0;
  }
  if (t == DType::i8) {
    uint64_t state = seed * 0x2545f4914f6cdd1dULL + 7;
    for (size_t i = 0; i < count; ++i)
      store_as(t, host, i, static_cast<double>(static_cast<int64_t>(splitmix64_next(state) % 129) - 64));
    return 64.0;
  }
  double amax = 0;
  const DType storage = t == DType::tf32 ? DType::f32 : t;  // tf32 inputs are fp32 values
  for_each_normal(count, seed, [&](size_t i, double x) {
    amax = std::max(amax, std::fabs(x));
    store_as(storage, host, i, x * scale);
  });
  return amax;
}

double gemm_input_amax(size_t count, uint64_t seed) {
  double amax = 0;
  for_each_normal(count, seed, [&](size_t, double x) { amax = std::max(amax, std::fabs(x)); });
  return amax;
}

std::vector<GemmSample> gemm_samples(const GemmShape& s, int count, uint64_t seed) {
  std::vector<GemmSample> out = {{0, 0}, {0, s.n - 1}, {s.m - 1, 0}, {s.m - 1, s.n - 1}};
  uint64_t state = seed ^ 0x5851f42d4c957f2dULL;
  for (int c = 4; c < count; ++c)
    out.push_back({static_cast<int64_t>(splitmix64_next(state) % static_cast<uint64_t>(s.m)),
                   static_cast<int64_t>(splitmix64_next(state) % static_cast<uint64_t>(s.n))});
  return out;
}

GemmErrorBound gemm_error_bound(DType input, int64_t k, bool fast_accum) {
  const double kd = static_cast<double>(k);
  // Summation: each of the K additions errs by at most u_acc·|s_k| (Higham, "Accuracy and
  // Stability of Numerical Algorithms", §4.2), and for zero-mean random terms the partial sums
  // s_k grow like √k·rms(a·b). Even if every error had the same sign (tensor cores truncate
  // while aligning addends: Fasi, Higham, Mikaitis, Pranesh, "Numerical behavior of NVIDIA tensor
  // cores", PeerJ CS 2021), the total is u_acc·Σ_k √k·rms ≈ (2/3)·K·u_acc·‖a∘b‖₂ (‖a∘b‖₂ =
  // √K·rms). 2·K·u_acc leaves 3× margin. Output rounding adds u_out·|d| (d ≈ ref). Inputs are
  // exactly representable in their type except where stated: the reference reads the stored
  // values. A result that drops a fraction f of the K terms errs by about √f·‖a∘b‖₂ (0.22 for
  // f = 5 %), far above every bound here at the benchmarked K.
  const double fp32_sum = 2 * kd * u(24);
  switch (input) {
    case DType::f64: return {u(53), 2 * kd * u(53)};
    case DType::f32: return {u(24), fp32_sum};
    // TF32 drops 13 mantissa bits of each fp32 input inside the tensor core: up to 2^-10 relative
    // per input if the hardware truncates (2^-11 if it rounds), two inputs per product. Those
    // errors multiply terms of random sign, so their sum has a standard deviation of about
    // 2^-10·‖a∘b‖₂; 4σ of margin.
    case DType::tf32: return {u(24), 4 * 2 * u(10) + fp32_sum};
    // FP32 accumulate, output rounded to fp16 (10 stored mantissa bits: u = 2^-11).
    case DType::f16: return {u(11), fp32_sum};
    // FP32 accumulate, output rounded to bf16 (7 stored mantissa bits: u = 2^-8).
    case DType::bf16: return {u(8), fp32_sum};
    case DType::fp8_e4m3:
    case DType::fp8_e5m2: {
      // Output bf16 (2^-8). Hopper FP8 tensor cores keep about 14 bits in the accumulator
      // (DeepSeek-V3 technical report §3.3.2). Without fast accumulate cuBLAS promotes the
      // partial sum to FP32 periodically; its interval is not documented, so take DeepSeek's
      // N_c = 128 terms (§3.3.2). Each chunk errs by ≤ 2·N_c·2^-14·‖chunk‖₂
      // (the rule above with K → N_c), and over K/N_c chunks Σ‖chunk‖₂ ≤ √(K/N_c)·‖a∘b‖₂, so
      // 2·√(N_c·K)·2^-14 in all. Fast accumulate never promotes; its per-step errors are taken as
      // of random sign (4σ of u·√(Σ s_k²) = 4·√(K/2)·2^-14), not the biased worst case, which would
      // be as large as a dropped 10 % of K. On an H200 (2026-11-27) e4m3 and e5m2 with and without
      // fast accumulation at K up to 8192 stayed within both (test_cublaslt_gemm, gemm 8192³);
      // how close to them the error came was not recorded.
      const double chunk = std::min(kd, 128.0);
      const double low_precision = fast_accum ? 4 * std::sqrt(kd / 2) * u(14) : 2 * std::sqrt(chunk * kd) * u(14);
      return {u(8), low_precision + fp32_sum};
    }
    // INT32 accumulation of integers is exact while |sum| < 2^31 (64²·K < 2^31 for K ≤ 2^17).
    case DType::i8: return {0.0, 0.0};
    case DType::i32: break;
  }
  GCB_CHECK(false, fmt::format("no GEMM error bound for {}", dtype_name(input)));  // the plan refused it first
  return {};
}

GemmCheck check_gemm(const GemmShape& s, const GemmOperandsView& v, const std::vector<GemmSample>& samples,
                     GemmErrorBound bound) {
  GemmCheck c;
  c.bound = bound;
  const size_t mn = static_cast<size_t>(s.m) * static_cast<size_t>(s.n);
  if (dtype_is_float(v.output)) {
    size_t first = mn;
    for (size_t e = 0; e < mn; ++e)
      if (!std::isfinite(load_as(v.output, v.d, e)) && c.non_finite++ == 0) first = e;
    if (c.non_finite > 0) {
      c.failure = fmt::format("{} non-finite outputs, first at (i={}, j={}) = {}", c.non_finite,
                              first / static_cast<size_t>(s.n), first % static_cast<size_t>(s.n),
                              load_as(v.output, v.d, first));
      return c;
    }
  }
  const auto ratio = [](double err, double scale) {
    // A zero scale (every term 0, or an exact type) admits only the exact answer.
    return scale > 0 ? err / scale : (err == 0 ? 0.0 : std::numeric_limits<double>::infinity());
  };
  for (const auto& p : samples) {
    double ref = 0, sum_sq = 0;
    const size_t arow = static_cast<size_t>(p.i) * static_cast<size_t>(s.k);
    const size_t brow = static_cast<size_t>(p.j) * static_cast<size_t>(s.k);
    for (int64_t kk = 0; kk < s.k; ++kk) {
      const double prod = load_as(v.a_type, v.a, arow + static_cast<size_t>(kk)) * v.a_dequant *
                          load_as(v.b_type, v.b, brow + static_cast<size_t>(kk)) * v.b_dequant;
      ref += prod;
      sum_sq += prod * prod;
    }
    const double norm = std::sqrt(sum_sq);
    const double got =
        load_as(v.output, v.d, static_cast<size_t>(p.i) * static_cast<size_t>(s.n) + static_cast<size_t>(p.j));
    const double err = std::fabs(got - ref);
    const double allowed = bound.output * std::fabs(ref) + bound.accumulation * norm;
    const double vs_bound = ratio(err, allowed);
    c.max_rel_error = std::max(c.max_rel_error, ratio(err, norm));
    if (c.worst_i < 0 || vs_bound > c.max_error_vs_bound) {
      c.max_error_vs_bound = vs_bound;
      c.worst_i = p.i;
      c.worst_j = p.j;
    }
    if (vs_bound > 1 && c.failure.empty())
      c.failure = fmt::format(
          "D[{}][{}] = {} but FP64 reference = {} (|error| {:.3g} > allowed {:.3g} = {:.3g}·|ref| + "
          "{:.3g}·sqrt(sum (a*b)^2))",
          p.i, p.j, got, ref, err, allowed, bound.output, bound.accumulation);
  }
  return c;
}

}  // namespace gcb::kernels
