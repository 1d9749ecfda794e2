// Device mechanics shared by the training kernels: ceil_div, element conversions,
// 16-byte vector loads of chunks of elements, warp and block reductions in a fixed order, and the
// launch check. A kernel file is then the algorithm. Element types: float and __nv_bfloat16
// (what the training backend stores); every kernel computes in fp32 (sums over many terms in
// fp64 where said) and rounds each stored value once, to nearest even.
#pragma once

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "core/dtype.hpp"
#include "core/error.hpp"
#include "core/gpu.hpp"
#include "core/nvtx.hpp"

namespace gcb::kernels::train {

using bf16 = __nv_bfloat16;

// The one place a stream of the kernel interfaces (gpu::Stream, an opaque cudaStream_t) becomes
// the CUDA type, for the <<<>>> launches.
inline cudaStream_t st(gpu::Stream s) { return static_cast<cudaStream_t>(s); }

template <typename I>
__host__ __device__ constexpr I ceil_div(I a, I b) {
  return (a + b - 1) / b;
}

// Calls launch(T{}) with T = float for f32 and bf16 for bf16: the two element types of every
// kernel, so each kernel has two instantiations. Anything else is a gcb::Fault naming the op.
template <typename Launch>
void dispatch(DType t, const char* op, Launch&& launch) {
  if (t == DType::f32) {
    launch(float{});
  } else if (t == DType::bf16) {
    launch(bf16{});
  } else {
    throw Fault(std::string(op) + ": the CUDA training kernels take fp32 or bf16, not " + std::string(dtype_name(t)));
  }
}

// Checks the launch just made (every launcher checks its launch).
inline void check_launch() { CUDA_CHECK(cudaGetLastError()); }
inline bool aligned16(const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; }

__device__ inline float to_float(float x) { return x; }
__device__ inline float to_float(bf16 x) { return __bfloat162float(x); }
template <typename T>
__device__ T from_float(float x);
template <>
__device__ inline float from_float<float>(float x) {
  return x;
}
template <>
__device__ inline bf16 from_float<bf16>(float x) {
  return __float2bfloat16_rn(x);
}

// --- chunks: element-wise kernels give each thread kChunk consecutive elements ----------------
// 8 elements = one 16-byte load of bf16 or two of fp32 (llm.c's Packed128). `vec` says that every
// pointer of the launch is 16-byte aligned (checked on the host, aligned16); the last, partial
// chunk and unaligned launches take the scalar path.
inline constexpr int kChunk = 8;
inline constexpr int kChunkThreads = 256;

__device__ inline size_t chunk_start() { return (static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x) * kChunk; }
inline unsigned chunk_blocks(size_t n) {
  return static_cast<unsigned>(ceil_div<size_t>(ceil_div<size_t>(n, kChunk), kChunkThreads));
}

template <typename T>
__device__ inline void load_chunk(const T* p, size_t i, size_t n, bool vec, float (&x)[kChunk]) {
  if (vec && i + kChunk <= n) {
    constexpr int per_load = 16 / sizeof(T);
#pragma unroll
    for (int v = 0; v < kChunk / per_load; ++v) {
      const int4 raw = *reinterpret_cast<const int4*>(p + i + v * per_load);
      const T* e = reinterpret_cast<const T*>(&raw);
#pragma unroll
      for (int k = 0; k < per_load; ++k) x[v * per_load + k] = to_float(e[k]);
    }
    return;
  }
#pragma unroll
  for (int k = 0; k < kChunk; ++k) x[k] = i + k < n ? to_float(p[i + k]) : 0.0f;
}

template <typename T>
__device__ inline void store_chunk(T* p, size_t i, size_t n, bool vec, const float (&x)[kChunk]) {
  if (vec && i + kChunk <= n) {
    constexpr int per_load = 16 / sizeof(T);
#pragma unroll
    for (int v = 0; v < kChunk / per_load; ++v) {
      int4 raw;
      T* e = reinterpret_cast<T*>(&raw);
#pragma unroll
      for (int k = 0; k < per_load; ++k) e[k] = from_float<T>(x[v * per_load + k]);
      *reinterpret_cast<int4*>(p + i + v * per_load) = raw;
    }
    return;
  }
#pragma unroll
  for (int k = 0; k < kChunk; ++k)
    if (i + k < n) p[i + k] = from_float<T>(x[k]);
}

// --- reductions -------------------------------------------------------------------------------
// Butterfly (xor) shuffles: every lane ends with the same value, combined in a fixed order, so a
// rerun gives the same bits.
template <typename F>
__device__ inline F warp_sum(F v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}
__device__ inline float warp_max(float v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}

// Sum over the block (blockDim.x a multiple of 32, ≤ 1024): warp sums, then warp 0 sums them in
// warp order. Every thread gets the result. `scratch` holds 32 values in shared memory.
template <typename F>
__device__ inline F block_sum(F v, F* scratch) {
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, warps = blockDim.x / 32;
  v = warp_sum(v);
  __syncthreads();  // scratch may still be read by a previous call
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  F total = lane < warps ? scratch[lane] : F(0);
  return warp_sum(total);
}
__device__ inline float block_max(float v, float* scratch) {
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, warps = blockDim.x / 32;
  v = warp_max(v);
  __syncthreads();
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  return warp_max(lane < warps ? scratch[lane] : -INFINITY);
}

// --- column sums (train_kernels.hpp column_sum_splits says the scheme) ------------------------
// A block of 32 × kColRows threads owns 32 columns of one row range [r0, r1): thread (c, g) adds
// rows r0 + g, r0 + g + kColRows, … in order into N sums (term(r, col, acc) adds its row's terms);
// the kColRows sums of each are then added in row-group order. Valid in row group 0.
inline constexpr int kColRows = 16;

template <int N, typename Term>
__device__ inline void column_partials(int r0, int r1, int col, const Term& term, float (&acc)[N],
                                       float (*scratch)[kColRows][33]) {
  for (int k = 0; k < N; ++k) acc[k] = 0.0f;
  for (int r = r0 + static_cast<int>(threadIdx.y); r < r1; r += kColRows) term(r, col, acc);
#pragma unroll
  for (int k = 0; k < N; ++k) scratch[k][threadIdx.y][threadIdx.x] = acc[k];
  __syncthreads();
  if (threadIdx.y == 0) {
#pragma unroll
    for (int k = 0; k < N; ++k) {
      float total = 0.0f;
      for (int g = 0; g < kColRows; ++g) total += scratch[k][g][threadIdx.x];
      acc[k] = total;
    }
  }
}

// The second pass: out[col] += Σ_split partials[split·cols + col], in split order, rounded once.
template <typename T>
__global__ void column_finish_kernel(T* out, const float* partials, int splits, int cols) {
  const int col = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (col >= cols) return;
  float s = 0.0f;
  for (int b = 0; b < splits; ++b) s += partials[static_cast<size_t>(b) * static_cast<size_t>(cols) + col];
  out[col] = from_float<T>(to_float(out[col]) + s);
}

}  // namespace gcb::kernels::train
