// The work partition of our flash kernels in one place: block shapes, warps, shared memory and
// the register budget of every kernel. Plain C++ (no CUDA): the kernels (flash_fwd.cu,
// flash_bwd.cu) take their constants from here, the CPU tiled reference runs with the same
// tiles (forward_tiles, backward_tiles), and the build-time resource check (flash_budget.cpp)
// holds ptxas's figures against the budgets below. The static_asserts are the layout arithmetic
// the kernels rely on; sm_90 limits from the CUDA C++ Programming Guide, "Technical
// Specifications per Compute Capability" (228 KB shared memory per SM, 227 KB per block, 1 KB
// reserved per resident block, 64 K registers per SM, 255 per thread).
#pragma once

#include "kernels/attention/attention_ref.hpp"

namespace gcb::kernels::attn {

inline constexpr int kMmaM = 16, kMmaN = 8, kMmaK = 16;  // mma.sync.m16n8k16
inline constexpr int kSm90SmemPerSm = 228 * 1024, kSm90SmemPerBlock = 227 * 1024, kSm90SmemReserved = 1024;
inline constexpr int kSm90RegistersPerSm = 64 * 1024, kMaxRegistersPerThread = 255;

// Shared-memory rows are padded by 8 16-bit elements (16 bytes) so the 8 row addresses of one
// ldmatrix fall in different banks; rows stay 16-byte aligned for cp.async.
constexpr int padded_row(int elements) { return elements + 8; }

// Registers a thread may use so that `ctas` blocks of `threads` stay resident on one SM
// (allocation is per warp in units of 256 registers, so 8 per thread).
constexpr int register_budget(int threads, int ctas) {
  const int per_thread = kSm90RegistersPerSm / (threads * ctas) / 8 * 8;
  return per_thread < kMaxRegistersPerThread ? per_thread : kMaxRegistersPerThread;
}
constexpr bool fits_smem(int bytes, int ctas) {
  return bytes <= kSm90SmemPerBlock && ctas * (bytes + kSm90SmemReserved) <= kSm90SmemPerSm;
}

// Forward (FlashAttention-2, Dao 2023, §3.2–3.3): one CTA per 128-row query block, 4 warps ×
// 32 rows (two m16 tiles each, so every K/V fragment read from shared memory feeds two MMAs),
// no cross-warp reduction. Key blocks of 128 at d = 64 and 64 at d = 128: the shapes FA2 runs
// on A100/H100 (Dao-AILab/flash-attention, csrc/flash_attn/src/flash_fwd_launch_template.h,
// run_mha_fwd_hdim64/128). Q, K and V each take one buffer: V's load overlaps S = QKᵀ and the
// next K's load overlaps softmax and PV (FA2's two commit groups); Q's buffer stages O at the end.
// Scores are computed in sub-blocks of kScoreCols keys. At d = 64 that is the whole key block
// (O 64 + S 128 FP32 registers per thread). At d = 128 the whole block would hold O 128 + S 64
// = 192 live floats, which spills under the 255-register cap (as FA2's own 128×64 kernel does,
// Dao-AILab/flash-attention issue #1630); two 32-key sub-blocks hold O 128 + S 32 + the first
// sub-block's packed P 16. Cost: the O rescale and the row max/sum shuffles run per 32 keys
// instead of per 64; K/V tiles, barriers and fragment reuse are those of the 64-key block.
template <int D>
struct ForwardTiling {
  static_assert(D == 64 || D == 128, "head dims of our flash kernels");
  static constexpr int kRows = 128;                 // Br
  static constexpr int kCols = D == 64 ? 128 : 64;  // Bc
  static constexpr int kScoreCols = D == 64 ? 128 : 32;
  static constexpr int kScoreBlocks = kCols / kScoreCols;
  static constexpr int kWarps = 4;
  static constexpr int kThreads = 32 * kWarps;
  static constexpr int kWarpRows = kRows / kWarps;  // 32
  static constexpr int kWarpMTiles = kWarpRows / kMmaM;
  static constexpr int kLd = padded_row(D);
  static constexpr int kSmemBytes = (kRows + 2 * kCols) * kLd * 2;  // Q (then O), K, V; 16-bit
  static constexpr int kCtasPerSm = 2;
  static constexpr int kRegisterBudget = register_budget(kThreads, kCtasPerSm);

