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
#include <utility>

#include "core/dtype.hpp"
#include "kernels/gemm/gemm_types.hpp"

namespace gcb::kernels {

// A GELU fused into the GEMM's epilogue (cublasLt.h, cublasLtEpilogue_t), as llm.c's
// train_gpt2.cu fuses it (karpathy/llm.c llmc/matmul.cuh). Whether cuBLASLt's GELU is the tanh
// form GPT-2 uses is what test_lt_gelu_epilogue (label gpu) measures; until that test has run on a
// GPU the training backend keeps it off (CudaBackendOptions::lt_gelu, `train --lt-gelu`).
enum class LinearGelu : uint8_t {
  none,
  forward,   // D = GELU(op(A)·op(B) (+ bias)); the GELU input stored to aux (EPILOGUE_GELU_AUX[_BIAS])
  backward,  // D = GELU'(aux) · (op(A)·op(B)), aux the forward's GELU input (EPILOGUE_DGELU)
};

struct LinearGemm {
  bool trans_a = false;  // A stored [K, M] (else [M, K])
  bool trans_b = false;  // B stored [N, K] (else [K, N])
  int64_t m = 0, n = 0, k = 0;
  DType type = DType::f32;
  bool bias = false;        // + bias[N] broadcast over the M rows (CUBLASLT_EPILOGUE_BIAS)
  bool accumulate = false;  // β = 1: C is read (gradient accumulation), else β = 0
  LinearGelu gelu = LinearGelu::none;
  bool operator<(const LinearGemm& o) const;
};

// The cuBLASLt epilogue of a LinearGemm and the leading dimension of its aux matrix (the GELU
// input, g.type, row-major [M, N] = column-major N×M: ld N). gcb::UsageError for a GELU with
// accumulation (cuBLASLt would apply it to β·C + product), a GELU backward with a bias, or N not a
// multiple of 8 (cublasLt.h, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD: "Must be divisible by 8").
enum class LtEpilogue : uint8_t { none, bias, gelu_aux, gelu_aux_bias, dgelu };
struct LinearEpilogue {
  LtEpilogue epilogue = LtEpilogue::none;
  int64_t aux_ld = 0;  // 0 without aux
};
LinearEpilogue make_lt_linear_epilogue(const LinearGemm& g);

// Row-major C[M,N] is column-major Cᵀ[N,M] = op(B)ᵀ·op(A)ᵀ, so cuBLASLt's (m, n, k) = (N, M, K),
// its A is our B (stored N×K column-major with op N, or K×N with op T when trans_b) and its B is
// our A (K×M with op N, or M×K with op T when trans_a); C and D are N×M with ld N; the bias has
// cuBLASLt's m = N entries, one per row of its D. gcb::UsageError for other types or shapes.
LtGemmPlan make_lt_linear_plan(const LinearGemm& g);
std::string describe(const LinearGemm& g);

// The alignment cuBLASLt may assume of each operand: the largest power of two, at most 256 (its
// default, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_*_BYTES), that divides the address. Views into the
// flat parameter buffer are aligned to 2·C bytes only (gpt2-1558m: C = 1600 → 128 B; odd custom
// widths less), so a heuristic asked at the default 256 can pick a kernel whose loads assume more
// than the pointer has. Of cuBLASLt's A, B and C (= D).
struct LinearAlignment {
  uint16_t a = 256, b = 256, c = 256;
  bool operator<(const LinearAlignment& o) const;
};
uint16_t lt_pointer_alignment(const void* p);
LinearAlignment lt_linear_alignment(const void* lt_a, const void* lt_b, const void* c);

class LtContext;

// Runs LinearGemm problems on one LtContext (not thread-safe: one per rank).
class LtLinear {
 public:
  explicit LtLinear(LtContext& ctx);
  ~LtLinear();
  LtLinear(const LtLinear&) = delete;
  LtLinear& operator=(const LtLinear&) = delete;
  // Stream-ordered. a, b, c, bias, aux: device pointers of g.type (bias only when g.bias, aux
  // only with a GELU: written by forward, read by backward).
  void run(const LinearGemm& g, const void* a, const void* b, void* c, const void* bias, void* aux, void* stream);

 private:
  struct Plan;
  LtContext& ctx_;
  std::map<std::pair<LinearGemm, LinearAlignment>, std::unique_ptr<Plan>> plans_;  // one per shape and alignment
};

}  // namespace gcb::kernels
