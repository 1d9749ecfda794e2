// Launchers of our FlashAttention-2-style kernels (flash_fwd.cu, flash_bwd.cu) and of the
// unfused baseline (unfused_attn.cu/.cpp). No CUDA headers: pointers are device memory, the
// stream is a cudaStream_t passed as void*. Every launcher is stream-ordered (asynchronous) and
// checks its launch. Element type: fp16 or bf16 (16-bit, FP32 accumulation); head_dim 64 or 128.
#pragma once

#include <cstddef>
#include <string>

#include "core/dtype.hpp"
#include "kernels/attention/attention_ref.hpp"
#include "kernels/attention/flash_tiling.hpp"  // forward_tiles(), backward_tiles(): the CPU reference's tiles

namespace gcb::kernels::attn {

// Whether the kernels support this type and head dim ("" when yes, else why not).
const char* flash_unsupported(DType t, const AttnShape& a);

// Whether a device whose blocks may opt in to `smem_optin` bytes of shared memory
// (gpu::DeviceInfo::smem_per_block_optin) can launch the pass ("" when yes, else the need, the
// device's limit and what to use instead). Plain C++, tested with fake device figures.
std::string flash_smem_unsupported(int head_dim, bool backward, size_t smem_optin);

// O and LSE (FP32 natural-log, [b,h,s]) from Q, K, V.
void flash_forward(DType t, const AttnShape& a, const void* q, const void* k, const void* v, void* o, float* lse,
                   void* stream);

// FP32 workspace of the backward pass: the dQ accumulator (b·h·s·d) and D = rowsum(dO∘O) (b·h·s).
size_t flash_backward_workspace_bytes(const AttnShape& a);
// dQ, dK, dV from Q, K, V, O, dO and the forward's LSE; `workspace` holds
// flash_backward_workspace_bytes(a) bytes (16-byte aligned).
void flash_backward(DType t, const AttnShape& a, const void* q, const void* k, const void* v, const void* o,
                    const void* d_o, const float* lse, void* dq, void* dk, void* dv, void* workspace, void* stream);

// Unfused forward: S = scale·QKᵀ (cuBLAS strided-batched, FP32 accumulate, 16-bit S), a softmax
// kernel with the causal mask writing P in place, O = PV (cuBLAS). `scores` holds
// unfused_scores_bytes(t, a) bytes: the b·h·s×s matrix. `cublas` is a cublasHandle_t already
// bound to `stream`.
size_t unfused_scores_bytes(DType t, const AttnShape& a);
void unfused_forward(DType t, const AttnShape& a, const void* q, const void* k, const void* v, void* o, void* scores,
                     void* cublas, void* stream);
// The softmax step alone (in place over b·h·s rows of s entries), for the unfused path.
void unfused_softmax(DType t, const AttnShape& a, void* scores, void* stream);

}  // namespace gcb::kernels::attn
