// The CPU GEMM path (OpenBLAS sgemm/dgemm on the TN problem) against the FP64 reference, and the
// accuracy check failing on a corrupted output. Skips with the reason when built without OpenBLAS.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "kernels/gemm/cpu_gemm.hpp"
#include "kernels/gemm/gemm_check.hpp"

namespace gcb::kernels {
namespace {

template <typename T>
GemmCheck run_and_check(DType t, const GemmShape& s, std::vector<T>* d_out = nullptr, bool corrupt = false) {
  std::vector<T> a(size_t(s.m * s.k)), b(size_t(s.n * s.k)), d(size_t(s.m * s.n), T(NAN));
  fill_gemm_input(t, a.data(), a.size(), 11, GemmData::random);
  fill_gemm_input(t, b.data(), b.size(), 12, GemmData::random);
  cpu_gemm(t, s, a.data(), b.data(), d.data());
  if (corrupt) d[size_t(s.n - 1)] += T(0.5);  // entry (0, N-1): a sampled corner
  if (d_out) *d_out = d;
  const GemmOperandsView v{t, t, a.data(), b.data(), 1.0, 1.0, t, d.data()};
  return check_gemm(s, v, gemm_samples(s, 256, 3), gemm_error_bound(t, s.k));
}

class CpuGemm : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string reason;
    if (!cpu_gemm_available(&reason)) GTEST_SKIP() << reason;
  }
};

TEST_F(CpuGemm, SgemmMatchesFp64Reference) {
  for (const GemmShape s :
       {GemmShape{1, 1, 1}, GemmShape{17, 33, 65}, GemmShape{128, 96, 257}, GemmShape{1, 512, 1024}}) {
    SCOPED_TRACE(testing::Message() << s.m << "x" << s.n << "x" << s.k);
    const GemmCheck c = run_and_check<float>(DType::f32, s);
    EXPECT_EQ(c.failure, "");
    EXPECT_LE(c.max_error_vs_bound, 1.0);
    if (s.k > 1) {
      EXPECT_GT(c.max_rel_error, 0.0);  // fp32 rounding is visible: the check measures something
    }
  }
}

TEST_F(CpuGemm, DgemmMatchesFp64Reference) {
  const GemmCheck c = run_and_check<double>(DType::f64, {33, 17, 300});
  EXPECT_EQ(c.failure, "");
  EXPECT_LE(c.max_error_vs_bound, 1.0);
}

TEST_F(CpuGemm, KnownSmallProduct) {
  // A = [[1,2],[3,4]], B = [[5,6],[7,8]] (rows are output columns): D = A·Bᵀ = [[17,23],[39,53]].
  const std::vector<float> a = {1, 2, 3, 4}, b = {5, 6, 7, 8};
  std::vector<float> d(4, NAN);
  cpu_gemm(DType::f32, {2, 2, 2}, a.data(), b.data(), d.data());
  EXPECT_EQ(d, (std::vector<float>{17, 23, 39, 53}));
}

TEST_F(CpuGemm, CorruptedOutputFails) {
  const GemmCheck c = run_and_check<float>(DType::f32, {40, 24, 64}, nullptr, true);
  EXPECT_NE(c.failure, "");
  EXPECT_EQ(c.worst_i, 0);
  EXPECT_EQ(c.worst_j, 23);
}

TEST(CpuGemmTypes, RejectsTypesItDoesNotRun) {
  std::string reason;
  if (!cpu_gemm_available(&reason)) GTEST_SKIP() << reason;
  std::vector<uint16_t> x(4);
  EXPECT_ANY_THROW(cpu_gemm(DType::bf16, {2, 2, 1}, x.data(), x.data(), x.data()));
}

}  // namespace
}  // namespace gcb::kernels
