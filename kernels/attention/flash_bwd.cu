// FlashAttention-2 backward (Dao 2023, Alg. 2 and §3.2): a preprocess kernel computes
// D = rowsum(dO∘O) and clears the FP32 dQ accumulator; the main kernel runs one CTA of 8 warps
// per key block (128 keys at d = 64, 64 at d = 128) of one (batch, head), keeps dK and dV in
// registers, walks the 64-row query
// blocks (Q, dO, LSE and D double-buffered with cp.async), recomputes P from LSE, passes P and dS
// to the dK/dV warps through shared memory and adds dQ = dS·K with atomics; a last kernel
// converts dQ to 16 bits. Work partition and its register/shared-memory trade-off:
// BackwardTiling (flash_tiling.hpp). CPU twin: tiled_backward() (attention_ref.cpp).
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
struct BackwardArgs {
  const T* q;
  const T* k;
  const T* v;
  const T* d_o;
  const float* lse;    // natural log, [b·h, seq]
  const float* delta;  // D = rowsum(dO∘O)
  float* dq_accum;     // FP32 [b·h, seq, d], zeroed by the preprocess kernel
  T* dk;
  T* dv;
  int seq;
  float scale;
  bool causal;
};

// D_i = Σ_d dO_id·O_id and dQ_accum_i = 0: D/8 threads per row, 16-byte loads and stores.
template <typename T, int D>
__global__ void __launch_bounds__(kPreprocessThreads)
    flash_bwd_preprocess(const T* __restrict__ o, const T* __restrict__ d_o, float* __restrict__ delta,
                         float* __restrict__ dq_accum, size_t rows) {
  constexpr int kLanesPerRow = D / 8;
  const size_t chunk = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x, row = chunk / kLanesPerRow;
  const bool valid = row < rows;  // every lane takes part in the shuffles below
  float sum = 0.0f;
  if (valid) {
    const uint4 ov = reinterpret_cast<const uint4*>(o)[chunk], dv = reinterpret_cast<const uint4*>(d_o)[chunk];
    const T* oe = reinterpret_cast<const T*>(&ov);
    const T* de = reinterpret_cast<const T*>(&dv);
#pragma unroll
    for (int x = 0; x < 8; ++x) sum += Half2<T>::to_float(oe[x]) * Half2<T>::to_float(de[x]);
    reinterpret_cast<float4*>(dq_accum)[2 * chunk] = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    reinterpret_cast<float4*>(dq_accum)[2 * chunk + 1] = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
  }
#pragma unroll
  for (int off = kLanesPerRow / 2; off > 0; off >>= 1) sum += __shfl_xor_sync(0xffffffffu, sum, off);
  if (valid && chunk % kLanesPerRow == 0) delta[row] = sum;
}

// dQ from the FP32 accumulator to 16 bits, 8 elements (one 16-byte store) per thread.
template <typename T>
__global__ void __launch_bounds__(kConvertThreads)
    convert_dq(const float* __restrict__ dq_accum, T* __restrict__ dq, size_t chunks) {
  const size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= chunks) return;
  const float4 a = reinterpret_cast<const float4*>(dq_accum)[2 * i];
  const float4 b = reinterpret_cast<const float4*>(dq_accum)[2 * i + 1];
  reinterpret_cast<uint4*>(dq)[i] =
      uint4{Half2<T>::pack(a.x, a.y), Half2<T>::pack(a.z, a.w), Half2<T>::pack(b.x, b.y), Half2<T>::pack(b.z, b.w)};
}

// Shared-memory tiles of the main kernel (offsets in elements of T from the dynamic base).
template <typename T, int D>
struct BackwardSmem {
  using Cfg = BackwardTiling<D>;
  T* k;
  T* v;
  T* q;             // kStages × [Br][kLd]
  T* d_o;           // kStages × [Br][kLd]
  T* p;             // [Br][kLdScores]: P of this query block, 16-bit
  T* ds;            // [Br][kLdScores]: dS
  float* lse_log2;  // kStages × Br
  float* delta;     // kStages × Br

  __device__ explicit BackwardSmem(unsigned char* raw) {
    k = reinterpret_cast<T*>(raw);
    v = k + Cfg::kCols * Cfg::kLd;
    q = v + Cfg::kCols * Cfg::kLd;
    d_o = q + Cfg::kStages * Cfg::kRows * Cfg::kLd;
    p = d_o + Cfg::kStages * Cfg::kRows * Cfg::kLd;
    ds = p + Cfg::kRows * Cfg::kLdScores;
    lse_log2 = reinterpret_cast<float*>(ds + Cfg::kRows * Cfg::kLdScores);
    delta = lse_log2 + Cfg::kStages * Cfg::kRows;
  }
};

