// LtLinear: cuBLASLt descriptors per LinearGemm plan (lt_linear.hpp) and its epilogue (bias, GELU
// with its aux matrix), heuristic #0, launched on the caller's stream. Host code; compiles, unvalidated (no GPU has run
// it).
#include <cublasLt.h>
#include <fmt/format.h>

#include "core/error.hpp"
#include "kernels/gemm/cublaslt_gemm.hpp"
#include "kernels/gemm/lt_cuda_types.hpp"
#include "kernels/gemm/lt_linear.hpp"

namespace gcb::kernels {
namespace {

cublasLtEpilogue_t lt_epilogue(LtEpilogue e) {
  switch (e) {
    case LtEpilogue::none: return CUBLASLT_EPILOGUE_DEFAULT;
    case LtEpilogue::bias: return CUBLASLT_EPILOGUE_BIAS;
    case LtEpilogue::gelu_aux: return CUBLASLT_EPILOGUE_GELU_AUX;
    case LtEpilogue::gelu_aux_bias: return CUBLASLT_EPILOGUE_GELU_AUX_BIAS;
    case LtEpilogue::dgelu: return CUBLASLT_EPILOGUE_DGELU;
  }
  throw Fault("unknown cuBLASLt epilogue");
}

}  // namespace

struct LtLinear::Plan {
  cublasLtMatmulDesc_t op = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr;
  cublasLtMatmulHeuristicResult_t algo{};

  Plan(LtContext& ctx, const LinearGemm& g, const LinearAlignment& align) {
    const LtGemmPlan p = make_lt_linear_plan(g);
    CUBLAS_CHECK(cublasLtMatmulDescCreate(&op, cuda_compute(p.compute), cuda_type(p.scale_type)));
    const auto set = [&](cublasLtMatmulDescAttributes_t attr, const auto& value) {
      CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(op, attr, &value, sizeof(value)));
    };
    set(CUBLASLT_MATMUL_DESC_TRANSA, static_cast<int32_t>(p.trans_a ? CUBLAS_OP_T : CUBLAS_OP_N));
    set(CUBLASLT_MATMUL_DESC_TRANSB, static_cast<int32_t>(p.trans_b ? CUBLAS_OP_T : CUBLAS_OP_N));
    // The bias and the GELU aux matrix have D's type (fp32 or bf16), cuBLASLt's default.
    const LinearEpilogue e = make_lt_linear_epilogue(g);
    if (e.epilogue != LtEpilogue::none) set(CUBLASLT_MATMUL_DESC_EPILOGUE, lt_epilogue(e.epilogue));
    if (e.aux_ld != 0) set(CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD, e.aux_ld);
    a = make_lt_layout(p.a);
    b = make_lt_layout(p.b);
    c = make_lt_layout(p.c);
    cublasLtMatmulPreference_t pref = nullptr;
    CUBLAS_CHECK(cublasLtMatmulPreferenceCreate(&pref));
    const uint64_t ws = ctx.workspace_bytes();
    CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof(ws)));
    // The pointers' real alignment, so the heuristic only offers kernels that can load them.
    const auto min_alignment = [&](cublasLtMatmulPreferenceAttributes_t attr, uint16_t bytes) {
      const uint32_t value = bytes;
      CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(pref, attr, &value, sizeof(value)));
    };
    min_alignment(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, align.a);
    min_alignment(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, align.b);
    min_alignment(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, align.c);
    min_alignment(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, align.c);
    int returned = 0;
    const cublasStatus_t status = cublasLtMatmulAlgoGetHeuristic(static_cast<cublasLtHandle_t>(ctx.handle()), op, a, b,
                                                                 c, c, pref, 1, &algo, &returned);
    cublasLtMatmulPreferenceDestroy(pref);
    CUBLAS_CHECK(status);
    if (returned == 0) throw Fault("cuBLASLt has no algorithm for " + describe(g));
  }
  ~Plan() {
    for (auto l : {a, b, c})
      if (l) cublasLtMatrixLayoutDestroy(l);
    if (op) cublasLtMatmulDescDestroy(op);
  }
  Plan(const Plan&) = delete;
  Plan& operator=(const Plan&) = delete;
};

LtLinear::LtLinear(LtContext& ctx) : ctx_(ctx) {}
LtLinear::~LtLinear() = default;

void LtLinear::run(const LinearGemm& g, const void* a, const void* b, void* c, const void* bias, void* aux,
                   void* stream) {
  // cuBLASLt's A is our b, its B our a (lt_linear.hpp).
  const auto key = std::make_pair(g, lt_linear_alignment(b, a, c));
  auto it = plans_.find(key);
  if (it == plans_.end()) it = plans_.emplace(key, std::make_unique<Plan>(ctx_, g, key.second)).first;
  Plan& p = *it->second;
  if (g.bias) {
    GCB_CHECK(bias != nullptr, "LtLinear: the plan adds a bias but none was given");
    CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(p.op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof(bias)));
  }
  if (g.gelu != LinearGelu::none) {
    GCB_CHECK(aux != nullptr, "LtLinear: a GELU epilogue needs its aux matrix");
    CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(p.op, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER, &aux, sizeof(aux)));
  }
  const float alpha = 1.0f, beta = g.accumulate ? 1.0f : 0.0f;
  // cuBLASLt's A is our B and its B our A (lt_linear.hpp); C and D are the same matrix.
  CUBLAS_CHECK(cublasLtMatmul(static_cast<cublasLtHandle_t>(ctx_.handle()), p.op, &alpha, b, p.a, a, p.b, &beta, c, p.c,
                              c, p.c, &p.algo.algo, ctx_.workspace(), ctx_.workspace_bytes(),
                              static_cast<cudaStream_t>(stream)));
}

}  // namespace gcb::kernels
