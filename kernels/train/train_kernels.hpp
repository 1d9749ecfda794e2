// Launchers of the training kernels the CUDA backend runs besides cuBLASLt and the attention
// kernels (models/backend/cuda/cuda_backend.hpp), one file per concept: elementwise.cu, reduce.cu,
// layernorm.cu, embedding.cu, cross_entropy.cu, adamw.cu, attention_simple.cu, heads.cu. Each
// computes what the CpuBackend op of the same name computes (models/cpu_backend*.cpp: the
// oracle the gpu tests compare against), in fp32, storing each value rounded once. No CUDA
// header here: pointers are device memory, `stream` a gpu::Stream (core/gpu.hpp: an opaque
// cudaStream_t, the one stream type of every kernel interface). Every launcher is stream-ordered,
// asserts its preconditions and checks its launch. Element types: f32 or bf16 (DType), as stated
// per launcher; gcb::Fault otherwise. Ran on one H200 against the CPU oracle (test_cuda_backend,
// 2026-11-27).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/dtype.hpp"
#include "core/gpu.hpp"
#include "kernels/train/adamw_math.hpp"

namespace gcb::kernels::train {

// --- element-wise (elementwise.cu) -------------------------------------------------------------
// x[i] = value; t = f32, bf16 or f64.
void fill(DType t, void* x, size_t n, float value, gpu::Stream stream);
// dst = src converted (f32 ↔ bf16; equal types are a copy the caller makes with cudaMemcpy).
void cast(DType dst_t, void* dst, DType src_t, const void* src, size_t n, gpu::Stream stream);
// out = a + b, all of type t.
void add(DType t, void* out, const void* a, const void* b, size_t n, gpu::Stream stream);
// x *= s, rounded to t (f32, bf16; f64 scaled in double).
void scale(DType t, void* x, double s, size_t n, gpu::Stream stream);
// GELU, tanh form (GPT-2): out = ½x(1 + tanh(√(2/π)(x + 0.044715x³))); dx = gelu'(x)·dout.
void gelu_forward(DType t, void* out, const void* x, size_t n, gpu::Stream stream);
void gelu_backward(DType t, void* dx, const void* x, const void* dout, size_t n, gpu::Stream stream);

// --- reductions (reduce.cu) --------------------------------------------------------------------
// out[0] (+)= Σ in[i] over fp32 inputs, in double, one block in a fixed order; out is f32 or f64.
void sum(DType out_t, void* out, const float* in, size_t n, bool accumulate, gpu::Stream stream);
// out[0] (+)= Σ in[i]² over inputs of type t (f32, bf16), in double: up to kSumSquaresBlocks blocks
// each add a fixed strided subset into partials[block] (caller's fp64 scratch of that many), then
// one block adds the partials in block order, so the bits depend on n only (deterministic).
inline constexpr int kSumSquaresBlocks = 256;
void sum_squares(DType t, double* out, const void* in, size_t n, bool accumulate, double* partials, gpu::Stream stream);
// Column sums (the bias and LayerNorm weight gradients) in two passes, so that a few hundred
// columns still fill the GPU: the rows are cut into column_sum_splits(rows, cols) ranges of
// column_sum_rows_per_split rows; a block of 32 columns × one range adds its rows in a fixed order
// into partials[split·cols + col] (fp32 scratch of the caller's, column_sum_partials floats per
// sum), then one thread per column adds the splits' partials in split order onto the output. About
// kColumnSumBlocks blocks in all (4 per SM of a 132-SM Hopper; GPT-2's C = 768 alone gives 24
// blocks of 32 columns), each range at least kColumnSumMinRows rows. The split count depends on the
// shape alone, not the device, so the bits do too (deterministic, no atomics); one split is the
// one-pass sum's order exactly.
inline constexpr int kColumnSumBlocks = 512;
inline constexpr int kColumnSumMinRows = 128;
constexpr int column_sum_splits(int rows, int cols) {
  const int col_blocks = (cols + 31) / 32;
  if (col_blocks <= 0 || rows <= 0) return 1;
  const int want = (kColumnSumBlocks + col_blocks - 1) / col_blocks, most = rows / kColumnSumMinRows;
  return std::max(1, std::min(want, most));
}
constexpr int column_sum_rows_per_split(int rows, int splits) { return (rows + splits - 1) / splits; }
constexpr size_t column_sum_partials(int rows, int cols) {
  return static_cast<size_t>(column_sum_splits(rows, cols)) * static_cast<size_t>(cols > 0 ? cols : 0);
}
// dbias[col] += Σ_rows dout[row, col], both of type t (the column sums above; partials: scratch of
// column_sum_partials(rows, cols) floats).
void bias_backward(DType t, void* dbias, const void* dout, int rows, int cols, float* partials, gpu::Stream stream);

// --- LayerNorm (layernorm.cu), eps 1e-5; x, out, w, b, dx, dw, db, dout of type t --------------
void layernorm_forward(DType t, void* out, float* mean, float* rstd, const void* x, const void* w, const void* b,
                       int rows, int C, gpu::Stream stream);
// dx += …, dw += …, db += … (accumulating; dw, db as the column sums above, read in one pass;
// partials: scratch of 2·column_sum_partials(rows, C) floats).
void layernorm_backward(DType t, void* dx, void* dw, void* db, const void* dout, const void* x, const void* w,
                        const float* mean, const float* rstd, int rows, int C, float* partials, gpu::Stream stream);

// --- embedding of a vocabulary shard [v0, v0 + V) (embedding.cu); wte, wpe, out of type t -------
void embedding_forward(DType t, void* out, const int32_t* tokens, const void* wte, int v0, int V, const void* wpe,
                       int B, int T, int C, gpu::Stream stream);
// Bytes of device scratch embedding_backward needs for `rows` tokens (a radix sort of them).
size_t embedding_backward_workspace(int rows);
// dwte[tok − v0] += dout[row] for the shard's tokens, summed per token in row order after a
// stable radix sort of the tokens (deterministic, no atomics); dwpe[t] += Σ_b dout[b, t] when
// dwpe is not null.
void embedding_backward(DType t, void* dwte, void* dwpe, const void* dout, const int32_t* tokens, int v0, int V, int B,
                        int T, int C, void* workspace, size_t workspace_bytes, gpu::Stream stream);

// --- softmax cross-entropy over a vocabulary shard (cross_entropy.cu); logits of type t ---------
// Rows have stride V; columns [valid, V) are vocabulary padding: read by no pass, probability 0.
// rowmax[r] = max_{i<valid} logits[r, i] (−inf when valid = 0); `online` (2 floats per row, may
// be null) receives the shard's own maximum and Σ exp(l − that maximum), summed in the same pass
// (Milakov & Gimelshein 2018).
void cross_entropy_max(DType t, float* rowmax, float* online, const void* logits, int rows, int V, int valid,
                       gpu::Stream stream);
// stats[r] = {Σ exp(l − rowmax[r]), l[target − v0] or 0}. With `online` from the max pass the sum
// is rescaled, online.sum · exp(online.max − rowmax), and only the target logit is read;
// without it the row is summed again.
void cross_entropy_sums(DType t, float* stats, const void* logits, const float* rowmax, const float* online,
                        const int32_t* targets, int v0, int rows, int V, int valid, gpu::Stream stream);
// losses[r] = log(Σexp) − (target logit − rowmax); probs = exp(l − rowmax)/Σexp below valid, 0
// from valid on (may alias logits).
void cross_entropy_finish(DType t, float* losses, void* probs, const void* logits, const float* rowmax,
                          const float* stats, int rows, int V, int valid, gpu::Stream stream);
// finish and backward in one pass (cross_entropy_math.hpp), the fused classifier of llm.c
// (karpathy/llm.c llmc/fused_classifier.cuh): losses as finish computes them and dlogits =
// (softmax − onehot(target − v0)) · dloss written over the logits' storage (dlogits may alias
// logits), so the probabilities are never stored and the [rows, V] matrix is read once and
// written once instead of twice each.
void cross_entropy_finish_backward(DType t, float* losses, void* dlogits, const void* logits, const float* rowmax,
                                   const float* stats, const int32_t* targets, int v0, int rows, int V, int valid,
                                   float dloss, gpu::Stream stream);
// dlogits = (probs − onehot(target − v0)) · dloss (may alias probs).
void cross_entropy_backward(DType t, void* dlogits, const void* probs, const int32_t* targets, int v0, int rows, int V,
                            float dloss, gpu::Stream stream);

// --- AdamW (adamw.cu, arithmetic in adamw_math.hpp) ----------------------------------------------
// One optimizer step over a list of tensors (AdamWTensor), all with params and grads of type t,
// in as few launches as the multi-tensor table allows (multi_tensor_plan.hpp). The bias corrections
// c1 = 1 − β1^step, c2 = 1 − β2^step in AdamWStep are computed by the caller (in float, as the CPU
// oracle does). Empty tensors are skipped.
void adamw_multi(DType t, const std::vector<AdamWTensor>& tensors, const AdamWStep& a, gpu::Stream stream);

// --- attention without the flash kernels (attention_simple.cu) ---------------------------------
// Causal attention straight on the fused qkv [B, T, 3C] (q | k | v, heads contiguous in each),
// exact fp32 arithmetic per (sequence, head, row): one warp per query row with an online softmax
// over the keys (forward, out [B,T,C] and natural-log lse [B,NH,T]); backward in three kernels —
// D = rowsum(dO∘O), dQ one warp per query row, dK and dV one warp per key row — without atomics.
// For fp32 runs (the flash kernels are 16-bit) and head dims other than 64 and 128; head dim ≤ 256.
// Quadratic work with no tiling: a correctness path, not a fast one.
void simple_attention_forward(DType t, void* out, float* lse, const void* qkv, int B, int T, int C, int NH,
                              gpu::Stream stream);
// `workspace` holds B·NH·T floats (D).
void simple_attention_backward(DType t, void* dqkv, const void* dout, const void* qkv, const void* out,
                               const float* lse, int B, int T, int C, int NH, float* workspace, gpu::Stream stream);

// --- head layouts for the flash and cuDNN kernels (heads.cu), bf16 ------------------------------
// Columns [col, col + NH·hs) of a [B, T, width] tensor to [B, NH, T, hs], and back.
void rows_to_heads(DType t, void* dst, const void* src, int width, int col, int B, int T, int NH, int hs,
                   gpu::Stream stream);
void heads_to_rows(DType t, void* dst, const void* src, int width, int col, int B, int T, int NH, int hs,
                   gpu::Stream stream);

}  // namespace gcb::kernels::train
