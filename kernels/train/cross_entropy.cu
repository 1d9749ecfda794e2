// Softmax cross-entropy over a vocabulary shard (Megatron's vocabulary-parallel loss, Shoeybi et
// al. 2019 §3), in the log-sum-exp form the CPU oracle uses: loss = log Σ exp(l − max) −
// (l_target − max), finite however wrong the prediction. One block per row; every sum runs in a
// fixed order. The max pass also sums exp(l − running max) online (Milakov & Gimelshein 2018,
// "Online normalizer calculation for softmax"), so that the sums pass reads only the target logit.
#include <cmath>

#include "kernels/train/cross_entropy_math.hpp"
#include "kernels/train/train_common.cuh"
#include "kernels/train/train_kernels.hpp"

namespace gcb::kernels::train {
namespace {

constexpr int kThreads = 512;
__device__ size_t at(int r, int V) { return static_cast<size_t>(r) * static_cast<size_t>(V); }
// Every row of V elements starts 16-byte aligned (V a multiple of kChunk, whose 8 elements of bf16
// or fp32 are 16 or 32 bytes): the chunked loops may then load and store whole vectors.
inline bool rows_aligned16(const void* p, int V) { return aligned16(p) && V % kChunk == 0; }

// Each thread takes kChunk consecutive logits at a time (one 16-byte load of bf16 or two of fp32
// where `vec`: the row starts 16-byte aligned), the chunk's maximum first, then its terms.
template <typename T>
__global__ void max_kernel(float* rowmax, float* online, const T* logits, int V, int valid, bool vec) {
  __shared__ float scratch[32];
  const T* l = logits + at(blockIdx.x, V);
  float m = -INFINITY, s = 0.0f;
  for (int i = threadIdx.x * kChunk; i < valid; i += blockDim.x * kChunk) {
    float x[kChunk];
    load_chunk(l, static_cast<size_t>(i), static_cast<size_t>(valid), vec, x);
    const int count = min(kChunk, valid - i);
    float chunk_max = x[0];
#pragma unroll
    for (int k = 1; k < kChunk; ++k)
      if (k < count) chunk_max = fmaxf(chunk_max, x[k]);
    const float m_new = fmaxf(m, chunk_max);
    s *= expf(m - m_new);
#pragma unroll
    for (int k = 0; k < kChunk; ++k)
      if (k < count) s += expf(x[k] - m_new);
    m = m_new;
  }
  const float M = block_max(m, scratch);
  const float S = block_sum(m == -INFINITY ? 0.0f : s * expf(m - M), scratch);
  if (threadIdx.x == 0) {
    rowmax[blockIdx.x] = M;
    if (online != nullptr) {
      online[2 * blockIdx.x] = M;
      online[2 * blockIdx.x + 1] = S;
    }
  }
}

__device__ bool in_shard(int tok, int v0, int V) { return tok >= v0 && tok < v0 + V; }

// One thread per row: the online sum rescaled to the (all-reduced) row maximum.
template <typename T>
__global__ void sums_from_online_kernel(float* stats, const T* logits, const float* rowmax, const float* online,
                                        const int32_t* targets, int v0, int rows, int V) {
  const int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= rows) return;
  stats[2 * r] = online[2 * r + 1] * expf(online[2 * r] - rowmax[r]);
  stats[2 * r + 1] = in_shard(targets[r], v0, V) ? to_float(logits[at(r, V) + (targets[r] - v0)]) : 0.0f;
}

template <typename T>
__global__ void sums_kernel(float* stats, const T* logits, const float* rowmax, const int32_t* targets, int v0, int V,
                            int valid) {
  __shared__ float scratch[32];
  const T* l = logits + at(blockIdx.x, V);
  const float m = rowmax[blockIdx.x];
  float s = 0.0f;
  for (int i = threadIdx.x; i < valid; i += blockDim.x) s += expf(to_float(l[i]) - m);
  s = block_sum(s, scratch);
  if (threadIdx.x == 0) {
    const int tok = targets[blockIdx.x];
    stats[2 * blockIdx.x] = s;
    stats[2 * blockIdx.x + 1] = in_shard(tok, v0, V) ? to_float(l[tok - v0]) : 0.0f;
  }
}

template <typename T>
__global__ void finish_kernel(float* losses, T* probs, const T* logits, const float* rowmax, const float* stats, int V,
                              int valid) {
  const size_t row = at(blockIdx.x, V);
  const float m = rowmax[blockIdx.x], sum = stats[2 * blockIdx.x], inv = 1.0f / sum;
  if (threadIdx.x == 0) losses[blockIdx.x] = logf(sum) - (stats[2 * blockIdx.x + 1] - m);
  for (int i = threadIdx.x; i < V; i += blockDim.x) {
    probs[row + i] = from_float<T>(i < valid ? expf(to_float(logits[row + i]) - m) * inv : 0.0f);
  }
}

// One block per row; element i of the row is read once and its gradient written in its place,
// kChunk consecutive elements per thread at a time (16-byte accesses where `vec`).
template <typename T>
__global__ void finish_backward_kernel(float* losses, T* dlogits, const T* logits, const float* rowmax,
                                       const float* stats, const int32_t* targets, int v0, int V, int valid,
                                       float dloss, bool vec) {
  const size_t row = at(blockIdx.x, V);
  const float m = rowmax[blockIdx.x], sum = stats[2 * blockIdx.x], inv = 1.0f / sum;
  if (threadIdx.x == 0) losses[blockIdx.x] = cross_entropy_row_loss(sum, stats[2 * blockIdx.x + 1], m);
  const int hit = in_shard(targets[blockIdx.x], v0, V) ? targets[blockIdx.x] - v0 : -1;
  for (int i = threadIdx.x * kChunk; i < V; i += blockDim.x * kChunk) {
    float x[kChunk];
    load_chunk(logits + row, static_cast<size_t>(i), static_cast<size_t>(V), vec, x);
#pragma unroll
    for (int k = 0; k < kChunk; ++k) x[k] = cross_entropy_dlogit(x[k], m, inv, i + k == hit, i + k >= valid, dloss);
    store_chunk(dlogits + row, static_cast<size_t>(i), static_cast<size_t>(V), vec, x);
  }
}

template <typename T>
__global__ void backward_kernel(T* dlogits, const T* probs, const int32_t* targets, int v0, int V, float dloss) {
  const size_t row = at(blockIdx.x, V);
  const int hit = in_shard(targets[blockIdx.x], v0, V) ? targets[blockIdx.x] - v0 : -1;
  for (int i = threadIdx.x; i < V; i += blockDim.x)
    dlogits[row + i] = from_float<T>((to_float(probs[row + i]) - (i == hit ? 1.0f : 0.0f)) * dloss);
}

}  // namespace

