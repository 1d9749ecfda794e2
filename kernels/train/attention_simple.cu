// Causal attention without tiles, for fp32 runs and head dims our flash kernels do not take:
// the FlashAttention-2 recurrences (Dao 2023, Alg. 1 and 2) one row at a time, straight on the
// fused qkv layout. A warp owns a row; lane l holds dimensions l, l + 32, … of it; each score is
// a warp sum. Forward: online softmax over keys 0…i. Backward: D_i = dO_i·O_i, then
// dQ_i = scale·Σ_{j≤i} P_ij(dP_ij − D_i)K_j per query row and dK_j = scale·Σ_{i≥j} P_ij(dP_ij −
// D_i)Q_i, dV_j = Σ_{i≥j} P_ij dO_i per key row, with P_ij = exp(scale·Q_i·K_j − lse_i) and
// dP_ij = dO_i·V_j: no atomics, every sum in a fixed order.
#include <cmath>

#include "kernels/train/train_common.cuh"
#include "kernels/train/train_kernels.hpp"

namespace gcb::kernels::train {
namespace {

constexpr int kWarps = 4;       // rows per block
constexpr int kMaxPerLane = 8;  // head dim ≤ 32 · 8

// Where the pieces of one head live in the fused tensors.
struct HeadView {
  int T, C, NH, hs;
  __device__ size_t qkv(int b, int t, int part, int h) const {
    return (static_cast<size_t>(b) * T + t) * 3 * static_cast<size_t>(C) + static_cast<size_t>(part) * C +
           static_cast<size_t>(h) * hs;
  }
  __device__ size_t row(int b, int t, int h) const {
    return (static_cast<size_t>(b) * T + t) * static_cast<size_t>(C) + static_cast<size_t>(h) * hs;
  }
  __device__ size_t stat(int b, int h, int t) const { return (static_cast<size_t>(b) * NH + h) * T + t; }
};

template <typename T>
__device__ void load_row(float (&x)[kMaxPerLane], const T* p, int hs) {
  const int lane = threadIdx.x % 32;
#pragma unroll
  for (int k = 0; k < kMaxPerLane; ++k) {
    const int d = lane + 32 * k;
    x[k] = d < hs ? to_float(p[d]) : 0.0f;
  }
}
template <typename T>
__device__ void store_row(T* p, const float (&x)[kMaxPerLane], int hs, float s) {
  const int lane = threadIdx.x % 32;
#pragma unroll
  for (int k = 0; k < kMaxPerLane; ++k) {
    const int d = lane + 32 * k;
    if (d < hs) p[d] = from_float<T>(x[k] * s);
  }
}
template <typename T>
__device__ float dot(const float (&x)[kMaxPerLane], const T* p, int hs) {
  float y[kMaxPerLane];
  load_row(y, p, hs);
  float s = 0.0f;
#pragma unroll
  for (int k = 0; k < kMaxPerLane; ++k) s += x[k] * y[k];
  return warp_sum(s);
}

template <typename T>
__global__ void forward_kernel(T* out, float* lse, const T* qkv, HeadView v, float scale) {
  const int i = blockIdx.x * kWarps + threadIdx.x / 32, h = blockIdx.y, b = blockIdx.z;
  if (i >= v.T) return;
  float q[kMaxPerLane], o[kMaxPerLane] = {}, vj[kMaxPerLane];
  load_row(q, qkv + v.qkv(b, i, 0, h), v.hs);
  float m = -INFINITY, l = 0.0f;
  for (int j = 0; j <= i; ++j) {
    const float s = dot(q, qkv + v.qkv(b, j, 1, h), v.hs) * scale;
    const float m_new = fmaxf(m, s), corr = expf(m - m_new), p = expf(s - m_new);
    load_row(vj, qkv + v.qkv(b, j, 2, h), v.hs);
#pragma unroll
    for (int k = 0; k < kMaxPerLane; ++k) o[k] = o[k] * corr + p * vj[k];
    l = l * corr + p;
    m = m_new;
  }
  store_row(out + v.row(b, i, h), o, v.hs, 1.0f / l);
  if (threadIdx.x % 32 == 0) lse[v.stat(b, h, i)] = m + logf(l);
}

template <typename T>
__global__ void rowdot_kernel(float* D, const T* dout, const T* out, HeadView v) {
  const int i = blockIdx.x * kWarps + threadIdx.x / 32, h = blockIdx.y, b = blockIdx.z;
  if (i >= v.T) return;
  float d_o[kMaxPerLane];
  load_row(d_o, dout + v.row(b, i, h), v.hs);
  const float s = dot(d_o, out + v.row(b, i, h), v.hs);
  if (threadIdx.x % 32 == 0) D[v.stat(b, h, i)] = s;
}

template <typename T>
__global__ void dq_kernel(T* dqkv, const T* dout, const T* qkv, const float* lse, const float* D, HeadView v,
                          float scale) {
  const int i = blockIdx.x * kWarps + threadIdx.x / 32, h = blockIdx.y, b = blockIdx.z;
  if (i >= v.T) return;
  float q[kMaxPerLane], d_o[kMaxPerLane], kj[kMaxPerLane], dq[kMaxPerLane] = {};
  load_row(q, qkv + v.qkv(b, i, 0, h), v.hs);
  load_row(d_o, dout + v.row(b, i, h), v.hs);
  const float li = lse[v.stat(b, h, i)], Di = D[v.stat(b, h, i)];
  for (int j = 0; j <= i; ++j) {
    load_row(kj, qkv + v.qkv(b, j, 1, h), v.hs);
    float s = 0.0f;
#pragma unroll
    for (int k = 0; k < kMaxPerLane; ++k) s += q[k] * kj[k];
    const float p = expf(warp_sum(s) * scale - li);
    const float ds = p * (dot(d_o, qkv + v.qkv(b, j, 2, h), v.hs) - Di);
#pragma unroll
    for (int k = 0; k < kMaxPerLane; ++k) dq[k] += ds * kj[k];
  }
  store_row(dqkv + v.qkv(b, i, 0, h), dq, v.hs, scale);
}

template <typename T>
__global__ void dkv_kernel(T* dqkv, const T* dout, const T* qkv, const float* lse, const float* D, HeadView v,
                           float scale) {
  const int j = blockIdx.x * kWarps + threadIdx.x / 32, h = blockIdx.y, b = blockIdx.z;
  if (j >= v.T) return;
  float kj[kMaxPerLane], vj[kMaxPerLane], qi[kMaxPerLane], d_o[kMaxPerLane], dk[kMaxPerLane] = {}, dv[kMaxPerLane] = {};
  load_row(kj, qkv + v.qkv(b, j, 1, h), v.hs);
  load_row(vj, qkv + v.qkv(b, j, 2, h), v.hs);
  for (int i = j; i < v.T; ++i) {
    load_row(qi, qkv + v.qkv(b, i, 0, h), v.hs);
    load_row(d_o, dout + v.row(b, i, h), v.hs);
    float s = 0.0f, dp = 0.0f;
#pragma unroll
    for (int k = 0; k < kMaxPerLane; ++k) {
      s += qi[k] * kj[k];
      dp += d_o[k] * vj[k];
    }
    const float p = expf(warp_sum(s) * scale - lse[v.stat(b, h, i)]);
    const float ds = p * (warp_sum(dp) - D[v.stat(b, h, i)]);
#pragma unroll
    for (int k = 0; k < kMaxPerLane; ++k) {
      dv[k] += p * d_o[k];
      dk[k] += ds * qi[k];
    }
  }
  store_row(dqkv + v.qkv(b, j, 1, h), dk, v.hs, scale);
  store_row(dqkv + v.qkv(b, j, 2, h), dv, v.hs, 1.0f);
}

dim3 grid_of(int B, int T, int NH) {
  return dim3(static_cast<unsigned>(ceil_div(T, kWarps)), static_cast<unsigned>(NH), static_cast<unsigned>(B));
}

void check_shape(int B, int T, int C, int NH) {
  GCB_CHECK(B > 0 && T > 0 && NH > 0 && C % NH == 0, "simple attention: C must be a multiple of the head count");
  GCB_CHECK(C / NH <= 32 * kMaxPerLane, "simple attention: head dim above 256");
  GCB_CHECK(NH <= 65535 && B <= 65535, "simple attention: heads and batch must fit the grid (65535)");
}

}  // namespace

void simple_attention_forward(DType t, void* out, float* lse, const void* qkv, int B, int T, int C, int NH,
                              gpu::Stream stream) {
  const NvtxRange range("simple_attention_forward");
  check_shape(B, T, C, NH);
  const HeadView v{T, C, NH, C / NH};
  const float scale = 1.0f / std::sqrt(static_cast<float>(v.hs));
  dispatch(t, "simple_attention_forward", [&](auto tag) {
    using E = decltype(tag);
    forward_kernel<E><<<grid_of(B, T, NH), 32 * kWarps, 0, st(stream)>>>(static_cast<E*>(out), lse,
                                                                         static_cast<const E*>(qkv), v, scale);
  });
  check_launch();
}

void simple_attention_backward(DType t, void* dqkv, const void* dout, const void* qkv, const void* out,
                               const float* lse, int B, int T, int C, int NH, float* workspace, gpu::Stream stream) {
  const NvtxRange range("simple_attention_backward");
  check_shape(B, T, C, NH);
  const HeadView v{T, C, NH, C / NH};
  const float scale = 1.0f / std::sqrt(static_cast<float>(v.hs));
  const cudaStream_t s = st(stream);
  dispatch(t, "simple_attention_backward", [&](auto tag) {
    using E = decltype(tag);
    const auto* dO = static_cast<const E*>(dout);
    const auto* x = static_cast<const E*>(qkv);
    rowdot_kernel<E><<<grid_of(B, T, NH), 32 * kWarps, 0, s>>>(workspace, dO, static_cast<const E*>(out), v);
    check_launch();
    dq_kernel<E><<<grid_of(B, T, NH), 32 * kWarps, 0, s>>>(static_cast<E*>(dqkv), dO, x, lse, workspace, v, scale);
    check_launch();
    dkv_kernel<E><<<grid_of(B, T, NH), 32 * kWarps, 0, s>>>(static_cast<E*>(dqkv), dO, x, lse, workspace, v, scale);
  });
  check_launch();
}

}  // namespace gcb::kernels::train
