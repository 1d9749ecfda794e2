// AdamW with decoupled weight decay (Loshchilov & Hutter 2019, Alg. 2), the CPU oracle's update
// element for element: m, v updated, bias-corrected, w −= lr·(m̂/(√v̂ + eps) + wd·w). Mixed
// precision keeps w in the fp32 master copy and stores it rounded into the bf16 parameters.
#include "kernels/train/train_common.cuh"
#include "kernels/train/train_kernels.hpp"

namespace gcb::kernels::train {
namespace {

cudaStream_t st(void* s) { return static_cast<cudaStream_t>(s); }

template <typename T>
__global__ void adamw_kernel(T* params, const T* grads, float* m, float* v, float* master, size_t n, AdamWStep a,
                             bool vec) {
  const size_t i = chunk_start();
  if (i >= n) return;
  float g[kChunk], w[kChunk], mi[kChunk], vi[kChunk];
  load_chunk(grads, i, n, vec, g);
  load_chunk(m, i, n, vec, mi);
  load_chunk(v, i, n, vec, vi);
  if (master != nullptr) {
    load_chunk(master, i, n, vec, w);
  } else {
    load_chunk(params, i, n, vec, w);
  }
#pragma unroll
  for (int k = 0; k < kChunk; ++k) {
    mi[k] = a.beta1 * mi[k] + (1.0f - a.beta1) * g[k];
    vi[k] = a.beta2 * vi[k] + (1.0f - a.beta2) * g[k] * g[k];
    const float mhat = mi[k] / a.c1, vhat = vi[k] / a.c2;
    w[k] -= a.lr * (mhat / (sqrtf(vhat) + a.eps) + a.weight_decay * w[k]);
  }
  store_chunk(m, i, n, vec, mi);
  store_chunk(v, i, n, vec, vi);
  if (master != nullptr) store_chunk(master, i, n, vec, w);
  store_chunk(params, i, n, vec, w);
}

}  // namespace

void adamw(DType t, void* params, const void* grads, float* m, float* v, float* master, size_t n, const AdamWStep& a,
           void* stream) {
  const NvtxRange range("adamw");
  GCB_CHECK(master != nullptr || t == DType::f32, "adamw: bf16 parameters need fp32 master weights");
  if (n == 0) return;
  const bool vec =
      aligned16(params) && aligned16(grads) && aligned16(m) && aligned16(v) && (master == nullptr || aligned16(master));
  dispatch(t, "adamw", [&](auto tag) {
    using T = decltype(tag);
    adamw_kernel<T><<<chunk_blocks(n), kChunkThreads, 0, st(stream)>>>(
        static_cast<T*>(params), static_cast<const T*>(grads), m, v, master, n, a, vec);
  });
  check_launch();
}

}  // namespace gcb::kernels::train