// Q, dO, LSE (as log2) and D of query block `block` into stage `stage`; rows past the sequence
// get LSE = +∞ so their P is exp2(x − ∞) = 0 and D = 0.
template <typename T, int D>
__device__ inline void load_query_block(const BackwardSmem<T, D>& sm, const BackwardArgs<T>& p, int block, int stage,
                                        int tid) {
  using Cfg = BackwardTiling<D>;
  const int r0 = block * Cfg::kRows, stage_offset = stage * Cfg::kRows * Cfg::kLd;
  load_tile<T, D>(sm.q + stage_offset, p.q + head_matrix<D>(p.seq), r0, Cfg::kRows, p.seq, tid, Cfg::kThreads);
  load_tile<T, D>(sm.d_o + stage_offset, p.d_o + head_matrix<D>(p.seq), r0, Cfg::kRows, p.seq, tid, Cfg::kThreads);
  for (int r = tid; r < Cfg::kRows; r += Cfg::kThreads) {
    const bool valid = r0 + r < p.seq;
    sm.lse_log2[stage * Cfg::kRows + r] = valid ? p.lse[head_rows(p.seq) + r0 + r] * kLog2e : INFINITY;
    sm.delta[stage * Cfg::kRows + r] = valid ? p.delta[head_rows(p.seq) + r0 + r] : 0.0f;
  }
}

template <typename Cfg>
using ScoreTile = float[Cfg::kScoreRows / 16][Cfg::kScoreCols / 8][4];

// S = Q Kᵀ and dP = dO Vᵀ for this warp's 32 query rows × 32 keys (A by rows, B from K/V rows).
template <typename T, int D, typename Cfg>
__device__ inline void score_tile(ScoreTile<Cfg>& acc, const T* rows, const T* keys, int row0, int key0, int lane) {
#pragma unroll
  for (int mi = 0; mi < Cfg::kScoreRows / 16; ++mi)
#pragma unroll
    for (int ni = 0; ni < Cfg::kScoreCols / 8; ++ni)
#pragma unroll
      for (int e = 0; e < 4; ++e) acc[mi][ni][e] = 0.0f;
  warp_gemm<T, Cfg::kScoreRows / 16, Cfg::kScoreCols / 8, D / 16>(
      acc, [&](uint32_t(&a)[4], int mi, int ks) { ldmatrix_a(a, rows, Cfg::kLd, row0 + 16 * mi, 16 * ks, lane); },
      [&](uint32_t(&b)[4], int np, int ks) { ldmatrix_b(b, keys, Cfg::kLd, 16 * ks, key0 + 16 * np, lane); });
}

// P = exp2(S·scale·log2 e − LSE·log2 e) in place of S; with `masked`, 0 for keys past the
// sequence and, under the causal mask, keys after the query row. The LSE of the thread's 4 rows
// (log2 units) is read once.
template <typename Cfg>
__device__ inline void probabilities(ScoreTile<Cfg>& s, const float* lse_log2, int row0, int key0, bool masked,
                                     int first_query, int first_key, int seq, bool causal, float scale_log2, int lane) {
#pragma unroll
  for (int mi = 0; mi < Cfg::kScoreRows / 16; ++mi)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int r = row0 + acc_row(mi, 2 * h, lane);
      const float lse = lse_log2[r];
#pragma unroll
      for (int ni = 0; ni < Cfg::kScoreCols / 8; ++ni)
#pragma unroll
        for (int e = 2 * h; e < 2 * h + 2; ++e) {
          const int key = first_key + key0 + acc_col(ni, e, lane);
          const bool hidden = masked && (key >= seq || (causal && key > first_query + r));
          s[mi][ni][e] = hidden ? 0.0f : exp2f(fmaf(s[mi][ni][e], scale_log2, -lse));
        }
    }
}

