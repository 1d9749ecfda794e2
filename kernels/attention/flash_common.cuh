// Device mechanics shared by the attention kernels (STYLE.md §5): 16-bit types, cp.async,
// ldmatrix, mma.sync m16n8k16 with FP32 accumulation, quad reductions, shared-memory tiles.
// Fragment layouts are those of the PTX ISA, "Matrix Fragments for mma.m16n8k16" (sm_80+):
// lane = 4·g + t; A holds rows g, g+8 × cols 2t..2t+1, 2t+8..2t+9; B holds k 2t..2t+1, 2t+8..2t+9
// × col g; C holds rows g, g+8 × cols 2t, 2t+1.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>

namespace gcb::kernels::attn::dev {

template <typename I>
__host__ __device__ constexpr I ceil_div(I a, I b) {
  return (a + b - 1) / b;
}

constexpr float kLog2e = 1.4426950408889634f;
constexpr float kLn2 = 0.6931471805599453f;

// 16-bit element type traits: conversion of two floats into one packed register.
template <typename T>
struct Half2;
template <>
struct Half2<__half> {
  __device__ static uint32_t pack(float a, float b) {
    const __half2 h = __floats2half2_rn(a, b);
    return *reinterpret_cast<const uint32_t*>(&h);
  }
  __device__ static float to_float(__half x) { return __half2float(x); }
  __device__ static __half from_float(float x) { return __float2half_rn(x); }
};
template <>
struct Half2<__nv_bfloat16> {
  __device__ static uint32_t pack(float a, float b) {
    const __nv_bfloat162 h = __floats2bfloat162_rn(a, b);
    return *reinterpret_cast<const uint32_t*>(&h);
  }
  __device__ static float to_float(__nv_bfloat16 x) { return __bfloat162float(x); }
  __device__ static __nv_bfloat16 from_float(float x) { return __float2bfloat16_rn(x); }
};

// D = A·B + D, m16n8k16, FP32 accumulators.
template <typename T>
__device__ inline void mma_16816(float (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1);
template <>
__device__ inline void mma_16816<__half>(float (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%0,%1,%2,%3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}
template <>
__device__ inline void mma_16816<__nv_bfloat16>(float (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%0,%1,%2,%3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

__device__ inline uint32_t smem_addr(const void* p) { return static_cast<uint32_t>(__cvta_generic_to_shared(p)); }

// Four 8×8 16-bit matrices; lane l supplies the address of one row (matrix l/8, row l%8).
__device__ inline void ldmatrix_x4(uint32_t (&r)[4], const void* row) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem_addr(row)));
}
__device__ inline void ldmatrix_x4_trans(uint32_t (&r)[4], const void* row) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem_addr(row)));
}

// 16-byte global→shared copy that bypasses registers (sm_80 cp.async).
__device__ inline void cp_async_16(void* smem, const void* gmem) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(smem_addr(smem)), "l"(gmem));
}
__device__ inline void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N>
__device__ inline void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}

// Max and sum over the 4 lanes of a quad (the threads that share rows g and g+8).
__device__ inline float quad_max(float x) {
  x = fmaxf(x, __shfl_xor_sync(0xffffffffu, x, 1));
  return fmaxf(x, __shfl_xor_sync(0xffffffffu, x, 2));
}
__device__ inline float quad_sum(float x) {
  x += __shfl_xor_sync(0xffffffffu, x, 1);
  return x + __shfl_xor_sync(0xffffffffu, x, 2);
}

// A rows×D tile of a [seq, D] matrix in shared memory, each row padded by 8 elements (16 bytes)
// so the 8 row addresses of one ldmatrix land in different banks.
template <int D>
struct TileLayout {
  static constexpr int kLd = D + 8;
  static_assert((kLd * 2) % 16 == 0, "rows must stay 16-byte aligned for cp.async and ldmatrix");
};

// Loads rows [row0, row0+rows) of a [seq, D] matrix into a padded tile with cp.async by all
// `threads` threads; rows past `seq` are zero-filled (so masked scores multiply zeros, not
// garbage). Caller commits and waits.
template <typename T, int D>
__device__ inline void load_tile(T* tile, const T* src, int row0, int rows, int seq, int tid, int threads) {
  constexpr int kChunks = D / 8;  // 16-byte chunks per row
  for (int c = tid; c < rows * kChunks; c += threads) {
    const int r = c / kChunks, col = (c % kChunks) * 8;
    T* dst = tile + r * TileLayout<D>::kLd + col;
    if (row0 + r < seq)
      cp_async_16(dst, src + static_cast<size_t>(row0 + r) * D + col);
    else
      *reinterpret_cast<uint4*>(dst) = make_uint4(0, 0, 0, 0);
  }
}

}  // namespace gcb::kernels::attn::dev
