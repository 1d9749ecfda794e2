// FlashAttention-2 forward (Dao 2023, Alg. 1 and §3.1–3.3): one CTA per 128-row query block of
// one (batch, head), 4 warps × 32 rows, key blocks walked last to first (the masked ones first),
// S = QKᵀ and O += PV on tensor cores (mma.sync m16n8k16, FP32 accumulators), online softmax in
// the log2 domain, P reused from registers, LSE saved for the backward pass. Shapes and budgets:
// flash_tiling.hpp. CPU twin: tiled_forward() (attention_ref.cpp).
#include <cuda_runtime.h>

#include <cmath>

#include "core/error.hpp"
#include "core/nvtx.hpp"
#include "kernels/attention/flash_attn.hpp"
#include "kernels/attention/flash_common.cuh"
#include "kernels/attention/flash_tiling.hpp"

namespace gcb::kernels::attn {

namespace {

using namespace dev;

template <typename T>
struct ForwardArgs {
  const T* q;
  const T* k;
  const T* v;
  T* o;
  float* lse;
  int seq;
  float scale_log2;  // softmax scale · log2 e: exp(x·scale) = exp2(x·scale_log2)
  bool causal;
};

// Running max (raw score units) and lane-partial sum of each of the thread's 4 rows: rows g and
// g+8 of its warp's two m16 tiles.
struct RowStats {
  float max[2][2] = {{-INFINITY, -INFINITY}, {-INFINITY, -INFINITY}};
  float sum[2][2] = {};
};

// Register tiles of one warp: scores of one sub-block (FP32), the same as 16-bit A fragments, O.
template <typename Cfg>
using Scores = float[2][Cfg::kScoreCols / 8][4];
template <typename Cfg>
using Probs = uint32_t[2][Cfg::kScoreCols / 16][4];
template <int D>
using Output = float[2][D / 8][4];

// S = Q Kᵀ for the warp's 32 query rows against kScoreCols keys of `k_rows`.
template <typename T, int D, typename Cfg>
__device__ inline void compute_scores(Scores<Cfg>& s, const T* q_tile, const T* k_rows, int warp_row, int lane) {
#pragma unroll
  for (int mi = 0; mi < 2; ++mi)
#pragma unroll
    for (int ni = 0; ni < Cfg::kScoreCols / 8; ++ni)
#pragma unroll
      for (int e = 0; e < 4; ++e) s[mi][ni][e] = 0.0f;
  warp_gemm<T, 2, Cfg::kScoreCols / 8, D / 16>(
      s, [&](uint32_t(&a)[4], int mi, int ks) { ldmatrix_a(a, q_tile, Cfg::kLd, warp_row + 16 * mi, 16 * ks, lane); },
      [&](uint32_t(&b)[4], int np, int ks) { ldmatrix_b(b, k_rows, Cfg::kLd, 16 * ks, 16 * np, lane); });
}

// −∞ for keys past the sequence and, under the causal mask, keys after the query row. Only
// sub-blocks that cross the sequence end or the diagonal of this CTA's rows get here.
template <typename Cfg>
__device__ inline void mask_scores(Scores<Cfg>& s, int first_row, int first_key, int seq, bool causal, int lane) {
#pragma unroll
  for (int mi = 0; mi < 2; ++mi)
#pragma unroll
    for (int ni = 0; ni < Cfg::kScoreCols / 8; ++ni)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int row = first_row + acc_row(mi, e, lane), key = first_key + acc_col(ni, e, lane);
        if (key >= seq || (causal && key > row)) s[mi][ni][e] = -INFINITY;
      }
}

// Online softmax of one sub-block (FA2 Alg. 1 lines 8–10): new row max m, P = exp2(S·scale_log2
// − m·scale_log2) rounded to 16 bits into `p`, the running sums and O rescaled by
// α = exp2((m_old − m)·scale_log2).
template <typename T, int D, typename Cfg>
__device__ inline void online_softmax(Probs<Cfg>& p, Scores<Cfg>& s, Output<D>& o, RowStats& st, float scale_log2) {
#pragma unroll
  for (int mi = 0; mi < 2; ++mi)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      float block_max = st.max[mi][h];
#pragma unroll
      for (int ni = 0; ni < Cfg::kScoreCols / 8; ++ni)
        block_max = fmaxf(block_max, fmaxf(s[mi][ni][2 * h], s[mi][ni][2 * h + 1]));
      const float m_new = quad_max(block_max);
      // A row that has seen only masked keys keeps m = −∞; its P and α must be 0, not NaN.
      const float m_scaled = m_new == -INFINITY ? 0.0f : m_new * scale_log2;
      const float alpha = exp2f(st.max[mi][h] * scale_log2 - m_scaled);
      st.max[mi][h] = m_new;
      float row_sum = 0.0f;
#pragma unroll
      for (int ni = 0; ni < Cfg::kScoreCols / 8; ++ni)
#pragma unroll
        for (int e = 2 * h; e < 2 * h + 2; ++e) {
          s[mi][ni][e] = exp2f(fmaf(s[mi][ni][e], scale_log2, -m_scaled));
          row_sum += s[mi][ni][e];
        }
      st.sum[mi][h] = st.sum[mi][h] * alpha + row_sum;  // lane-partial; reduced once at the end
#pragma unroll
      for (int dt = 0; dt < D / 8; ++dt) {
        o[mi][dt][2 * h] *= alpha;
        o[mi][dt][2 * h + 1] *= alpha;
      }
    }
#pragma unroll
  for (int mi = 0; mi < 2; ++mi)
#pragma unroll
    for (int ks = 0; ks < Cfg::kScoreCols / 16; ++ks) a_from_accumulators<T>(p[mi][ks], s[mi], ks);
}

