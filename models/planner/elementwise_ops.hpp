// The element-wise work of a training step — everything but the GEMMs, the attention core and
// the collectives — as the engine runs it, op by op (gpt_layers.cpp: LayerNorms, the GEMMs' bias
// loops, residual adds, GELU, bias gradients, embedding, cross-entropy; model_states.cpp:
// gradient zeroing and AdamW): per call the elements it produces and the bytes it reads and
// writes. The planner prices each call on a roofline (Williams, Waterman & Patterson, "Roofline:
// an insightful visual performance model for multicore architectures", CACM 52(4), 2009):
//   t = max(bytes / memory bandwidth, elements / the op's in-core ceiling)
// — the memory roof a STREAM triad measures, the ceiling the op's own loop reaches on data that
// sits in cache (the paper's "computational ceilings" below peak: GELU's tanh, the softmax's exp,
// AdamW's square root are not FMA-bound). compute_model.hpp holds the rates.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

namespace gcb::models::planner {

enum class EwOp : uint8_t {
  layernorm_forward,
  layernorm_backward,
  bias_forward,   // a GEMM's bias added over its output rows (CpuBackend::gemm's loop)
  bias_backward,  // dbias = Σ_rows dY
  residual_add,
  gelu_forward,
  gelu_backward,
  embedding_forward,
  embedding_backward,
  cross_entropy_forward,   // row max, Σexp, log-sum-exp and probabilities over the vocabulary shard
  cross_entropy_backward,  // dlogits = probs − onehot
  fill,                    // zeroing (gradients each step, the head's input gradient)
  adamw,
  attention_scores,  // a materialised attention's scores, softmax and dropout (memory roof only)
  grad_norm,         // Σ g² of gradient clipping over the own dp shard range (Backend::sum_squares)
};
inline constexpr size_t kEwOps = 15;
std::string_view ew_op_name(EwOp op);

struct EwCall {
  EwOp op = EwOp::fill;
  double elements = 0;  // per call: the elements the op produces (its loop's trip count)
  double bytes = 0;     // per call: read + written
  double count = 0;     // calls
};

// Adds `count` calls (merging with an equal call already listed).
void add_ew(std::vector<EwCall>& v, EwOp op, double elements, double bytes, double count);
double ew_bytes(const std::vector<EwCall>& v);  // Σ count × bytes

}  // namespace gcb::models::planner
