// FlashAttention-2-style backward (Dao 2023, Alg. 2; reference/kernels.md §1.4): a preprocess
// kernel computes D = rowsum(dO∘O) and clears the FP32 dQ accumulator; the main kernel runs one
// CTA per 64-key block of one (batch, head), 4 warps × 16 keys keeping dK and dV in registers,
// loops over 64-row query blocks (Q, dO double-buffered with cp.async), recomputes Pᵀ from LSE,
// and adds dQ with atomics; a last kernel converts dQ to 16 bits. CPU twin: tiled_backward().
#include <cuda_runtime.h>

#include <cmath>

#include "core/error.hpp"
#include "core/nvtx.hpp"
#include "kernels/attention/flash_attn.hpp"
#include "kernels/attention/flash_common.cuh"

namespace gcb::kernels::attn {

namespace {

using namespace dev;

constexpr int kBr = kBackwardTiles.rows, kBc = kBackwardTiles.cols, kWarps = 4, kThreads = 32 * kWarps;
constexpr int kLdS = kBc + 8;  // padded row of the dS tile in shared memory
static_assert(kBc == 16 * kWarps && kBr % 16 == 0, "each warp owns 16 keys");

template <typename T, int D>
constexpr int bwd_smem_bytes() {
  // K, V, 2 × Q, 2 × dO tiles; the dS tile; 2 × (LSE, D) rows.
  return (2 * kBc + 4 * kBr) * TileLayout<D>::kLd * static_cast<int>(sizeof(T)) +
         kBr * kLdS * static_cast<int>(sizeof(T)) + 4 * kBr * static_cast<int>(sizeof(float));
}

// D_i = Σ_d dO_id·O_id and dQ_accum_i = 0; one warp per row.
template <typename T, int D>
__global__ void flash_bwd_preprocess(const T* __restrict__ o, const T* __restrict__ d_o, float* __restrict__ delta,
                                     float* __restrict__ dq_accum, size_t rows) {
  const size_t row = static_cast<size_t>(blockIdx.x) * (blockDim.x / 32) + threadIdx.x / 32;
  const int lane = static_cast<int>(threadIdx.x % 32);
  if (row >= rows) return;
  float sum = 0.0f;
#pragma unroll
  for (int x = lane; x < D; x += 32) {
    sum += Half2<T>::to_float(o[row * D + x]) * Half2<T>::to_float(d_o[row * D + x]);
    dq_accum[row * D + x] = 0.0f;
  }
#pragma unroll
  for (int off = 16; off > 0; off >>= 1) sum += __shfl_xor_sync(0xffffffffu, sum, off);
  if (lane == 0) delta[row] = sum;
}

template <typename T>
__global__ void convert_dq(const float* __restrict__ dq_accum, T* __restrict__ dq, size_t n) {
  const size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) dq[i] = Half2<T>::from_float(dq_accum[i]);
}

template <typename T, int D>
__global__ void __launch_bounds__(kThreads)
    flash_bwd_kernel(const T* __restrict__ q, const T* __restrict__ k, const T* __restrict__ v,
                     const T* __restrict__ d_o, const float* __restrict__ lse, const float* __restrict__ delta,
                     float* __restrict__ dq_accum, T* __restrict__ dk, T* __restrict__ dv, int seq, float scale,
                     bool causal) {
  constexpr int kLd = TileLayout<D>::kLd;
  extern __shared__ __align__(16) unsigned char smem_raw[];
  T* k_tile = reinterpret_cast<T*>(smem_raw);
  T* v_tile = k_tile + kBc * kLd;
  T* q_tiles = v_tile + kBc * kLd;     // two stages
  T* do_tiles = q_tiles + 2 * kBr * kLd;  // two stages
  T* ds_tile = do_tiles + 2 * kBr * kLd;  // [query][key]
  float* lse_rows = reinterpret_cast<float*>(ds_tile + kBr * kLdS);  // two stages, log2 units
  float* delta_rows = lse_rows + 2 * kBr;

  const size_t head = blockIdx.y, head_offset = head * static_cast<size_t>(seq) * D;
  q += head_offset;
  k += head_offset;
  v += head_offset;
  d_o += head_offset;
  dq_accum += head_offset;
  dk += head_offset;
  dv += head_offset;
  lse += head * static_cast<size_t>(seq);
  delta += head * static_cast<size_t>(seq);
  const int tid = static_cast<int>(threadIdx.x), warp = tid / 32, lane = tid % 32, g = lane >> 2, t = lane & 3;
  const int col0 = static_cast<int>(blockIdx.x) * kBc, warp_key = warp * 16;
  const int key_of[2] = {col0 + warp_key + g, col0 + warp_key + g + 8};
  const float scale_log2 = scale * kLog2e;
  // Causal: query blocks that end before this block's first key see none of it.
  const int first_block = causal ? col0 / kBr : 0, n_blocks = ceil_div(seq, kBr);

  const auto load_rows = [&](int block, int stage) {
    const int r0 = block * kBr;
    load_tile<T, D>(q_tiles + stage * kBr * kLd, q, r0, kBr, seq, tid, kThreads);
    load_tile<T, D>(do_tiles + stage * kBr * kLd, d_o, r0, kBr, seq, tid, kThreads);
    for (int r = tid; r < kBr; r += kThreads) {
      const bool valid = r0 + r < seq;  // rows past seq: P = exp2(x − ∞) = 0
      lse_rows[stage * kBr + r] = valid ? lse[r0 + r] * kLog2e : INFINITY;
      delta_rows[stage * kBr + r] = valid ? delta[r0 + r] : 0.0f;
    }
  };

  // Step 1: this CTA's K and V, and the first query block.
  load_tile<T, D>(k_tile, k, col0, kBc, seq, tid, kThreads);
  load_tile<T, D>(v_tile, v, col0, kBc, seq, tid, kThreads);
  load_rows(first_block, 0);
  cp_async_commit();

  float dk_acc[D / 8][4] = {}, dv_acc[D / 8][4] = {};
  const T* k_rows = k_tile + (warp_key + (lane & 7) + ((lane >> 3) & 1) * 8) * kLd + (lane >> 4) * 8;  // A layout
  const T* v_rows = v_tile + (warp_key + (lane & 7) + ((lane >> 3) & 1) * 8) * kLd + (lane >> 4) * 8;

  for (int i = first_block, it = 0; i < n_blocks; ++i, ++it) {
    const int stage = it & 1, r0 = i * kBr;
    cp_async_wait<0>();
    __syncthreads();  // stage visible; every warp is done with the previous stage and dS tile
    if (i + 1 < n_blocks) {
      load_rows(i + 1, stage ^ 1);
      cp_async_commit();
    }
    const T* q_tile = q_tiles + stage * kBr * kLd;
    const T* do_tile = do_tiles + stage * kBr * kLd;
    const float* lse_s = lse_rows + stage * kBr;
    const float* delta_s = delta_rows + stage * kBr;

    // Step 2: Sᵀ = K Qᵀ and dPᵀ = V dOᵀ for the warp's 16 keys × 64 queries.
    float st[kBr / 8][4] = {}, dpt[kBr / 8][4] = {};
#pragma unroll
    for (int kk = 0; kk < D / 16; ++kk) {
      uint32_t ka[4], va[4];
      ldmatrix_x4(ka, k_rows + kk * 16);
      ldmatrix_x4(va, v_rows + kk * 16);
#pragma unroll
      for (int nn = 0; nn < kBr / 16; ++nn) {
        const int off = (nn * 16 + (lane & 7) + (lane >> 4) * 8) * kLd + kk * 16 + ((lane >> 3) & 1) * 8;
        uint32_t b[4];
        ldmatrix_x4(b, q_tile + off);
        mma_16816<T>(st[2 * nn], ka, b[0], b[1]);
        mma_16816<T>(st[2 * nn + 1], ka, b[2], b[3]);
        ldmatrix_x4(b, do_tile + off);
        mma_16816<T>(dpt[2 * nn], va, b[0], b[1]);
        mma_16816<T>(dpt[2 * nn + 1], va, b[2], b[3]);
      }
    }
    // Step 3: Pᵀ = exp2(Sᵀ·scale·log2e − LSE·log2e), masked; dSᵀ = Pᵀ∘(dPᵀ − D).
#pragma unroll
    for (int nt = 0; nt < kBr / 8; ++nt)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int qc = nt * 8 + 2 * t + (e & 1), key = key_of[e >> 1];
        const bool masked = key >= seq || (causal && key > r0 + qc);
        const float p = masked ? 0.0f : exp2f(st[nt][e] * scale_log2 - lse_s[qc]);
        st[nt][e] = p;
        dpt[nt][e] = p * (dpt[nt][e] - delta_s[qc]);
        ds_tile[qc * kLdS + warp_key + g + 8 * (e >> 1)] = Half2<T>::from_float(dpt[nt][e]);
      }
    // Step 4: dV += Pᵀ dO and dK += dSᵀ Q (scale applied at the end), A operands from registers.
#pragma unroll
    for (int kk = 0; kk < kBr / 16; ++kk) {
      const uint32_t pa[4] = {Half2<T>::pack(st[2 * kk][0], st[2 * kk][1]), Half2<T>::pack(st[2 * kk][2], st[2 * kk][3]),
                              Half2<T>::pack(st[2 * kk + 1][0], st[2 * kk + 1][1]),
                              Half2<T>::pack(st[2 * kk + 1][2], st[2 * kk + 1][3])};
      const uint32_t dsa[4] = {Half2<T>::pack(dpt[2 * kk][0], dpt[2 * kk][1]),
                               Half2<T>::pack(dpt[2 * kk][2], dpt[2 * kk][3]),
                               Half2<T>::pack(dpt[2 * kk + 1][0], dpt[2 * kk + 1][1]),
                               Half2<T>::pack(dpt[2 * kk + 1][2], dpt[2 * kk + 1][3])};
#pragma unroll
      for (int dn = 0; dn < D / 16; ++dn) {
        const int off = (kk * 16 + (lane & 7) + ((lane >> 3) & 1) * 8) * kLd + dn * 16 + (lane >> 4) * 8;
        uint32_t b[4];
        ldmatrix_x4_trans(b, do_tile + off);
        mma_16816<T>(dv_acc[2 * dn], pa, b[0], b[1]);
        mma_16816<T>(dv_acc[2 * dn + 1], pa, b[2], b[3]);
        ldmatrix_x4_trans(b, q_tile + off);
        mma_16816<T>(dk_acc[2 * dn], dsa, b[0], b[1]);
        mma_16816<T>(dk_acc[2 * dn + 1], dsa, b[2], b[3]);
      }
    }
    __syncthreads();  // the whole dS tile (all warps' keys) is in shared memory

    // Step 5: dQ += scale · dS K for the warp's 16 queries, 32 columns of d at a time, by atomics.
    const T* ds_rows = ds_tile + (warp * 16 + (lane & 7) + ((lane >> 3) & 1) * 8) * kLdS + (lane >> 4) * 8;
#pragma unroll
    for (int dc = 0; dc < D / 32; ++dc) {
      float dq[4][4] = {};
#pragma unroll
      for (int kk = 0; kk < kBc / 16; ++kk) {
        uint32_t a[4];
        ldmatrix_x4(a, ds_rows + kk * 16);
#pragma unroll
        for (int dn = 0; dn < 2; ++dn) {
          uint32_t b[4];
          ldmatrix_x4_trans(b, k_tile + (kk * 16 + (lane & 7) + ((lane >> 3) & 1) * 8) * kLd + dc * 32 + dn * 16 +
                                   (lane >> 4) * 8);
          mma_16816<T>(dq[2 * dn], a, b[0], b[1]);
          mma_16816<T>(dq[2 * dn + 1], a, b[2], b[3]);
        }
      }
#pragma unroll
      for (int nt = 0; nt < 4; ++nt)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const int row = r0 + warp * 16 + g + 8 * (e >> 1), col = dc * 32 + nt * 8 + 2 * t + (e & 1);
          if (row < seq) atomicAdd(dq_accum + static_cast<size_t>(row) * D + col, scale * dq[nt][e]);
        }
    }
  }

  // Step 6: dK = scale · dSᵀ Q and dV, stored for keys inside the sequence.
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    if (key_of[r] >= seq) continue;
    const size_t base = static_cast<size_t>(key_of[r]) * D;
