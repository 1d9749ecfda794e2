// The softmax step of the unfused attention baseline: one CTA per score row, FP32 math over a
// 16-bit row written in place (P over S), causal entries j > i set to 0. The scale is already
// folded into the QKᵀ GEMM (alpha). CPU twin: the softmax of naive_forward().
#include <cuda_runtime.h>

#include <cmath>

#include "core/error.hpp"
#include "core/nvtx.hpp"
#include "kernels/attention/flash_attn.hpp"
#include "kernels/attention/flash_common.cuh"

namespace gcb::kernels::attn {

namespace {

using namespace dev;

constexpr int kThreads = 256;

// Block-wide reduction through shared memory; every thread gets the result.
template <typename Op>
__device__ float block_reduce(float x, Op op, float* scratch) {
  for (int off = 16; off > 0; off >>= 1) x = op(x, __shfl_xor_sync(0xffffffffu, x, off));
  const int warp = static_cast<int>(threadIdx.x) / 32, lane = static_cast<int>(threadIdx.x) % 32;
  __syncthreads();  // scratch may still be read by the previous reduction
  if (lane == 0) scratch[warp] = x;
  __syncthreads();
  x = scratch[0];
  for (int w = 1; w < kThreads / 32; ++w) x = op(x, scratch[w]);
  return x;
}

template <typename T>
__global__ void __launch_bounds__(kThreads) softmax_rows(T* __restrict__ scores, int seq, bool causal) {
  __shared__ float scratch[kThreads / 32];
  const size_t row = blockIdx.x;
  const int i = static_cast<int>(row % static_cast<size_t>(seq));
  const int visible = causal ? i + 1 : seq;
  T* s = scores + row * static_cast<size_t>(seq);
  float m = -INFINITY;
  for (int j = static_cast<int>(threadIdx.x); j < visible; j += kThreads) m = fmaxf(m, Half2<T>::to_float(s[j]));
  m = block_reduce(
      m, [](float a, float b) { return fmaxf(a, b); }, scratch);
  float l = 0.0f;
  for (int j = static_cast<int>(threadIdx.x); j < visible; j += kThreads) l += __expf(Half2<T>::to_float(s[j]) - m);
  l = block_reduce(
      l, [](float a, float b) { return a + b; }, scratch);
  const float inv = 1.0f / l;
  for (int j = static_cast<int>(threadIdx.x); j < seq; j += kThreads)
    s[j] = Half2<T>::from_float(j < visible ? __expf(Half2<T>::to_float(s[j]) - m) * inv : 0.0f);
}

}  // namespace

void unfused_softmax(DType t, const AttnShape& a, void* scores, void* stream) {
  NvtxRange range("unfused_softmax");
  GCB_CHECK(t == DType::f16 || t == DType::bf16, "unfused softmax supports fp16 and bf16");
  GCB_CHECK(a.rows() <= 0x7fffffffu, "too many score rows for a 1-D grid");
  const auto s = static_cast<cudaStream_t>(stream);
  const auto grid = static_cast<unsigned>(a.rows());
  if (t == DType::f16)
    softmax_rows<__half><<<grid, kThreads, 0, s>>>(static_cast<__half*>(scores), a.seq, a.causal);
  else
    softmax_rows<__nv_bfloat16><<<grid, kThreads, 0, s>>>(static_cast<__nv_bfloat16*>(scores), a.seq, a.causal);
  CUDA_CHECK(cudaGetLastError());
}

}  // namespace gcb::kernels::attn