// dS = P∘(dP − D) in place of dP (P in FP32, as FA2 Alg. 2 line 14); P and dS stored as 16-bit
// [query][key] tiles for the dK/dV and dQ warps (4-byte stores of adjacent keys, conflict-free
// with the padded rows).
template <typename T, typename Cfg>
__device__ inline void store_p_and_ds(const ScoreTile<Cfg>& p, const ScoreTile<Cfg>& dp, const float* delta, T* p_tile,
                                      T* ds_tile, int row0, int key0, int lane) {
#pragma unroll
  for (int mi = 0; mi < Cfg::kScoreRows / 16; ++mi)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int r = row0 + acc_row(mi, 2 * h, lane);
      const float d = delta[r];
#pragma unroll
      for (int ni = 0; ni < Cfg::kScoreCols / 8; ++ni) {
        const float p0 = p[mi][ni][2 * h], p1 = p[mi][ni][2 * h + 1];
        const int at = r * Cfg::kLdScores + key0 + acc_col(ni, 0, lane);
        *reinterpret_cast<uint32_t*>(p_tile + at) = Half2<T>::pack(p0, p1);
        *reinterpret_cast<uint32_t*>(ds_tile + at) =
            Half2<T>::pack(p0 * (dp[mi][ni][2 * h] - d), p1 * (dp[mi][ni][2 * h + 1] - d));
      }
    }
}

template <typename Cfg, int D>
using KeyTile = float[Cfg::kKeyRows / 16][Cfg::kKeyCols / 8][4];

// acc += Xᵀ·Y for this warp's 32 keys × kKeyCols columns: Xᵀ read transposed from a
// [query][key] tile (P or dS), Y (dO or Q) from a [query][d] tile.
template <typename T, int D, typename Cfg>
__device__ inline void key_gradient(KeyTile<Cfg, D>& acc, const T* x_tile, const T* y_tile, int key0, int col0,
                                    int lane) {
  warp_gemm<T, Cfg::kKeyRows / 16, Cfg::kKeyCols / 8, Cfg::kRows / 16>(
      acc,
      [&](uint32_t(&a)[4], int mi, int ks) {
        ldmatrix_a_trans(a, x_tile, Cfg::kLdScores, key0 + 16 * mi, 16 * ks, lane);
      },
      [&](uint32_t(&b)[4], int np, int ks) { ldmatrix_b_trans(b, y_tile, Cfg::kLd, 16 * ks, col0 + 16 * np, lane); });
}

// dQ_accum += scale·dS·K for this warp's 32 query rows × d/4 columns, by vector atomics (the
// other key blocks of the head add to the same rows concurrently; the order, and so the last
// bits of dQ, vary from run to run).
template <typename T, int D, typename Cfg>
__device__ inline void add_query_gradient(float* dq_accum, const T* ds_tile, const T* k_tile, int first_query, int row0,
                                          int col0, int seq, float scale, int lane) {
  float acc[Cfg::kQueryRows / 16][Cfg::kQueryCols / 8][4] = {};
  warp_gemm<T, Cfg::kQueryRows / 16, Cfg::kQueryCols / 8, Cfg::kCols / 16>(
      acc,
      [&](uint32_t(&a)[4], int mi, int ks) { ldmatrix_a(a, ds_tile, Cfg::kLdScores, row0 + 16 * mi, 16 * ks, lane); },
      [&](uint32_t(&b)[4], int np, int ks) { ldmatrix_b_trans(b, k_tile, Cfg::kLd, 16 * ks, col0 + 16 * np, lane); });
#pragma unroll
  for (int mi = 0; mi < Cfg::kQueryRows / 16; ++mi)
#pragma unroll
    for (int ni = 0; ni < Cfg::kQueryCols / 8; ++ni)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int row = first_query + row0 + acc_row(mi, 2 * h, lane), col = col0 + acc_col(ni, 0, lane);
        if (row < seq)
          atomic_add_pair(dq_accum + static_cast<size_t>(row) * D + col, scale * acc[mi][ni][2 * h],
                          scale * acc[mi][ni][2 * h + 1]);
      }
}

// dK (× scale) or dV from registers to a [key][d] shared tile, 16-bit.
template <typename T, int D, typename Cfg>
__device__ inline void stage_key_tile(T* tile, const KeyTile<Cfg, D>& acc, float factor, int key0, int col0, int lane) {
#pragma unroll
  for (int mi = 0; mi < Cfg::kKeyRows / 16; ++mi)
#pragma unroll
    for (int ni = 0; ni < Cfg::kKeyCols / 8; ++ni)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        T* at = tile + (key0 + acc_row(mi, 2 * h, lane)) * Cfg::kLd + col0 + acc_col(ni, 0, lane);
        *reinterpret_cast<uint32_t*>(at) = Half2<T>::pack(factor * acc[mi][ni][2 * h], factor * acc[mi][ni][2 * h + 1]);
      }
}

