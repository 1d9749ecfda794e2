// GEMM pure pieces without a GPU: FLOP/byte counts, the cuBLASLt layout plan per dtype, FP8
// scaling math, error bounds, seeded inputs and the FP64 sampled check (including that it fails).
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "kernels/gemm/fp8_scaling.hpp"
#include "kernels/gemm/gemm_check.hpp"
#include "kernels/gemm/gemm_types.hpp"

namespace gcb::kernels {
namespace {

TEST(GemmTypes, Fp8NeedsComputeCapability89) {
  EXPECT_EQ(fp8_unsupported_reason(8, 9), "");                             // L40S
  EXPECT_EQ(fp8_unsupported_reason(9, 0), "");                             // H100
  EXPECT_EQ(fp8_unsupported_reason(10, 0), "");                            // B200
  EXPECT_NE(fp8_unsupported_reason(8, 0).find("8.9"), std::string::npos);  // A100
  EXPECT_NE(fp8_unsupported_reason(8, 6), "");
}

TEST(GemmTypes, FlopsAndBytes) {
  EXPECT_DOUBLE_EQ(gemm_flops({1024, 1024, 1024}), 2.0 * 1024 * 1024 * 1024);
  EXPECT_DOUBLE_EQ(gemm_flops({8192, 50304, 768}), 2.0 * 8192 * 50304 * 768);
  // bf16 in, bf16 out: 2·(MK + NK) + 2·MN.
  EXPECT_DOUBLE_EQ(gemm_bytes({16, 8192, 8192}, DType::bf16, DType::bf16),
                   2.0 * (16 * 8192 + 8192 * 8192) + 2.0 * 16 * 8192);
  // fp8 in (1 B), bf16 out (2 B).
  EXPECT_DOUBLE_EQ(gemm_bytes({32, 64, 128}, DType::fp8_e4m3, DType::bf16), 32 * 128 + 64 * 128 + 2.0 * 32 * 64);
}

TEST(GemmTypes, PlanIsTnWithSwappedOperands) {
  const LtGemmPlan p = make_lt_gemm_plan({100, 300, 200}, DType::bf16);
  EXPECT_EQ(p.lt_m, 300);
  EXPECT_EQ(p.lt_n, 100);
  EXPECT_EQ(p.lt_k, 200);
  EXPECT_TRUE(p.trans_a);
  EXPECT_FALSE(p.trans_b);
  EXPECT_EQ(p.a, (LtLayout{DType::bf16, 200, 300, 200}));  // our B[N,K]
  EXPECT_EQ(p.b, (LtLayout{DType::bf16, 200, 100, 200}));  // our A[M,K]
  EXPECT_EQ(p.c, (LtLayout{DType::bf16, 300, 100, 300}));  // our D[M,N]
  EXPECT_EQ(p.d, p.c);
  EXPECT_EQ(p.compute, GemmCompute::f32);
  EXPECT_EQ(p.scale_type, DType::f32);
  EXPECT_FALSE(p.fp8);
  EXPECT_FALSE(p.fast_accum);
}

TEST(GemmTypes, PlanPerDtype) {
  const GemmShape s{64, 128, 256};
  struct Want {
    DType in, a, b, d;
    GemmCompute compute;
    DType scale;
    bool fp8;
  };
  for (const Want& w :
       {Want{DType::f32, DType::f32, DType::f32, DType::f32, GemmCompute::f32, DType::f32, false},
        Want{DType::tf32, DType::f32, DType::f32, DType::f32, GemmCompute::f32_fast_tf32, DType::f32, false},
        Want{DType::f16, DType::f16, DType::f16, DType::f16, GemmCompute::f32, DType::f32, false},
        Want{DType::bf16, DType::bf16, DType::bf16, DType::bf16, GemmCompute::f32, DType::f32, false},
        Want{DType::fp8_e4m3, DType::fp8_e4m3, DType::fp8_e4m3, DType::bf16, GemmCompute::f32, DType::f32, true},
        // E5M2 × E5M2 has no kernel: the weight side (cuBLASLt's A) is E4M3.
        Want{DType::fp8_e5m2, DType::fp8_e4m3, DType::fp8_e5m2, DType::bf16, GemmCompute::f32, DType::f32, true},
        Want{DType::i8, DType::i8, DType::i8, DType::i32, GemmCompute::i32, DType::i32, false}}) {
    SCOPED_TRACE(std::string(dtype_name(w.in)));
    const LtGemmPlan p = make_lt_gemm_plan(s, w.in, true);
    EXPECT_EQ(p.a.type, w.a);
    EXPECT_EQ(p.b.type, w.b);
    EXPECT_EQ(p.d.type, w.d);
    EXPECT_EQ(p.c.type, w.d);
    EXPECT_EQ(p.compute, w.compute);
    EXPECT_EQ(p.scale_type, w.scale);
    EXPECT_EQ(p.fp8, w.fp8);
    EXPECT_EQ(p.fast_accum, w.fp8);  // fast accumulate only means something for FP8
  }
}

TEST(GemmTypes, PlanRejectsShapesTheTypeCannotTake) {
  EXPECT_THROW(make_lt_gemm_plan({0, 16, 16}, DType::bf16), UsageError);
  EXPECT_THROW(make_lt_gemm_plan({16, 16, 16}, DType::f64), UsageError);
  EXPECT_THROW(make_lt_gemm_plan({16, 16, 24}, DType::fp8_e4m3), UsageError);  // K % 16
  EXPECT_THROW(make_lt_gemm_plan({8, 16, 16}, DType::fp8_e4m3), UsageError);   // M % 16
  EXPECT_THROW(make_lt_gemm_plan({16, 16, 18}, DType::i8), UsageError);        // K % 4
  EXPECT_NO_THROW(make_lt_gemm_plan({17, 33, 65}, DType::bf16));               // any shape for 16-bit
  EXPECT_NO_THROW(make_lt_gemm_plan({16, 32, 48}, DType::fp8_e5m2));
  EXPECT_NO_THROW(make_lt_gemm_plan({3, 4, 8}, DType::i8));
}

TEST(GemmTypes, PlanKeyNamesEveryDistinguishingField) {
  const auto key = lt_plan_key(make_lt_gemm_plan({16, 32, 64}, DType::fp8_e4m3, true));
  EXPECT_EQ(key, "tn/m=32/n=16/k=64/a=fp8_e4m3/b=fp8_e4m3/d=bf16/compute=32F/fast_accum=1");
  EXPECT_NE(key, lt_plan_key(make_lt_gemm_plan({16, 32, 64}, DType::fp8_e4m3, false)));
  EXPECT_NE(lt_plan_key(make_lt_gemm_plan({16, 32, 64}, DType::f32)),
            lt_plan_key(make_lt_gemm_plan({16, 32, 64}, DType::tf32)));
}

TEST(Fp8Scaling, ScaleFromAmax) {
  EXPECT_DOUBLE_EQ(fp8_max(DType::fp8_e4m3), 448.0);
  EXPECT_DOUBLE_EQ(fp8_max(DType::fp8_e5m2), 57344.0);
  EXPECT_THROW(fp8_max(DType::bf16), Fault);
  EXPECT_DOUBLE_EQ(fp8_scale_from_amax(4.0, DType::fp8_e4m3), 112.0);
  EXPECT_DOUBLE_EQ(fp8_scale_from_amax(4.0, DType::fp8_e4m3, 1), 56.0);  // margin 1 = half the range
  EXPECT_DOUBLE_EQ(fp8_scale_from_amax(57344.0, DType::fp8_e5m2), 1.0);
  // Zero or broken amax keeps the previous scale.
  EXPECT_DOUBLE_EQ(fp8_scale_from_amax(0.0, DType::fp8_e4m3, 0, 3.0), 3.0);
  EXPECT_DOUBLE_EQ(fp8_scale_from_amax(NAN, DType::fp8_e4m3, 0, 3.0), 3.0);
  EXPECT_DOUBLE_EQ(fp8_scale_from_amax(INFINITY, DType::fp8_e4m3), 1.0);
  EXPECT_DOUBLE_EQ(fp8_scale_from_amax(1e-320, DType::fp8_e4m3, 0, 2.0), 2.0);  // quotient overflows
  EXPECT_DOUBLE_EQ(fp8_dequant_scale(112.0), 1.0 / 112.0);
  EXPECT_THROW(fp8_dequant_scale(0.0), Fault);
}

TEST(Fp8Scaling, ScaledAmaxLandsOnTheFormatMaximum) {
  // The largest input quantises to exactly fp8_max (no saturation, full range used).
  const double amax = 3.7;
  const double s = fp8_scale_from_amax(amax, DType::fp8_e4m3);
  EXPECT_EQ(fp8_e4m3_to_float(float_to_fp8_e4m3(static_cast<float>(amax * s))), 448.0f);
  EXPECT_NEAR(fp8_e4m3_to_float(float_to_fp8_e4m3(static_cast<float>(amax * s))) * fp8_dequant_scale(s), amax, 1e-6);
}

TEST(GemmCheck, BoundsGrowWithKAndOrderByPrecision) {
  const auto f32 = gemm_error_bound(DType::f32, 1024);
  EXPECT_DOUBLE_EQ(f32.output, std::ldexp(1.0, -24));
  EXPECT_DOUBLE_EQ(f32.accumulation, 2 * 1024 * std::ldexp(1.0, -24));
  EXPECT_DOUBLE_EQ(gemm_error_bound(DType::bf16, 0).output, std::ldexp(1.0, -8));
  EXPECT_DOUBLE_EQ(gemm_error_bound(DType::i8, 4096).output, 0.0);
  EXPECT_DOUBLE_EQ(gemm_error_bound(DType::i8, 4096).accumulation, 0.0);
  const auto acc = [](DType t, int64_t k) { return gemm_error_bound(t, k).accumulation; };
  EXPECT_LT(acc(DType::f32, 4096), acc(DType::f32, 8192));
  EXPECT_LT(acc(DType::f64, 4096), acc(DType::f32, 4096));
  EXPECT_LT(acc(DType::f32, 4096), acc(DType::tf32, 4096));
  EXPECT_LT(gemm_error_bound(DType::f16, 4096).output, gemm_error_bound(DType::bf16, 4096).output);
  EXPECT_LT(acc(DType::bf16, 4096), acc(DType::fp8_e4m3, 4096));
  EXPECT_LT(gemm_error_bound(DType::fp8_e4m3, 4096, true).accumulation, acc(DType::fp8_e4m3, 4096) * 10);
}

// A GEMM result that skipped 5 % of the K terms of every dot product, at the benchmarked K, must
// FAIL under the bf16 and FP8 bounds. The old bound (|error| / Σ|a·b| ≤ u_out + 2K·u_acc) let it
// pass: at K = 8192 with N(0,1) inputs it allowed errors of ~28 % (bf16) and ~68 % (FP8) of |D|.
class GemmCheckDroppedK : public ::testing::TestWithParam<DType> {};

TEST_P(GemmCheckDroppedK, DroppingFivePercentOfKFails) {
  const DType t = GetParam();
  const GemmShape s{8, 8, 8192};
  // N(0,1) inputs stored in bf16 (exact in every type below after rounding); FP8 inputs are the
  // same values, as the dequantised FP8 path presents them to the reference.
  std::vector<uint16_t> a(size_t(s.m * s.k)), b(size_t(s.n * s.k));
  fill_gemm_input(DType::bf16, a.data(), a.size(), 11, GemmData::random);
  fill_gemm_input(DType::bf16, b.data(), b.size(), 12, GemmData::random);
  const auto dot = [&](int64_t i, int64_t j, int64_t k_end) {
    double acc = 0;
    for (int64_t k = 0; k < k_end; ++k)
      acc += load_as(DType::bf16, a.data(), size_t(i * s.k + k)) * load_as(DType::bf16, b.data(), size_t(j * s.k + k));
    return acc;
  };
  std::vector<uint16_t> exact(size_t(s.m * s.n)), dropped(size_t(s.m * s.n));
  const int64_t kept = s.k - s.k / 20;  // the last 5 % of K never added
  for (int64_t i = 0; i < s.m; ++i)
    for (int64_t j = 0; j < s.n; ++j) {
      store_as(DType::bf16, exact.data(), size_t(i * s.n + j), dot(i, j, s.k));
      store_as(DType::bf16, dropped.data(), size_t(i * s.n + j), dot(i, j, kept));
    }
  const auto samples = gemm_samples(s, 64, 3);
  const GemmErrorBound bound = gemm_error_bound(t, s.k);
  const auto check = [&](const std::vector<uint16_t>& d) {
    const GemmOperandsView v{DType::bf16, DType::bf16, a.data(), b.data(), 1.0, 1.0, DType::bf16, d.data()};
    return check_gemm(s, v, samples, bound);
  };
  const GemmCheck good = check(exact);
  EXPECT_EQ(good.failure, "") << dtype_name(t);  // the exact sum rounded to bf16 passes
  const GemmCheck bad = check(dropped);
  EXPECT_NE(bad.failure, "") << dtype_name(t) << ": max error / bound " << bad.max_error_vs_bound;
  // Not by luck of one sample: the dropped terms sum to N(0, 0.22·sqrt(Σ(a·b)²)), the bf16 bound
  // is ≈ 0.005 of that scale, so nearly every sampled entry fails alone; the FP8 bound is ≈ 0.13,
  // so more than half do (under the old bound: about 1 in 5 for bf16, 1 in 1000 for FP8).
  int failing = 0;
  for (const auto& p : samples) {
    const GemmOperandsView v{DType::bf16, DType::bf16, a.data(), b.data(), 1.0, 1.0, DType::bf16, dropped.data()};
    failing += check_gemm(s, v, {p}, bound).failure.empty() ? 0 : 1;
  }
  const double share = failing / double(samples.size());
  EXPECT_GT(share, t == DType::bf16 ? 0.9 : 0.4) << dtype_name(t) << ": " << failing << " of " << samples.size();
}

INSTANTIATE_TEST_SUITE_P(Bf16AndFp8, GemmCheckDroppedK,
                         ::testing::Values(DType::bf16, DType::fp8_e4m3, DType::fp8_e5m2),
                         [](const ::testing::TestParamInfo<DType>& p) { return std::string(dtype_name(p.param)); });

TEST(GemmCheck, InputsAreSeededAndDeterministic) {
  std::vector<float> x(1001), y(1001), z(1001);
  const double amax = fill_gemm_input(DType::f32, x.data(), x.size(), 7, GemmData::random);
  fill_gemm_input(DType::f32, y.data(), y.size(), 7, GemmData::random);
  fill_gemm_input(DType::f32, z.data(), z.size(), 8, GemmData::random);
  EXPECT_EQ(x, y);
  EXPECT_NE(x, z);
  EXPECT_DOUBLE_EQ(amax, gemm_input_amax(x.size(), 7));
  double sum = 0, sq = 0;
  for (float v : x) sum += v, sq += double(v) * v;
  // N(0,1) over 1001 draws: mean within 5σ/√n ≈ 0.16, variance within 0.3 of 1.
  EXPECT_NEAR(sum / 1001, 0.0, 0.16);
  EXPECT_NEAR(sq / 1001, 1.0, 0.3);
  std::vector<int8_t> q(4096);
  EXPECT_DOUBLE_EQ(fill_gemm_input(DType::i8, q.data(), q.size(), 1, GemmData::random), 64.0);
  for (int8_t v : q) ASSERT_LE(std::abs(int(v)), 64);
  fill_gemm_input(DType::f32, x.data(), x.size(), 7, GemmData::zeros);
  for (float v : x) ASSERT_EQ(v, 0.0f);
}

TEST(GemmCheck, SamplesIncludeCornersAndStayInRange) {
  const auto s = gemm_samples({17, 33, 5}, 256, 3);
  ASSERT_EQ(s.size(), 256u);
  EXPECT_EQ(s[0].i, 0);
  EXPECT_EQ(s[3].i, 16);
  EXPECT_EQ(s[3].j, 32);
  for (const auto& p : s) {
    ASSERT_GE(p.i, 0);
    ASSERT_LT(p.i, 17);
    ASSERT_GE(p.j, 0);
    ASSERT_LT(p.j, 33);
  }
}

// A naive double-accumulated product rounded to fp32 passes; corruptions fail with indices.
class GemmCheckOnNaive : public ::testing::Test {
 protected:
  void SetUp() override {
    a.resize(static_cast<size_t>(s.m * s.k));
    b.resize(static_cast<size_t>(s.n * s.k));
    d.resize(static_cast<size_t>(s.m * s.n));
    fill_gemm_input(DType::f32, a.data(), a.size(), 1, GemmData::random);
    fill_gemm_input(DType::f32, b.data(), b.size(), 2, GemmData::random);
    for (int64_t i = 0; i < s.m; ++i)
      for (int64_t j = 0; j < s.n; ++j) {
        double acc = 0;
        for (int64_t k = 0; k < s.k; ++k) acc += double(a[size_t(i * s.k + k)]) * b[size_t(j * s.k + k)];
        d[size_t(i * s.n + j)] = static_cast<float>(acc);
      }
  }
  GemmCheck check() {
    const GemmOperandsView v{DType::f32, DType::f32, a.data(), b.data(), 1.0, 1.0, DType::f32, d.data()};
    return check_gemm(s, v, gemm_samples(s, 64, 5), gemm_error_bound(DType::f32, s.k));
  }
  GemmShape s{19, 23, 37};
  std::vector<float> a, b, d;
};

TEST_F(GemmCheckOnNaive, CorrectOutputPasses) {
  const GemmCheck c = check();
  EXPECT_EQ(c.failure, "");
  EXPECT_EQ(c.non_finite, 0u);
  // Rounding the exact double to fp32 errs by at most 2^-24·|d|: within the bound's output term.
  EXPECT_LE(c.max_error_vs_bound, 1.0);
  EXPECT_GT(c.max_error_vs_bound, 0.0);
}

TEST_F(GemmCheckOnNaive, CorruptedSampledEntryFails) {
  d[size_t((s.m - 1) * s.n + (s.n - 1))] *= 1.01f;  // a corner, always sampled
  const GemmCheck c = check();
  EXPECT_NE(c.failure.find("D[18][22]"), std::string::npos) << c.failure;
  EXPECT_EQ(c.worst_i, 18);
  EXPECT_EQ(c.worst_j, 22);
}

TEST_F(GemmCheckOnNaive, NonFiniteAnywhereFails) {
  d[size_t(5 * s.n + 7)] = NAN;  // not necessarily sampled: the scan covers all of D
  const GemmCheck c = check();
  EXPECT_EQ(c.non_finite, 1u);
  EXPECT_NE(c.failure.find("(i=5, j=7)"), std::string::npos) << c.failure;
}

TEST(GemmCheck, Fp8DequantisationIsApplied) {
  // a = 2 · (1/4), b = 3 · (1/2) stored in e4m3; D = K · 0.5 · 1.5.
  const GemmShape s{1, 1, 16};
  std::vector<uint8_t> a(16, float_to_fp8_e4m3(2.0f)), b(16, float_to_fp8_e4m3(3.0f));
  std::vector<uint16_t> d(1, float_to_bf16(16 * 0.75f));
  const GemmOperandsView v{DType::fp8_e4m3, DType::fp8_e4m3, a.data(), b.data(), 0.25, 0.5, DType::bf16, d.data()};
  EXPECT_EQ(check_gemm(s, v, gemm_samples(s, 4, 1), gemm_error_bound(DType::fp8_e4m3, 16)).failure, "");
  d[0] = float_to_bf16(16 * 6.0f);  // forgot to dequantise
  EXPECT_NE(check_gemm(s, v, gemm_samples(s, 4, 1), gemm_error_bound(DType::fp8_e4m3, 16)).failure, "");
}

TEST(GemmCheck, IntegerGemmMustBeExact) {
  const GemmShape s{1, 1, 4};
  const std::vector<int8_t> a = {1, -2, 3, 64}, b = {5, 6, -7, 64};
  std::vector<int32_t> d = {5 - 12 - 21 + 4096};
  const GemmOperandsView v{DType::i8, DType::i8, a.data(), b.data(), 1.0, 1.0, DType::i32, d.data()};
  EXPECT_EQ(check_gemm(s, v, gemm_samples(s, 4, 1), gemm_error_bound(DType::i8, 4)).failure, "");
  d[0] += 1;
  EXPECT_NE(check_gemm(s, v, gemm_samples(s, 4, 1), gemm_error_bound(DType::i8, 4)).failure, "");
}

}  // namespace
}  // namespace gcb::kernels
