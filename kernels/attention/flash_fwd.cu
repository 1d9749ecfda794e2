// FlashAttention-2-style forward (Dao 2023; reference/kernels.md §1.4): one CTA per 64-row query
// block of one (batch, head), 4 warps × 16 query rows (split-Q: no cross-warp reduction), K/V
// tiles of 64 keys double-buffered in shared memory with cp.async, S = QKᵀ and O += PV on tensor
// cores (mma.sync m16n8k16, FP32 accumulators), online softmax in the log2 domain, P reused from
// registers as the A operand, LSE saved for the backward pass. CPU twin: tiled_forward().
#include <cuda_runtime.h>

#include <cmath>

#include "core/error.hpp"
#include "core/nvtx.hpp"
#include "kernels/attention/flash_attn.hpp"
#include "kernels/attention/flash_common.cuh"

namespace gcb::kernels::attn {

namespace {

using namespace dev;

constexpr int kBr = kForwardTiles.rows, kBc = kForwardTiles.cols, kWarps = 4, kThreads = 32 * kWarps;
static_assert(kBr == 16 * kWarps, "each warp owns 16 query rows");

template <typename T, int D>
constexpr int fwd_smem_bytes() {
  return (kBr + 4 * kBc) * TileLayout<D>::kLd * static_cast<int>(sizeof(T));  // Q + 2×K + 2×V
}

template <typename T, int D>
__global__ void __launch_bounds__(kThreads) flash_fwd_kernel(const T* __restrict__ q, const T* __restrict__ k,
                                                             const T* __restrict__ v, T* __restrict__ o,
                                                             float* __restrict__ lse, int seq, float scale_log2,
                                                             bool causal) {
  constexpr int kLd = TileLayout<D>::kLd;
  extern __shared__ __align__(16) unsigned char smem_raw[];
  T* q_tile = reinterpret_cast<T*>(smem_raw);
  T* k_tiles = q_tile + kBr * kLd;  // two stages
  T* v_tiles = k_tiles + 2 * kBc * kLd;

  const size_t head_offset = static_cast<size_t>(blockIdx.y) * static_cast<size_t>(seq) * D;
  q += head_offset;
  k += head_offset;
  v += head_offset;
  o += head_offset;
  lse += static_cast<size_t>(blockIdx.y) * static_cast<size_t>(seq);
  const int tid = static_cast<int>(threadIdx.x), warp = tid / 32, lane = tid % 32, g = lane >> 2, t = lane & 3;
  const int row0 = static_cast<int>(blockIdx.x) * kBr;
  const int warp_row = warp * 16;
  const int row_of[2] = {row0 + warp_row + g, row0 + warp_row + g + 8};
  // Causal: key blocks past the last query row of this block are fully masked and skipped.
  const int n_blocks = ceil_div(causal ? min(seq, row0 + kBr) : seq, kBc);

  // Step 1: Q and the first K/V stage in flight.
  load_tile<T, D>(q_tile, q, row0, kBr, seq, tid, kThreads);
  load_tile<T, D>(k_tiles, k, 0, kBc, seq, tid, kThreads);
  load_tile<T, D>(v_tiles, v, 0, kBc, seq, tid, kThreads);
  cp_async_commit();

  float acc[D / 8][4] = {};
  float m[2] = {-INFINITY, -INFINITY}, l[2] = {0.0f, 0.0f};
  uint32_t q_frag[D / 16][4];

  for (int j = 0; j < n_blocks; ++j) {
    cp_async_wait<0>();
    __syncthreads();  // stage j visible to all; every warp is done with stage j-1
    if (j == 0)
#pragma unroll
      for (int kk = 0; kk < D / 16; ++kk)
        ldmatrix_x4(q_frag[kk], q_tile + (warp_row + (lane & 7) + ((lane >> 3) & 1) * 8) * kLd + kk * 16 + (lane >> 4) * 8);
    // Step 2: prefetch stage j+1 into the buffer stage j-1 used, overlapping this block's math.
    if (j + 1 < n_blocks) {
      load_tile<T, D>(k_tiles + ((j + 1) & 1) * kBc * kLd, k, (j + 1) * kBc, kBc, seq, tid, kThreads);
      load_tile<T, D>(v_tiles + ((j + 1) & 1) * kBc * kLd, v, (j + 1) * kBc, kBc, seq, tid, kThreads);
      cp_async_commit();
    }
    const T* k_tile = k_tiles + (j & 1) * kBc * kLd;
    const T* v_tile = v_tiles + (j & 1) * kBc * kLd;

    // Step 3: S = Q Kᵀ for the warp's 16 rows × 64 keys.
    float s[kBc / 8][4] = {};
#pragma unroll
    for (int kk = 0; kk < D / 16; ++kk)
#pragma unroll
      for (int nn = 0; nn < kBc / 16; ++nn) {
        uint32_t b[4];
        ldmatrix_x4(b, k_tile + (nn * 16 + (lane & 7) + (lane >> 4) * 8) * kLd + kk * 16 + ((lane >> 3) & 1) * 8);
        mma_16816<T>(s[2 * nn], q_frag[kk], b[0], b[1]);
        mma_16816<T>(s[2 * nn + 1], q_frag[kk], b[2], b[3]);
      }

    // Step 4: scale into the log2 domain, mask, new running max per row.
    float m_new[2] = {m[0], m[1]};
#pragma unroll
    for (int nt = 0; nt < kBc / 8; ++nt)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int col = j * kBc + nt * 8 + 2 * t + (e & 1), r = e >> 1;
        float x = s[nt][e] * scale_log2;
        if (col >= seq || (causal && col > row_of[r])) x = -INFINITY;
        s[nt][e] = x;
        m_new[r] = fmaxf(m_new[r], x);
      }
    // Step 5: P = exp2(S − m), rescale the earlier O and l by exp2(m_old − m_new).
    float m_safe[2], alpha[2], row_sum[2] = {0.0f, 0.0f};
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      m_new[r] = quad_max(m_new[r]);
      m_safe[r] = m_new[r] == -INFINITY ? 0.0f : m_new[r];  // a row with nothing visible yet
      alpha[r] = exp2f(m[r] - m_safe[r]);
      m[r] = m_new[r];
    }
#pragma unroll
    for (int nt = 0; nt < kBc / 8; ++nt)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        s[nt][e] = exp2f(s[nt][e] - m_safe[e >> 1]);
        row_sum[e >> 1] += s[nt][e];
      }
#pragma unroll
    for (int r = 0; r < 2; ++r) l[r] = l[r] * alpha[r] + row_sum[r];  // lane-partial; reduced at the end
#pragma unroll
    for (int dt = 0; dt < D / 8; ++dt) {
      acc[dt][0] *= alpha[0];
      acc[dt][1] *= alpha[0];
      acc[dt][2] *= alpha[1];
      acc[dt][3] *= alpha[1];
    }