void cross_entropy_max(DType t, float* rowmax, float* online, const void* logits, int rows, int V, int valid,
                       gpu::Stream stream) {
  const NvtxRange range("cross_entropy_max");
  GCB_CHECK(rows >= 0 && V > 0 && valid >= 0 && valid <= V, "cross_entropy_max: bad shape");
  if (rows == 0) return;
  dispatch(t, "cross_entropy_max", [&](auto tag) {
    using T = decltype(tag);
    max_kernel<T><<<static_cast<unsigned>(rows), kThreads, 0, st(stream)>>>(
        rowmax, online, static_cast<const T*>(logits), V, valid, rows_aligned16(logits, V));
  });
  check_launch();
}

void cross_entropy_sums(DType t, float* stats, const void* logits, const float* rowmax, const float* online,
                        const int32_t* targets, int v0, int rows, int V, int valid, gpu::Stream stream) {
  const NvtxRange range("cross_entropy_sums");
  GCB_CHECK(rows >= 0 && V > 0 && valid >= 0 && valid <= V, "cross_entropy_sums: bad shape");
  if (rows == 0) return;
  dispatch(t, "cross_entropy_sums", [&](auto tag) {
    using T = decltype(tag);
    if (online != nullptr) {
      sums_from_online_kernel<T><<<static_cast<unsigned>(ceil_div(rows, 256)), 256, 0, st(stream)>>>(
          stats, static_cast<const T*>(logits), rowmax, online, targets, v0, rows, V);
    } else {
      sums_kernel<T><<<static_cast<unsigned>(rows), kThreads, 0, st(stream)>>>(stats, static_cast<const T*>(logits),
                                                                               rowmax, targets, v0, V, valid);
    }
  });
  check_launch();
}

void cross_entropy_finish(DType t, float* losses, void* probs, const void* logits, const float* rowmax,
                          const float* stats, int rows, int V, int valid, gpu::Stream stream) {
  const NvtxRange range("cross_entropy_finish");
  GCB_CHECK(rows >= 0 && V > 0 && valid >= 0 && valid <= V, "cross_entropy_finish: bad shape");
  if (rows == 0) return;
  dispatch(t, "cross_entropy_finish", [&](auto tag) {
    using T = decltype(tag);
    finish_kernel<T><<<static_cast<unsigned>(rows), kThreads, 0, st(stream)>>>(
        losses, static_cast<T*>(probs), static_cast<const T*>(logits), rowmax, stats, V, valid);
  });
  check_launch();
}

void cross_entropy_finish_backward(DType t, float* losses, void* dlogits, const void* logits, const float* rowmax,
                                   const float* stats, const int32_t* targets, int v0, int rows, int V, int valid,
                                   float dloss, gpu::Stream stream) {
  const NvtxRange range("cross_entropy_finish_backward");
  GCB_CHECK(rows >= 0 && V > 0 && valid >= 0 && valid <= V, "cross_entropy_finish_backward: bad shape");
  if (rows == 0) return;
  dispatch(t, "cross_entropy_finish_backward", [&](auto tag) {
    using T = decltype(tag);
    finish_backward_kernel<T><<<static_cast<unsigned>(rows), kThreads, 0, st(stream)>>>(
        losses, static_cast<T*>(dlogits), static_cast<const T*>(logits), rowmax, stats, targets, v0, V, valid, dloss,
        rows_aligned16(logits, V) && aligned16(dlogits));
  });
  check_launch();
}

void cross_entropy_backward(DType t, void* dlogits, const void* probs, const int32_t* targets, int v0, int rows, int V,
                            float dloss, gpu::Stream stream) {
  const NvtxRange range("cross_entropy_backward");
  GCB_CHECK(rows >= 0 && V > 0, "cross_entropy_backward: bad shape");
  if (rows == 0) return;
  dispatch(t, "cross_entropy_backward", [&](auto tag) {
    using T = decltype(tag);
    backward_kernel<T><<<static_cast<unsigned>(rows), kThreads, 0, st(stream)>>>(
        static_cast<T*>(dlogits), static_cast<const T*>(probs), targets, v0, V, dloss);
  });
  check_launch();
}

}  // namespace gcb::kernels::train