template <typename T, int D>
__global__ void __launch_bounds__(BackwardTiling<D>::kThreads, BackwardTiling<D>::kCtasPerSm)
    flash_bwd_kernel(const BackwardArgs<T> p) {
  using Cfg = BackwardTiling<D>;
  constexpr int kBr = Cfg::kRows, kBc = Cfg::kCols, kLd = Cfg::kLd;
  extern __shared__ __align__(16) unsigned char smem_raw[];
  const BackwardSmem<T, D> sm(smem_raw);

  const int tid = static_cast<int>(threadIdx.x), warp = tid / 32, lane = tid % 32;
  // Key block 0 is the heaviest under the causal mask (every query sees it): blockIdx.x order
  // is heavy first.
  const int first_key = static_cast<int>(blockIdx.x) * kBc;
  // This warp's place in each phase's split (flash_tiling.hpp).
  const int score_row = (warp / Cfg::kScoreWarpsN) * Cfg::kScoreRows;
  const int score_key = (warp % Cfg::kScoreWarpsN) * Cfg::kScoreCols;
  const int key_row = (warp / Cfg::kKeyWarpsN) * Cfg::kKeyRows, key_col = (warp % Cfg::kKeyWarpsN) * Cfg::kKeyCols;
  const int query_row = (warp / Cfg::kQueryWarpsN) * Cfg::kQueryRows;
  const int query_col = (warp % Cfg::kQueryWarpsN) * Cfg::kQueryCols;
  const float scale_log2 = p.scale * kLog2e;
  // Causal: query blocks that end before this block's first key see none of it.
  const int first_block = p.causal ? first_key / kBr : 0, n_blocks = ceil_div(p.seq, kBr);

  // Step 1: this CTA's K and V, and the first query block.
  load_tile<T, D>(sm.k, p.k + head_matrix<D>(p.seq), first_key, kBc, p.seq, tid, Cfg::kThreads);
  load_tile<T, D>(sm.v, p.v + head_matrix<D>(p.seq), first_key, kBc, p.seq, tid, Cfg::kThreads);
  load_query_block<T, D>(sm, p, first_block, 0, tid);
  cp_async_commit();

  KeyTile<Cfg, D> dk = {}, dv = {};
  for (int i = first_block, stage = 0; i < n_blocks; ++i, stage ^= 1) {
    const int first_query = i * kBr;
    cp_async_wait<0>();
    __syncthreads();  // stage landed; every warp is done with the other stage and with P, dS
    // Step 2: the next query block streams in during this one.
    if (i + 1 < n_blocks) {
      load_query_block<T, D>(sm, p, i + 1, stage ^ 1, tid);
      cp_async_commit();
    }
    const T* q_tile = sm.q + stage * kBr * kLd;
    const T* do_tile = sm.d_o + stage * kBr * kLd;
    const float* lse_log2 = sm.lse_log2 + stage * kBr;

    // Step 3: P from S = Q Kᵀ and LSE; dP = dO Vᵀ; dS = P∘(dP − D); P and dS to shared memory.
    {
      ScoreTile<Cfg> prob, dp;
      score_tile<T, D, Cfg>(prob, q_tile, sm.k, score_row, score_key, lane);
      // Only blocks crossing the sequence end or the diagonal need the mask.
      const bool masked = first_key + kBc > p.seq || (p.causal && first_key + kBc - 1 > first_query);
      probabilities<Cfg>(prob, lse_log2, score_row, score_key, masked, first_query, first_key, p.seq, p.causal,
                         scale_log2, lane);
      score_tile<T, D, Cfg>(dp, do_tile, sm.v, score_row, score_key, lane);
      store_p_and_ds<T, Cfg>(prob, dp, sm.delta + stage * kBr, sm.p, sm.ds, score_row, score_key, lane);
    }
    __syncthreads();  // the whole P and dS tiles are in shared memory

    // Step 4: dV += Pᵀ dO and dK += dSᵀ Q for this warp's keys × columns (scale applied at the end).
    key_gradient<T, D, Cfg>(dv, sm.p, do_tile, key_row, key_col, lane);
    key_gradient<T, D, Cfg>(dk, sm.ds, q_tile, key_row, key_col, lane);
    // Step 5: dQ += scale · dS K into the FP32 accumulator.
    add_query_gradient<T, D, Cfg>(p.dq_accum + head_matrix<D>(p.seq), sm.ds, sm.k, first_query, query_row, query_col,
                                  p.seq, p.scale, lane);
  }

  // Step 6: dK = scale · Σ dSᵀ Q and dV staged through the (now idle) Q and dO buffers, then
  // written with 16-byte coalesced stores for keys inside the sequence.
  __syncthreads();
  stage_key_tile<T, D, Cfg>(sm.q, dk, p.scale, key_row, key_col, lane);
  stage_key_tile<T, D, Cfg>(sm.d_o, dv, 1.0f, key_row, key_col, lane);
  __syncthreads();
  store_tile<T, D>(p.dk + head_matrix<D>(p.seq), sm.q, first_key, kBc, p.seq, tid, Cfg::kThreads);
  store_tile<T, D>(p.dv + head_matrix<D>(p.seq), sm.d_o, first_key, kBc, p.seq, tid, Cfg::kThreads);
}

