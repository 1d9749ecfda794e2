// CPU references for attention: a naive FP64 version (the oracle) and an FP32
// tiled online-softmax version that follows the GPU kernels step by step (block sizes Br×Bc,
// running max m and sum l in the log2 domain, rescaling, LSE saved; backward recomputes P from
// LSE as FlashAttention-2 does), so the algorithm is tested without a GPU.
// All arrays: [batch, heads, seq, head_dim] (LSE: [batch, heads, seq], natural log). Blocking.
#pragma once

#include <cstddef>
#include <vector>

#include "kernels/attention/attention_shape.hpp"

namespace gcb::kernels::attn {

// Naive forward in FP64: S = scale·QKᵀ, masked, P = softmax(S), O = PV, lse = log Σ exp(S).
void naive_forward(const AttnShape& a, const double* q, const double* k, const double* v, double* o, double* lse);
// Naive backward in FP64 given dO: P recomputed exactly; dV = Pᵀ dO, dP = dO Vᵀ,
// dS = P∘(dP − rowsum(dP∘P)), dQ = scale·dS K, dK = scale·dSᵀ Q.
void naive_backward(const AttnShape& a, const double* q, const double* k, const double* v, const double* d_o,
                    double* dq, double* dk, double* dv);

// One query row of one head in FP64 from FP32 inputs (16-bit values are exact in FP32): O_i,
// lse_i and, when d_o is given, dQ_i = scale·Σ_j P_ij (dP_ij − D_i) K_j. O(s·d): the check of
// sampled rows on shapes too large for the full reference. `head` indexes batch·heads.
void reference_row(const AttnShape& a, const float* q, const float* k, const float* v, const float* d_o, size_t head,
                   int row, double* o, double* lse, double* dq);

// One key row of one head in FP64: dK_j = scale·Σ_i dS_ij Q_i and dV_j = Σ_i P_ij dO_i over the
// query rows i that see key j, with P_ij = exp(scale·Q_i·K_j − lse_i) and
// dS_ij = P_ij (dO_i·V_j − delta_i). `lse` and `delta` are the head's per-row LSE (natural log) and
// D_i = rowsum(dO_i∘O_i), as the backward pass under test consumed them: given those, a key row
// costs O(s·d), so sampled key rows can be checked at any sequence length.
void reference_key_row(const AttnShape& a, const float* q, const float* k, const float* v, const float* d_o,
                       const float* lse, const double* delta, size_t head, int key, double* dk, double* dv);

// Tile sizes of the GPU kernels (flash_fwd.cu, flash_bwd.cu; the kernels' values come from
// forward_tiles() and backward_tiles() in flash_tiling.hpp): Br query rows × Bc key columns,
// the forward's online softmax stepping score_cols keys at a time (0: all Bc at once).
struct Tiles {
  int rows = 64;       // Br
  int cols = 64;       // Bc
  int score_cols = 0;  // forward only; divides Bc
};

// FP32 tiled forward, FlashAttention-2 online softmax (Dao 2023, Alg. 1), in the kernel's order:
// key blocks of Bc from the last to the first, each as score blocks of score_cols keys.
void tiled_forward(const AttnShape& a, Tiles t, const float* q, const float* k, const float* v, float* o, float* lse);
// FP32 tiled backward (FA2 Alg. 2): D = rowsum(dO∘O); per key block, loop over query blocks,
// P = exp(S − lse), dV += Pᵀ dO, dS = P∘(dO Vᵀ − D), dK += scale·dSᵀ Q, dQ += scale·dS K.
void tiled_backward(const AttnShape& a, Tiles t, const float* q, const float* k, const float* v, const float* o,
                    const float* d_o, const float* lse, float* dq, float* dk, float* dv);

// Error of `got` against the FP64 reference `want` over n elements.
struct ErrorStats {
  double rmse = 0;     // sqrt(mean((got − want)²))
  double max_abs = 0;  // max |got − want|
  size_t worst = 0;    // index of max_abs
  size_t non_finite = 0;
};
ErrorStats compare(const double* want, const float* got, size_t n);
ErrorStats compare(const double* want, const double* got, size_t n);

// Seeded N(0,1) inputs, identical for every implementation and device.
std::vector<float> random_normal(size_t n, unsigned long long seed);

}  // namespace gcb::kernels::attn
