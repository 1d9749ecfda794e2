// The training GEMM's cuBLASLt plan, checked without a GPU: a column-major GEMM that reads memory
// exactly as cuBLASLt would under the plan (its A = our B, its B = our A, op T or N, leading
// dimensions) must give the row-major op(A)·op(B) for all four transpose combinations.
#include <gtest/gtest.h>

#include <vector>

#include "core/error.hpp"
#include "kernels/gemm/lt_linear.hpp"

namespace gcb::kernels {
namespace {

// Element (r, c) of op(X) for a column-major layout l with op T when `trans`.
double at(const std::vector<double>& mem, const LtLayout& l, bool trans, int64_t r, int64_t c) {
  const int64_t row = trans ? c : r, col = trans ? r : c;
  EXPECT_LT(row, l.rows);
  EXPECT_LT(col, l.cols);
  return mem[static_cast<size_t>(col * l.ld + row)];
}

// D (column-major lt_m × lt_n, ld = plan.d.ld) = op(A)·op(B) as cuBLASLt computes it.
std::vector<double> cublaslt_semantics(const LtGemmPlan& p, const std::vector<double>& lt_a,
                                       const std::vector<double>& lt_b) {
  std::vector<double> d(static_cast<size_t>(p.d.ld * p.lt_n), 0.0);
  for (int64_t i = 0; i < p.lt_m; ++i)
    for (int64_t j = 0; j < p.lt_n; ++j) {
      double s = 0;
      for (int64_t k = 0; k < p.lt_k; ++k) s += at(lt_a, p.a, p.trans_a, i, k) * at(lt_b, p.b, p.trans_b, k, j);
      d[static_cast<size_t>(j * p.d.ld + i)] = s;
    }
  return d;
}

TEST(LtLinearPlan, ColumnMajorPlanComputesTheRowMajorProductForEveryTranspose) {
  const int64_t M = 5, N = 3, K = 4;
  for (bool ta : {false, true}) {
    for (bool tb : {false, true}) {
      LinearGemm g;
      g.trans_a = ta;
      g.trans_b = tb;
      g.m = M;
      g.n = N;
      g.k = K;
      g.type = DType::bf16;
      const LtGemmPlan p = make_lt_linear_plan(g);
      // Our A: [M,K] row-major, or [K,M] when trans_a; our B: [K,N], or [N,K] when trans_b.
      std::vector<double> A(static_cast<size_t>(M * K)), B(static_cast<size_t>(K * N));
      for (size_t i = 0; i < A.size(); ++i) A[i] = static_cast<double>(i % 7) - 3.0 + 0.5 * static_cast<double>(i);
      for (size_t i = 0; i < B.size(); ++i) B[i] = 2.0 - static_cast<double>(i % 5) + 0.25 * static_cast<double>(i);
      const auto a = [&](int64_t i, int64_t k) {
        return ta ? A[static_cast<size_t>(k * M + i)] : A[static_cast<size_t>(i * K + k)];
      };
      const auto b = [&](int64_t k, int64_t j) {
        return tb ? B[static_cast<size_t>(j * K + k)] : B[static_cast<size_t>(k * N + j)];
      };
      const std::vector<double> d = cublaslt_semantics(p, B, A);  // cuBLASLt's A is our B
      for (int64_t i = 0; i < M; ++i)
        for (int64_t j = 0; j < N; ++j) {
          double want = 0;
          for (int64_t k = 0; k < K; ++k) want += a(i, k) * b(k, j);
          // Row-major C[i,j] is column-major element (j, i) of D, ld N.
          EXPECT_DOUBLE_EQ(d[static_cast<size_t>(i * p.d.ld + j)], want)
              << "ta=" << ta << " tb=" << tb << " i=" << i << " j=" << j;
        }
      EXPECT_EQ(p.d.ld, N);
      EXPECT_EQ(p.compute, GemmCompute::f32);  // fp32 accumulation, never TF32
      EXPECT_EQ(p.a.type, DType::bf16);
    }
  }
}

TEST(LtLinearPlan, RefusesOtherTypesAndEmptyShapes) {
  LinearGemm g;
  g.m = g.n = g.k = 8;
  g.type = DType::f16;
  EXPECT_THROW(make_lt_linear_plan(g), Fault);
  g.type = DType::f32;
  g.k = 0;
  EXPECT_THROW(make_lt_linear_plan(g), Fault);
  g.k = 8;
  g.bias = true;
  g.accumulate = true;
  EXPECT_EQ(describe(g), "nn m=8 n=8 k=8 fp32 +bias +=C");
}

// The epilogue of each GEMM the engine runs: bias only, the MLP's GELU forward (with its bias) and
// backward, each GELU with an aux matrix of leading dimension N (row-major [M, N] is column-major
// N×M, cuBLASLt's rows = our N).
TEST(LtLinearPlan, EpilogueAndAuxLeadingDimensionOfEveryEngineGemm) {
  LinearGemm g;
  g.m = 6;
  g.n = 24;
  g.k = 5;
  g.type = DType::bf16;
  EXPECT_EQ(make_lt_linear_epilogue(g).epilogue, LtEpilogue::none);
  g.bias = true;
  EXPECT_EQ(make_lt_linear_epilogue(g).epilogue, LtEpilogue::bias);
  EXPECT_EQ(make_lt_linear_epilogue(g).aux_ld, 0);
  g.gelu = LinearGelu::forward;
  EXPECT_EQ(make_lt_linear_epilogue(g).epilogue, LtEpilogue::gelu_aux_bias);
  EXPECT_EQ(make_lt_linear_epilogue(g).aux_ld, 24);
  g.bias = false;
  EXPECT_EQ(make_lt_linear_epilogue(g).epilogue, LtEpilogue::gelu_aux);
  g.gelu = LinearGelu::backward;
  EXPECT_EQ(make_lt_linear_epilogue(g).epilogue, LtEpilogue::dgelu);
  EXPECT_EQ(make_lt_linear_epilogue(g).aux_ld, 24);
  EXPECT_EQ(describe(g), "nn m=6 n=24 k=5 bf16 dgelu");
}

TEST(LtLinearPlan, GeluEpilogueRefusesAccumulationBackwardBiasAndUnalignedAux) {
  LinearGemm g;
  g.m = g.k = 8;
  g.n = 16;
  g.type = DType::f32;
  g.gelu = LinearGelu::forward;
  g.accumulate = true;  // cuBLASLt would apply the GELU to β·C + product
  EXPECT_THROW(make_lt_linear_epilogue(g), Fault);
  g.accumulate = false;
  g.gelu = LinearGelu::backward;
  g.bias = true;  // DGELU has no bias input (DGELU_BGRAD would write one)
  EXPECT_THROW(make_lt_linear_epilogue(g), Fault);
  g.bias = false;
  g.n = 12;  // cublasLt.h: the GELU aux leading dimension must be divisible by 8
  EXPECT_THROW(make_lt_linear_epilogue(g), Fault);
  g.n = 16;
  EXPECT_NO_THROW(make_lt_linear_epilogue(g));
}

// The alignment a heuristic is told (CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_*_BYTES): the largest
// power of two dividing the address, capped at cuBLASLt's default 256. gpt2-1558m's parameter views
// (C = 1600, bf16: rows of 3200 bytes) sit 128-aligned at best; plans differ per alignment.
TEST(LtLinearAlignment, LargestPowerOfTwoDividingTheAddressAtMost256) {
  alignas(512) static unsigned char buffer[8192];
  EXPECT_EQ(lt_pointer_alignment(buffer), 256);
  EXPECT_EQ(lt_pointer_alignment(buffer + 256), 256);
  EXPECT_EQ(lt_pointer_alignment(buffer + 128), 128);
  EXPECT_EQ(lt_pointer_alignment(buffer + 3200), 128);  // one gpt2-1558m bf16 row in
  EXPECT_EQ(lt_pointer_alignment(buffer + 3 * 1600), 64);
  EXPECT_EQ(lt_pointer_alignment(buffer + 2), 2);
  EXPECT_EQ(lt_pointer_alignment(buffer + 1), 1);
  EXPECT_EQ(lt_pointer_alignment(nullptr), 256);
  const LinearAlignment x = lt_linear_alignment(buffer, buffer + 64, buffer + 16);
  EXPECT_EQ(x.a, 256);
  EXPECT_EQ(x.b, 64);
  EXPECT_EQ(x.c, 16);
  const LinearAlignment y = lt_linear_alignment(buffer, buffer, buffer);
  EXPECT_TRUE(y < x || x < y);  // distinct plan keys
  EXPECT_FALSE(y < y);
}

}  // namespace
}  // namespace gcb::kernels