#pragma unroll
    for (int dt = 0; dt < D / 8; ++dt) {
      const int col = dt * 8 + 2 * t;
      *reinterpret_cast<uint32_t*>(dk + base + col) = Half2<T>::pack(scale * dk_acc[dt][2 * r], scale * dk_acc[dt][2 * r + 1]);
      *reinterpret_cast<uint32_t*>(dv + base + col) = Half2<T>::pack(dv_acc[dt][2 * r], dv_acc[dt][2 * r + 1]);
    }
  }
}

template <typename T, int D>
void launch_backward(const AttnShape& a, const void* q, const void* k, const void* v, const void* o, const void* d_o,
                     const float* lse, void* dq, void* dk, void* dv, void* workspace, cudaStream_t stream) {
  auto* dq_accum = static_cast<float*>(workspace);
  float* delta = dq_accum + a.elements();
  constexpr int kRowsPerBlock = 4;  // one warp per row
  flash_bwd_preprocess<T, D><<<static_cast<unsigned>(ceil_div(a.rows(), size_t{kRowsPerBlock})), 32 * kRowsPerBlock, 0,
                               stream>>>(static_cast<const T*>(o), static_cast<const T*>(d_o), delta, dq_accum, a.rows());
  CUDA_CHECK(cudaGetLastError());

  constexpr int smem = bwd_smem_bytes<T, D>();
  const auto kernel = flash_bwd_kernel<T, D>;
  CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  const dim3 grid(static_cast<unsigned>(ceil_div(a.seq, kBc)), static_cast<unsigned>(a.batch * a.heads));
  kernel<<<grid, kThreads, smem, stream>>>(static_cast<const T*>(q), static_cast<const T*>(k), static_cast<const T*>(v),
                                           static_cast<const T*>(d_o), lse, delta, dq_accum, static_cast<T*>(dk),
                                           static_cast<T*>(dv), a.seq, static_cast<float>(a.scale()), a.causal);
  CUDA_CHECK(cudaGetLastError());

  constexpr unsigned kConvertThreads = 256;
  convert_dq<T><<<static_cast<unsigned>(ceil_div(a.elements(), size_t{kConvertThreads})), kConvertThreads, 0, stream>>>(
      dq_accum, static_cast<T*>(dq), a.elements());
  CUDA_CHECK(cudaGetLastError());
}

}  // namespace