template <typename T, int D>
void launch_backward(const AttnShape& a, const void* q, const void* k, const void* v, const void* o, const void* d_o,
                     const float* lse, void* dq, void* dk, void* dv, void* workspace, cudaStream_t stream) {
  using Cfg = BackwardTiling<D>;
  auto* dq_accum = static_cast<float*>(workspace);
  float* delta = dq_accum + a.elements();
  const size_t chunks = a.elements() / 8;  // 16-byte chunks of 8 elements; d is a multiple of 8
  flash_bwd_preprocess<T, D>
      <<<static_cast<unsigned>(ceil_div(chunks, size_t{kPreprocessThreads})), kPreprocessThreads, 0, stream>>>(
          static_cast<const T*>(o), static_cast<const T*>(d_o), delta, dq_accum, a.rows());
  CUDA_CHECK(cudaGetLastError());

  const auto kernel = flash_bwd_kernel<T, D>;
  CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, Cfg::kSmemBytes));
  const dim3 grid(static_cast<unsigned>(ceil_div(a.seq, Cfg::kCols)), static_cast<unsigned>(a.batch * a.heads));
  const BackwardArgs<T> args{static_cast<const T*>(q),
                             static_cast<const T*>(k),
                             static_cast<const T*>(v),
                             static_cast<const T*>(d_o),
                             lse,
                             delta,
                             dq_accum,
                             static_cast<T*>(dk),
                             static_cast<T*>(dv),
                             a.seq,
                             static_cast<float>(a.scale()),
                             a.causal};
  kernel<<<grid, Cfg::kThreads, Cfg::kSmemBytes, stream>>>(args);
  CUDA_CHECK(cudaGetLastError());

  convert_dq<T><<<static_cast<unsigned>(ceil_div(chunks, size_t{kConvertThreads})), kConvertThreads, 0, stream>>>(
      dq_accum, static_cast<T*>(dq), chunks);
  CUDA_CHECK(cudaGetLastError());
}

}  // namespace

size_t flash_backward_workspace_bytes(const AttnShape& a) { return (a.elements() + a.rows()) * sizeof(float); }

void flash_backward(DType t, const AttnShape& a, const void* q, const void* k, const void* v, const void* o,
                    const void* d_o, const float* lse, void* dq, void* dk, void* dv, void* workspace, void* stream) {
  NvtxRange range("flash_backward");
  GCB_CHECK(*flash_unsupported(t, a) == '\0', flash_unsupported(t, a));
  for (const void* p : {q, k, v, o, d_o, static_cast<const void*>(dq), static_cast<const void*>(dk),
                        static_cast<const void*>(dv), static_cast<const void*>(workspace)})
    GCB_CHECK(reinterpret_cast<uintptr_t>(p) % 16 == 0,
              "Q, K, V, O, dO, dQ, dK, dV and the workspace must be 16-byte aligned");
  const auto s = static_cast<cudaStream_t>(stream);
  if (t == DType::f16)
    a.head_dim == 64 ? launch_backward<__half, 64>(a, q, k, v, o, d_o, lse, dq, dk, dv, workspace, s)
                     : launch_backward<__half, 128>(a, q, k, v, o, d_o, lse, dq, dk, dv, workspace, s);
  else
    a.head_dim == 64 ? launch_backward<__nv_bfloat16, 64>(a, q, k, v, o, d_o, lse, dq, dk, dv, workspace, s)
                     : launch_backward<__nv_bfloat16, 128>(a, q, k, v, o, d_o, lse, dq, dk, dv, workspace, s);
}

}  // namespace gcb::kernels::attn
