// Device mechanics shared by the attention kernels: 16-bit types, cp.async,
// ldmatrix, mma.sync m16n8k16 with FP32 accumulation, quad reductions, shared-memory tiles.
// Fragment layouts are those of the PTX ISA, "Matrix Fragments for mma.m16n8k16" (sm_80+):
// lane = 4·g + t; A holds rows g, g+8 × cols 2t..2t+1, 2t+8..2t+9; B holds k 2t..2t+1, 2t+8..2t+9
// × col g; C holds rows g, g+8 × cols 2t, 2t+1.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "core/ceil_div.hpp"
#include "kernels/attention/flash_tiling.hpp"

namespace gcb::kernels::attn::dev {

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

// Loads rows [row0, row0+rows) of a [seq, D] matrix into a shared-memory tile with rows of
// padded_row(D) elements, with cp.async by all `threads` threads; rows past `seq` are zero-filled
// (so masked scores multiply zeros, not garbage). The caller commits and waits.
template <typename T, int D>
__device__ inline void load_tile(T* tile, const T* src, int row0, int rows, int seq, int tid, int threads) {
  constexpr int kChunks = D / 8, kLd = padded_row(D);  // 16-byte chunks per row
  for (int c = tid; c < rows * kChunks; c += threads) {
    const int r = c / kChunks, col = (c % kChunks) * 8;
    T* dst = tile + r * kLd + col;
    if (row0 + r < seq)
      cp_async_16(dst, src + static_cast<size_t>(row0 + r) * D + col);
    else
      *reinterpret_cast<uint4*>(dst) = make_uint4(0, 0, 0, 0);
  }
}

// The reverse: rows [0, rows) of a padded tile to rows [row0, row0+rows) of a [seq, D] matrix
// with 16-byte stores, consecutive threads on consecutive chunks of a row (coalesced); rows past
// `seq` are dropped. The caller has synchronised the writers of the tile with the `threads`.
template <typename T, int D>
__device__ inline void store_tile(T* dst, const T* tile, int row0, int rows, int seq, int tid, int threads) {
  constexpr int kChunks = D / 8, kLd = padded_row(D);
  for (int c = tid; c < rows * kChunks; c += threads) {
    const int r = c / kChunks, col = (c % kChunks) * 8;
    if (row0 + r < seq)
      *reinterpret_cast<uint4*>(dst + static_cast<size_t>(row0 + r) * D + col) =
          *reinterpret_cast<const uint4*>(tile + r * kLd + col);
  }
}

// Offsets of this CTA's (batch, head) = blockIdx.y in [b·h, seq, D] and [b·h, seq] arrays. The
// kernels add them where a pointer is used instead of advancing their parameters once: pointers
// left untouched stay in the constant bank rather than in registers for the whole kernel.
template <int D>
__device__ inline size_t head_matrix(int seq) {
  return static_cast<size_t>(blockIdx.y) * static_cast<size_t>(seq) * D;
}
__device__ inline size_t head_rows(int seq) { return static_cast<size_t>(blockIdx.y) * static_cast<size_t>(seq); }

// Operand fragments from shared memory, one ldmatrix.x4 each (lane l addresses row l%8 of
// matrix l/8; the four 8×8 matrices are the fragment's registers in order). `ld` is the row
// length of the stored tile in elements.
// A (16×16 at m0, k0) stored by rows of m: [m][k].
template <typename T>
__device__ inline void ldmatrix_a(uint32_t (&a)[4], const T* tile, int ld, int m0, int k0, int lane) {
  ldmatrix_x4(a, tile + (m0 + (lane & 7) + ((lane >> 3) & 1) * 8) * ld + k0 + (lane >> 4) * 8);
}
// A stored transposed, [k][m] (Pᵀ and dSᵀ read from P and dS tiles).
template <typename T>
__device__ inline void ldmatrix_a_trans(uint32_t (&a)[4], const T* tile, int ld, int m0, int k0, int lane) {
  ldmatrix_x4_trans(a, tile + (k0 + (lane & 7) + (lane >> 4) * 8) * ld + m0 + ((lane >> 3) & 1) * 8);
}
// B for two adjacent n8 tiles (n0..n0+15, k0..k0+15) stored [n][k] (Kᵀ read from K):
// b[0..1] feed tile n0, b[2..3] tile n0+8.
template <typename T>
__device__ inline void ldmatrix_b(uint32_t (&b)[4], const T* tile, int ld, int k0, int n0, int lane) {
  ldmatrix_x4(b, tile + (n0 + (lane & 7) + (lane >> 4) * 8) * ld + k0 + ((lane >> 3) & 1) * 8);
}
// B stored [k][n] (V, dO, Q and K as the right-hand operand).
template <typename T>
__device__ inline void ldmatrix_b_trans(uint32_t (&b)[4], const T* tile, int ld, int k0, int n0, int lane) {
  ldmatrix_x4_trans(b, tile + (k0 + (lane & 7) + ((lane >> 3) & 1) * 8) * ld + n0 + (lane >> 4) * 8);
}

// One warp's tile product: acc[mi][ni] += A(rows 16·mi.., k) · B(k, cols 8·ni..) over k in
// [0, 16·kSteps). load_a(a, mi, ks) fills the A fragment of m-tile mi at k-step ks; load_b(b, np,
// ks) fills the B fragments of n-tiles 2·np and 2·np+1. Each B fragment feeds all kM m-tiles:
// the reuse that makes 32 rows per warp cheaper in shared-memory traffic than 16.
template <typename T, int kM, int kN, int kSteps, typename LoadA, typename LoadB>
__device__ __forceinline__ void warp_gemm(float (&acc)[kM][kN][4], LoadA&& load_a, LoadB&& load_b) {
  static_assert(kN % 2 == 0, "B fragments come in pairs of n8 tiles");
#pragma unroll
  for (int ks = 0; ks < kSteps; ++ks) {
    uint32_t a[kM][4];
#pragma unroll
    for (int mi = 0; mi < kM; ++mi) load_a(a[mi], mi, ks);
#pragma unroll
    for (int np = 0; np < kN / 2; ++np) {
      uint32_t b[4];
      load_b(b, np, ks);
#pragma unroll
      for (int mi = 0; mi < kM; ++mi) {
        mma_16816<T>(acc[mi][2 * np], a[mi], b[0], b[1]);
        mma_16816<T>(acc[mi][2 * np + 1], a[mi], b[2], b[3]);
      }
    }
  }
}

// The A fragment of k-step ks built from FP32 accumulators (C layout of n-tiles 2ks, 2ks+1 equals
// the A layout of one k16 step), rounded to 16 bits: P reused from registers (FA2 §3.1).
template <typename T, int kN>
__device__ inline void a_from_accumulators(uint32_t (&a)[4], const float (&c)[kN][4], int ks) {
  a[0] = Half2<T>::pack(c[2 * ks][0], c[2 * ks][1]);
  a[1] = Half2<T>::pack(c[2 * ks][2], c[2 * ks][3]);
  a[2] = Half2<T>::pack(c[2 * ks + 1][0], c[2 * ks + 1][1]);
  a[3] = Half2<T>::pack(c[2 * ks + 1][2], c[2 * ks + 1][3]);
}

// Row and column inside a warp tile of the accumulator element e of n-tile ni, m-tile mi:
// rows g and g+8, columns 2t and 2t+1 (the C layout of mma.m16n8k16).
__device__ inline int acc_row(int mi, int e, int lane) { return mi * 16 + (lane >> 2) + 8 * (e >> 1); }
__device__ inline int acc_col(int ni, int e, int lane) { return ni * 8 + 2 * (lane & 3) + (e & 1); }

// Two adjacent FP32 values added to global memory, one vector atomic on sm_90 (CUDA C++
// Programming Guide, atomicAdd: float2 on compute capability 9.x), two scalar ones before.
__device__ inline void atomic_add_pair(float* p, float a, float b) {
#if __CUDA_ARCH__ >= 900
  atomicAdd(reinterpret_cast<float2*>(p), make_float2(a, b));
#else
  atomicAdd(p, a);
  atomicAdd(p + 1, b);
#endif
}

}  // namespace gcb::kernels::attn::dev