size_t flash_backward_workspace_bytes(const AttnShape& a) { return (a.elements() + a.rows()) * sizeof(float); }

void flash_backward(DType t, const AttnShape& a, const void* q, const void* k, const void* v, const void* o,
                    const void* d_o, const float* lse, void* dq, void* dk, void* dv, void* workspace, void* stream) {
  NvtxRange range("flash_backward");
  GCB_CHECK(*flash_unsupported(t, a) == '\0', flash_unsupported(t, a));
  for (const void* p : {q, k, v, d_o, static_cast<const void*>(workspace)})
    GCB_CHECK(reinterpret_cast<uintptr_t>(p) % 16 == 0, "Q, K, V, dO and the workspace must be 16-byte aligned");
  const auto s = static_cast<cudaStream_t>(stream);
  if (t == DType::f16)
    a.head_dim == 64 ? launch_backward<__half, 64>(a, q, k, v, o, d_o, lse, dq, dk, dv, workspace, s)
                     : launch_backward<__half, 128>(a, q, k, v, o, d_o, lse, dq, dk, dv, workspace, s);
  else
    a.head_dim == 64 ? launch_backward<__nv_bfloat16, 64>(a, q, k, v, o, d_o, lse, dq, dk, dv, workspace, s)
                     : launch_backward<__nv_bfloat16, 128>(a, q, k, v, o, d_o, lse, dq, dk, dv, workspace, s);
}

}  // namespace gcb::kernels::attn
