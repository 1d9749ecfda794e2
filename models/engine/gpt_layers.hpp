// The GPT-2 model's math, once: the embedding, the transformer block and the head (final
// LayerNorm, tied LM head, softmax cross-entropy), forward and backward written by hand on the
// Backend ops (llm.c train_gpt2.c structure; no autograd), for one rank of any layout. At tp = 1
// the tensor-parallel collectives are copies or nothing, and this is the single-device model.
//
// Tensor parallelism (t ranks, rank r, C_l = C/t, NH/t heads; Shoeybi et al. 2019 §3):
//   column-parallel QKV and fc, row-parallel attention and fc projections (rank_units.hpp);
//   f = identity forward / all-reduce backward before each column-parallel block,
//   g = all-reduce forward / identity backward after each row-parallel block.
// With SP (Korthikanti et al. 2022) the LayerNorm and residual regions hold B·T/t rows: g becomes
// a reduce-scatter and f an all-gather (backward: all-gather and reduce-scatter); the gathered
// LayerNorm output is not kept but gathered again in backward (§4.2.2). The row-parallel biases
// are added once, by tp rank 0, before the reduction. Vocabulary-parallel embedding and
// cross-entropy: rank r holds vocabulary rows [r·V_p/t, (r+1)·V_p/t) of the tied wte, V_p the
// padded vocabulary (config.hpp padded_vocab), whose padding rows are zero and whose logits the
// cross-entropy leaves out (so they receive no gradient and stay zero); the embedding
// is reduced like a row-parallel output, and the loss needs an all-reduce (max) of the row maxima
// and an all-reduce (sum) of {Σexp, target logit} per row.
#pragma once

#include <cstdint>

#include "models/engine/activations.hpp"
#include "models/backend/backend.hpp"
#include "models/model/rank_shape.hpp"
#include "models/model/rank_units.hpp"
#include "models/engine/comm/tp_comm.hpp"

namespace gcb::models {

class GptLayers {
 public:
  GptLayers(Backend& be, TpComm& tp, const RankShape& shape, const RankUnits& units, Recompute recompute,
            Activations& acts);

  // First stage: slot.x = wte[tokens] + wpe (reduced over the vocabulary shards).
  void embed_forward(Slot& s, const int32_t* tokens, View params);
  // Layer l of the stage: its input is slot.x (l = 0) or layer l−1's output.
  void layer_forward(Slot& s, int l, View params);
  // slot.dout: on entry dL/d(layer output), on exit dL/d(layer input). Weight gradients
  // accumulate (+=) into `grads`. Selective recomputation reruns the attention core here; under
  // full recomputation the caller reruns layer_forward of the layer's block first (engine.cpp).
  void layer_backward(Slot& s, int l, View params, View grads);
  // Last stage, forward and backward at once: the micro-batch's per-token losses summed into
  // loss_sum[0] (fp64; accumulate = not the first micro-batch), dL/d(stage output) into
  // slot.dout, the head's weight gradients into `grads`. dloss scales the loss gradient
  // (1 / tokens in the global batch, so gradients are global means). The logits exist for
  // shape.Rh rows at a time (TrainOptions::logit_rows; all rows by default): each chunk goes
  // from logits to its input gradient before the next, so a rank never holds B·T·V/t of them.
  void head(Slot& s, const int32_t* targets, View params, View grads, View loss_sum, bool accumulate, float dloss);
  // First stage: wte and wpe gradients from slot.dout (the gradient w.r.t. the embedding output).
  void embed_backward(Slot& s, const int32_t* tokens, View grads);
  // Per-token losses of the last head() (for tests).
  const float* token_losses() const { return acts_.head().losses; }

 private:
  View layer_input(const Slot& s, int l) const { return l == 0 ? s.x : s.layers[static_cast<size_t>(l - 1)].res3; }
  // Where a row-parallel GEMM writes before the tp reduction into `out`: scratch at tp > 1,
  // `out` itself at tp = 1 (the reduction is then nothing).
  View reduce_target(View out) const { return shape_.tp > 1 ? acts_.scratch().partial : out; }

  Backend& be_;
  TpComm& tp_;
  const RankShape& shape_;
  const RankUnits& units_;
  Recompute recompute_;
  Activations& acts_;
};

}  // namespace gcb::models