    // Step 6: O += P V, P converted to 16 bits in registers (C fragment = A fragment layout).
#pragma unroll
    for (int kk = 0; kk < kBc / 16; ++kk) {
      const uint32_t a[4] = {Half2<T>::pack(s[2 * kk][0], s[2 * kk][1]), Half2<T>::pack(s[2 * kk][2], s[2 * kk][3]),
                             Half2<T>::pack(s[2 * kk + 1][0], s[2 * kk + 1][1]),
                             Half2<T>::pack(s[2 * kk + 1][2], s[2 * kk + 1][3])};
#pragma unroll
      for (int dn = 0; dn < D / 16; ++dn) {
        uint32_t b[4];
        ldmatrix_x4_trans(b, v_tile + (kk * 16 + (lane & 7) + ((lane >> 3) & 1) * 8) * kLd + dn * 16 + (lane >> 4) * 8);
        mma_16816<T>(acc[2 * dn], a, b[0], b[1]);
        mma_16816<T>(acc[2 * dn + 1], a, b[2], b[3]);
      }
    }
  }

  // Step 7: normalise once, store O (16-bit) and LSE = (m + log2 l)·ln 2.
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    const float l_row = quad_sum(l[r]);
    const float inv = l_row > 0.0f ? 1.0f / l_row : 0.0f;
    if (row_of[r] >= seq) continue;
    T* out = o + static_cast<size_t>(row_of[r]) * D;
#pragma unroll
    for (int dt = 0; dt < D / 8; ++dt)
      *reinterpret_cast<uint32_t*>(out + dt * 8 + 2 * t) = Half2<T>::pack(acc[dt][2 * r] * inv, acc[dt][2 * r + 1] * inv);
    if (t == 0) lse[row_of[r]] = (m[r] + log2f(l_row)) * kLn2;
  }
}

template <typename T, int D>
void launch_forward(const AttnShape& a, const void* q, const void* k, const void* v, void* o, float* lse,
                    cudaStream_t stream) {
  constexpr int smem = fwd_smem_bytes<T, D>();
  const auto kernel = flash_fwd_kernel<T, D>;
  CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  const dim3 grid(static_cast<unsigned>(ceil_div(a.seq, kBr)), static_cast<unsigned>(a.batch * a.heads));
  kernel<<<grid, kThreads, smem, stream>>>(static_cast<const T*>(q), static_cast<const T*>(k), static_cast<const T*>(v),
                                           static_cast<T*>(o), lse, a.seq,
                                           static_cast<float>(a.scale()) * kLog2e, a.causal);
  CUDA_CHECK(cudaGetLastError());
}

}  // namespace

const char* flash_unsupported(DType t, const AttnShape& a) {
  if (t != DType::f16 && t != DType::bf16) return "our flash kernels support fp16 and bf16 only";
  if (a.head_dim != 64 && a.head_dim != 128) return "our flash kernels support head_dim 64 and 128 only";
  if (a.batch <= 0 || a.heads <= 0 || a.seq <= 0) return "empty shape";
  if (static_cast<long long>(a.batch) * a.heads > 65535) return "batch × heads exceeds the grid's y limit (65535)";
  return "";
}

void flash_forward(DType t, const AttnShape& a, const void* q, const void* k, const void* v, void* o, float* lse,
                   void* stream) {
  NvtxRange range("flash_forward");
  GCB_CHECK(*flash_unsupported(t, a) == '\0', flash_unsupported(t, a));
  // 16-byte rows and bases: cp.async copies 16 bytes at a time.
  for (const void* p : {q, k, v, static_cast<const void*>(o)})
    GCB_CHECK(reinterpret_cast<uintptr_t>(p) % 16 == 0, "Q, K, V, O must be 16-byte aligned");
  const auto s = static_cast<cudaStream_t>(stream);
  if (t == DType::f16)
    a.head_dim == 64 ? launch_forward<__half, 64>(a, q, k, v, o, lse, s) : launch_forward<__half, 128>(a, q, k, v, o, lse, s);
  else
    a.head_dim == 64 ? launch_forward<__nv_bfloat16, 64>(a, q, k, v, o, lse, s)
                     : launch_forward<__nv_bfloat16, 128>(a, q, k, v, o, lse, s);
}

}  // namespace gcb::kernels::attn
