// The unfused attention baseline (the "standard attention" of the FlashAttention papers):
// S = scale·QKᵀ with cuBLAS (strided-batched, FP32 accumulate, 16-bit S in HBM), the softmax
// kernel of unfused_attn.cu in place, O = PV with cuBLAS. It holds the b·h·s×s matrix in HBM:
// that footprint and its traffic (arXiv:2205.14135 §3.2) are what fusion removes.
#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include "core/error.hpp"
#include "core/nvtx.hpp"
#include "kernels/attention/flash_attn.hpp"

namespace gcb::kernels::attn {

size_t unfused_scores_bytes(DType t, const AttnShape& a) {
  return static_cast<size_t>(a.batch) * static_cast<size_t>(a.heads) * static_cast<size_t>(a.seq) *
         static_cast<size_t>(a.seq) * dtype_size(t);
}

void unfused_forward(DType t, const AttnShape& a, const void* q, const void* k, const void* v, void* o, void* scores,
                     void* cublas, void* stream) {
  NvtxRange range("unfused_forward");
  GCB_CHECK(t == DType::f16 || t == DType::bf16, "unfused attention supports fp16 and bf16");
  auto handle = static_cast<cublasHandle_t>(cublas);
  CUBLAS_CHECK(cublasSetStream(handle, static_cast<cudaStream_t>(stream)));
  const cudaDataType_t type = t == DType::f16 ? CUDA_R_16F : CUDA_R_16BF;
  const long long s = a.seq, d = a.head_dim, batch = static_cast<long long>(a.batch) * a.heads;
  const auto n = static_cast<int>(s), dim = static_cast<int>(d);
  const float scale = static_cast<float>(a.scale()), one = 1.0f, zero = 0.0f;
  // Row-major X (r×c) is column-major Xᵀ. S (row-major s×s) = column-major Sᵀ = K·Qᵀ:
  // A = K seen as column-major Kᵀ (d×s) transposed, B = Q seen as column-major Qᵀ (d×s).
  CUBLAS_CHECK(cublasGemmStridedBatchedEx(handle, CUBLAS_OP_T, CUBLAS_OP_N, n, n, dim, &scale, k, type, dim, s * d, q,
                                          type, dim, s * d, &zero, scores, type, n, s * s, static_cast<int>(batch),
                                          CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
  unfused_softmax(t, a, scores, stream);
  // O (row-major s×d) = column-major Oᵀ = Vᵀ·Pᵀ: A = V as column-major Vᵀ (d×s), B = P as Pᵀ (s×s).
  CUBLAS_CHECK(cublasGemmStridedBatchedEx(handle, CUBLAS_OP_N, CUBLAS_OP_N, dim, n, n, &one, v, type, dim, s * d,
                                          scores, type, n, s * s, &zero, o, type, dim, s * d, static_cast<int>(batch),
                                          CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
}

}  // namespace gcb::kernels::attn