  static_assert(kWarpRows == 32 && kWarpMTiles == 2, "FA2's 32 query rows per warp");
  static_assert(kScoreCols % kMmaK == 0 && D % kMmaK == 0, "ldmatrix.x4 loads two n8 tiles");
  static_assert(kScoreBlocks == 1 || kScoreBlocks == 2, "the kernel's pipeline holds at most one pending P");
  static_assert(fits_smem(kSmemBytes, kCtasPerSm), "two CTAs per SM");
};

// Backward (FA2 Alg. 2): one CTA of 8 warps per key block, looping over 64-row query blocks;
// dK and dV accumulate in registers, split over the warps by 32 keys × the head dim; S and dP are
// split 2 (32 query rows) × 4 (keys); dQ = dS·K is split 2 (32 rows) × 4 (d/4) and added to an
// FP32 accumulator with atomics (FA2's dQaccum). Because the S/dP split differs from the dK/dV
// split, P and dS go through shared memory (two 16-bit [64][Bc+8] tiles and one more barrier per
// query block): that is what lets dK/dV spread over all 8 warps instead of each warp holding
// 16 keys × d (the earlier 4-warp design: 128 accumulators + 64 for S and dP at d = 128, 255
// registers with spills).
// Key blocks: 128 at d = 64 (FA2's shape, flash_bwd_launch_template.h run_mha_bwd_hdim64:
// dK/dV 64 + S 32 + dP 32 FP32 registers per thread). At d = 128 FA2 also runs 128 keys
// (run_mha_bwd_hdim128), but its 2·128·128/256 = 128 dK/dV accumulators plus S and dP spill
// under the 255-register cap here (16–52 bytes, depending on instruction order); 64 keys halve
// the accumulators (64) and leave ~60 registers of headroom. The price: twice FA2's dQ atomics
// (each query block's dQ is added once per 64 keys instead of once per 128) and half the
// K/V-block reuse of Q and dO.
template <int D>
struct BackwardTiling {
  static_assert(D == 64 || D == 128, "head dims of our flash kernels");
  static constexpr int kRows = 64;                  // Br: query rows per step
  static constexpr int kCols = D == 64 ? 128 : 64;  // Bc: keys per CTA
  static constexpr int kWarps = 8;
  static constexpr int kThreads = 32 * kWarps;
  // S = QKᵀ and dP = dO·Vᵀ: warps 2 (rows) × 4 (keys).
  static constexpr int kScoreWarpsM = 2, kScoreWarpsN = 4;
  static constexpr int kScoreRows = kRows / kScoreWarpsM, kScoreCols = kCols / kScoreWarpsN;  // 32 × Bc/4
  // dV += Pᵀ·dO and dK += dSᵀ·Q: warps Bc/32 (keys) × the rest (head dim), 32 keys per warp so
  // every B fragment feeds two MMAs.
  static constexpr int kKeyWarpsM = kCols / 32, kKeyWarpsN = kWarps / kKeyWarpsM;
  static constexpr int kKeyRows = kCols / kKeyWarpsM, kKeyCols = D / kKeyWarpsN;  // 32 × d/2 or d/4
  // dQ = dS·K: warps 2 (rows) × 4 (head dim).
  static constexpr int kQueryWarpsM = 2, kQueryWarpsN = 4;
  static constexpr int kQueryRows = kRows / kQueryWarpsM, kQueryCols = D / kQueryWarpsN;  // 32 × d/4
  static constexpr int kLd = padded_row(D);
  static constexpr int kLdScores = padded_row(kCols);
  static constexpr int kStages = 2;  // Q, dO, LSE and D of the next query block load during this one
  static constexpr int kSmemBytes = (2 * kCols + 2 * kStages * kRows) * kLd * 2  // K, V, Q and dO stages
                                    + 2 * kRows * kLdScores * 2                  // P and dS
                                    + 2 * kStages * kRows * 4;                   // LSE and D stages (FP32)
  static constexpr int kCtasPerSm = 1;
  static constexpr int kRegisterBudget = register_budget(kThreads, kCtasPerSm);

  static_assert(kScoreWarpsM * kScoreWarpsN == kWarps && kKeyWarpsM * kKeyWarpsN == kWarps &&
                    kQueryWarpsM * kQueryWarpsN == kWarps,
                "every phase uses every warp once");
  static_assert(kScoreRows % kMmaM == 0 && kScoreCols % (2 * kMmaN) == 0, "score warp tile");
  static_assert(kKeyRows % kMmaM == 0 && kKeyCols % (2 * kMmaN) == 0 && kRows % kMmaK == 0, "dK/dV warp tile");
  static_assert(kQueryRows % kMmaM == 0 && kQueryCols % (2 * kMmaN) == 0 && kCols % kMmaK == 0, "dQ warp tile");
  static_assert(kStages * kRows >= kCols, "dK and dV are staged through the Q and dO buffers at the end");
  static_assert(fits_smem(kSmemBytes, kCtasPerSm), "one CTA per SM");
};

// Dynamic shared memory per block of a pass at head dim 64 or 128 (109,568 / 123,904 bytes for the
// backward: more than the 99 KB a block may have on sm_86, sm_89 and sm_120 — L40S, A10, RTX 6000
// Ada, RTX 50xx — where only sm_80, sm_90 and sm_100 allow 163–227 KB).
constexpr int flash_smem_bytes(int head_dim, bool backward) {
  if (backward) return head_dim == 64 ? BackwardTiling<64>::kSmemBytes : BackwardTiling<128>::kSmemBytes;
  return head_dim == 64 ? ForwardTiling<64>::kSmemBytes : ForwardTiling<128>::kSmemBytes;
}

// The backward's helpers: D = rowsum(dO∘O) with the dQ accumulator cleared, and dQ's conversion.
inline constexpr int kPreprocessThreads = 256, kConvertThreads = 256;
inline constexpr int kHelperRegisterBudget = register_budget(256, 4);  // 4 blocks (32 warps) per SM

// The tiles the CPU tiled reference must use to follow the kernels (attention_ref.hpp).
// Head dims other than 64 (which the kernels refuse) get the d = 128 tiles.
template <int D>
constexpr Tiles forward_tiles_of() {
  return Tiles{ForwardTiling<D>::kRows, ForwardTiling<D>::kCols, ForwardTiling<D>::kScoreCols};
}
constexpr Tiles forward_tiles(int head_dim) {
  return head_dim == 64 ? forward_tiles_of<64>() : forward_tiles_of<128>();
}
constexpr Tiles backward_tiles(int head_dim) {
  return head_dim == 64 ? Tiles{BackwardTiling<64>::kRows, BackwardTiling<64>::kCols}
                        : Tiles{BackwardTiling<128>::kRows, BackwardTiling<128>::kCols};
}

}  // namespace gcb::kernels::attn
