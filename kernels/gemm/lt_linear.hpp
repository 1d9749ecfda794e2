// The training backend's GEMM on cuBLASLt: row-major C[M,N] = op(A)·op(B) + β·C (+ bias[N] over
// rows), any transposes, one element type for A, B, C and the bias (fp32 or bf16), fp32
// accumulation (CUBLAS_COMPUTE_32F: true fp32 for fp32 inputs, no TF32). The plan is a pure
// description (tested without a GPU); LtLinear runs it, one set of descriptors per plan. Built on
// the LtContext of cublaslt_gemm.hpp (handle and workspace); heuristic #0, as llm.c does.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "core/dtype.hpp"
#include "kernels/gemm/gemm_types.hpp"

namespace gcb::kernels {

struct LinearGemm {
  bool trans_a = false;  // A stored [K, M] (else [M, K])
  bool trans_b = false;  // B stored [N, K] (else [K, N])
  int64_t m = 0, n = 0, k = 0;
  DType type = DType::f32;
  bool bias = false;        // + bias[N] broadcast over the M rows (CUBLASLT_EPILOGUE_BIAS)
  bool accumulate = false;  // β = 1: C is read (gradient accumulation), else β = 0
  bool operator<(const LinearGemm& o) const;
};

// Row-major C[M,N] is column-major Cᵀ[N,M] = op(B)ᵀ·op(A)ᵀ, so cuBLASLt's (m, n, k) = (N, M, K),
// its A is our B (stored N×K column-major with op N, or K×N with op T when trans_b) and its B is
// our A (K×M with op N, or M×K with op T when trans_a); C and D are N×M with ld N; the bias has
// cuBLASLt's m = N entries, one per row of its D. gcb::UsageError for other types or shapes.
LtGemmPlan make_lt_linear_plan(const LinearGemm& g);
std::string describe(const LinearGemm& g);

class LtContext;

// Runs LinearGemm problems on one LtContext (not thread-safe: one per rank).
class LtLinear {
 public:
  explicit LtLinear(LtContext& ctx);
  ~LtLinear();
  LtLinear(const LtLinear&) = delete;
  LtLinear& operator=(const LtLinear&) = delete;
  // Stream-ordered. a, b, c, bias: device pointers of g.type (bias only when g.bias).
  void run(const LinearGemm& g, const void* a, const void* b, void* c, const void* bias, void* stream);

 private:
  struct Plan;
  LtContext& ctx_;
  std::map<LinearGemm, std::unique_ptr<Plan>> plans_;
};

}  // namespace gcb::kernels