// O += P·V for one sub-block: P from registers, kScoreCols rows of V from `v_rows`.
template <typename T, int D, typename Cfg>
__device__ inline void accumulate_pv(Output<D>& o, const Probs<Cfg>& p, const T* v_rows, int lane) {
  warp_gemm<T, 2, D / 8, Cfg::kScoreCols / 16>(
      o,
      [&](uint32_t(&a)[4], int mi, int ks) {
#pragma unroll
        for (int x = 0; x < 4; ++x) a[x] = p[mi][ks][x];
      },
      [&](uint32_t(&b)[4], int np, int ks) { ldmatrix_b_trans(b, v_rows, Cfg::kLd, 16 * ks, 16 * np, lane); });
}

// O normalised once (÷ l), rounded to 16 bits and staged in the warp's own rows of the Q buffer
// (which no other warp reads), then written with 16-byte coalesced stores; LSE = (m·scale_log2 +
// log2 l)·ln 2 from the quad's first lane.
template <typename T, int D, typename Cfg>
__device__ inline void store_output(const ForwardArgs<T>& p, const Output<D>& o, const RowStats& st, T* o_stage,
                                    int first_row, int lane) {
#pragma unroll
  for (int mi = 0; mi < 2; ++mi)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const float l = quad_sum(st.sum[mi][h]);
      const float inv = l > 0.0f ? 1.0f / l : 0.0f;
      const int r = acc_row(mi, 2 * h, lane);
#pragma unroll
      for (int dt = 0; dt < D / 8; ++dt)
        *reinterpret_cast<uint32_t*>(o_stage + r * Cfg::kLd + acc_col(dt, 0, lane)) =
            Half2<T>::pack(o[mi][dt][2 * h] * inv, o[mi][dt][2 * h + 1] * inv);
      if ((lane & 3) == 0 && first_row + r < p.seq)
        p.lse[head_rows(p.seq) + first_row + r] = (st.max[mi][h] * p.scale_log2 + log2f(l)) * kLn2;
    }
  __syncwarp();
  store_tile<T, D>(p.o + head_matrix<D>(p.seq), o_stage, first_row, Cfg::kWarpRows, p.seq, lane, 32);
}

