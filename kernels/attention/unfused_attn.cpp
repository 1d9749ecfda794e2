// The unfused attention baseline (the "standard attention" of the FlashAttention papers):
// S = scale·QKᵀ with cuBLAS (strided-batched, FP32 accumulate, 16-bit S in HBM), the softmax
// kernel of unfused_attn.cu in place, O = PV with cuBLAS. It holds the b·h·s×s matrix in HBM:
// that footprint and its traffic (arXiv:2205.14135 §3.2) are what fusion removes. Also the
// "unfused" row of the attention registry (attention_registry.hpp): forward only, the score
// matrix as its workspace.
#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include "core/error.hpp"
#include "core/nvtx.hpp"
#include "kernels/attention/attention_registry.hpp"
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

namespace {

class UnfusedKernel final : public AttnKernel {
 public:
  UnfusedKernel(DType t, const AttnShape& a, int device) : t_(t), a_(a), device_(device) {}
  ~UnfusedKernel() override {
    if (cublas_) cublasDestroy(cublas_);
  }
  UnfusedKernel(const UnfusedKernel&) = delete;
  UnfusedKernel& operator=(const UnfusedKernel&) = delete;
  // The cuBLAS handle, on the kernel's device, outside the timed launches.
  std::string prepare(void*) override {
    if (!cublas_) {
      CUDA_CHECK(cudaSetDevice(device_));
      CUBLAS_CHECK(cublasCreate(&cublas_));
    }
    return {};
  }
  bool writes_lse() const override { return false; }
  // The b·h·s×s score matrix (forward only).
  size_t workspace_bytes(bool) const override { return unfused_scores_bytes(t_, a_); }
  void forward(const AttnTensors& x, void* stream) override {
    GCB_CHECK(cublas_ != nullptr, "the unfused attention kernel runs after prepare()");
    unfused_forward(t_, a_, x.q, x.k, x.v, x.o, x.workspace, cublas_, stream);
  }
  void backward(const AttnTensors&, void*) override { GCB_CHECK(false, "the unfused baseline is forward-only"); }

 private:
  DType t_;
  AttnShape a_;
  int device_;
  cublasHandle_t cublas_ = nullptr;
};

}  // namespace

std::unique_ptr<AttnKernel> make_unfused_kernel(DType t, const AttnShape& a, bool, int device) {
  return std::make_unique<UnfusedKernel>(t, a, device);
}

}  // namespace gcb::kernels::attn