template <typename T, int D>
__global__ void __launch_bounds__(ForwardTiling<D>::kThreads, ForwardTiling<D>::kCtasPerSm)
    flash_fwd_kernel(const ForwardArgs<T> p) {
  using Cfg = ForwardTiling<D>;
  constexpr int kBr = Cfg::kRows, kBc = Cfg::kCols, kSub = Cfg::kScoreCols, kLd = Cfg::kLd;
  extern __shared__ __align__(16) unsigned char smem_raw[];
  T* q_tile = reinterpret_cast<T*>(smem_raw);  // later O
  T* k_tile = q_tile + kBr * kLd;
  T* v_tile = k_tile + kBc * kLd;

  const int tid = static_cast<int>(threadIdx.x), warp = tid / 32, lane = tid % 32;
  // Heavy first: under the causal mask the last query block sees the most keys, so each head's
  // blocks start with it and the short ones fill the tail (FA2 §3.2). Consecutive CTAs stay on
  // one head, so its K and V are read from L2 by the blocks running together.
  const int row0 = static_cast<int>(gridDim.x - 1 - blockIdx.x) * kBr;
  const int warp_row = warp * Cfg::kWarpRows;
  // Causal: key blocks past the block's last query row are fully masked and never loaded.
  const int n_blocks = ceil_div(p.causal ? min(p.seq, row0 + kBr) : p.seq, kBc);
  const auto needs_mask = [&](int key0) { return key0 + kSub > p.seq || (p.causal && key0 + kSub - 1 > row0); };

  // Step 1: Q and the last key block in flight (masked blocks first, FA2's order).
  load_tile<T, D>(q_tile, p.q + head_matrix<D>(p.seq), row0, kBr, p.seq, tid, Cfg::kThreads);
  load_tile<T, D>(k_tile, p.k + head_matrix<D>(p.seq), (n_blocks - 1) * kBc, kBc, p.seq, tid, Cfg::kThreads);
  cp_async_commit();

  Output<D> o = {};
  RowStats stats;
  for (int j = n_blocks - 1; j >= 0; --j) {
    const int key0 = j * kBc;
    cp_async_wait<0>();
    __syncthreads();  // K_j landed; every warp is done with V_{j+1}
    // Step 2: V_j streams in while S = Q K_jᵀ runs.
    load_tile<T, D>(v_tile, p.v + head_matrix<D>(p.seq), key0, kBc, p.seq, tid, Cfg::kThreads);
    cp_async_commit();
    Scores<Cfg> s;
    Probs<Cfg> p_first;
    compute_scores<T, D, Cfg>(s, q_tile, k_tile, warp_row, lane);
    if (needs_mask(key0)) mask_scores<Cfg>(s, row0 + warp_row, key0, p.seq, p.causal, lane);
    if constexpr (Cfg::kScoreBlocks == 2) {  // first sub-block's softmax, then the second's scores
      online_softmax<T, D, Cfg>(p_first, s, o, stats, p.scale_log2);
      compute_scores<T, D, Cfg>(s, q_tile, k_tile + kSub * kLd, warp_row, lane);
      if (needs_mask(key0 + kSub)) mask_scores<Cfg>(s, row0 + warp_row, key0 + kSub, p.seq, p.causal, lane);
    }
    cp_async_wait<0>();
    __syncthreads();  // V_j landed; every warp is done with K_j
    // Step 3: K_{j−1} streams in while softmax and PV run.
    if (j > 0) {
      load_tile<T, D>(k_tile, p.k + head_matrix<D>(p.seq), key0 - kBc, kBc, p.seq, tid, Cfg::kThreads);
      cp_async_commit();
    }
    if constexpr (Cfg::kScoreBlocks == 2) {
      accumulate_pv<T, D, Cfg>(o, p_first, v_tile, lane);
      Probs<Cfg> p_second;
      online_softmax<T, D, Cfg>(p_second, s, o, stats, p.scale_log2);
      accumulate_pv<T, D, Cfg>(o, p_second, v_tile + kSub * kLd, lane);
    } else {
      online_softmax<T, D, Cfg>(p_first, s, o, stats, p.scale_log2);
      accumulate_pv<T, D, Cfg>(o, p_first, v_tile, lane);
    }
  }

  // Step 4: normalise, stage O through shared memory, store O and LSE.
  store_output<T, D, Cfg>(p, o, stats, q_tile + warp_row * kLd, row0 + warp_row, lane);
}

template <typename T, int D>
void launch_forward(const AttnShape& a, const void* q, const void* k, const void* v, void* o, float* lse,
                    cudaStream_t stream) {
  using Cfg = ForwardTiling<D>;
  const auto kernel = flash_fwd_kernel<T, D>;
  CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, Cfg::kSmemBytes));
  const dim3 grid(static_cast<unsigned>(ceil_div(a.seq, Cfg::kRows)), static_cast<unsigned>(a.batch * a.heads));
  const ForwardArgs<T> args{static_cast<const T*>(q),
                            static_cast<const T*>(k),
                            static_cast<const T*>(v),
                            static_cast<T*>(o),
                            lse,
                            a.seq,
                            static_cast<float>(a.scale()) * kLog2e,
                            a.causal};
  kernel<<<grid, Cfg::kThreads, Cfg::kSmemBytes, stream>>>(args);
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
  // 16-byte rows and bases: cp.async and the O stores move 16 bytes at a time.
  for (const void* p : {q, k, v, static_cast<const void*>(o)})
    GCB_CHECK(reinterpret_cast<uintptr_t>(p) % 16 == 0, "Q, K, V, O must be 16-byte aligned");
  const auto s = static_cast<cudaStream_t>(stream);
  if (t == DType::f16)
    a.head_dim == 64 ? launch_forward<__half, 64>(a, q, k, v, o, lse, s)
                     : launch_forward<__half, 128>(a, q, k, v, o, lse, s);
  else
    a.head_dim == 64 ? launch_forward<__nv_bfloat16, 64>(a, q, k, v, o, lse, s)
                     : launch_forward<__nv_bfloat16, 128>(a, q, k, v, o, lse, s);
}

}  // namespace gcb::kernels::attn
