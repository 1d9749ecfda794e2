// The tensor shapes one rank computes with: a micro-batch of B sequences of T tokens (R = B·T
// rows), the rank's tensor-parallel share of the hidden size, heads and vocabulary (of the padded
// vocabulary V_p, config.hpp padded_vocab), and the rows of the sequence-parallel regions (Rs = R/t
// under SP, else R).
#pragma once

#include <algorithm>

#include "models/model/train_options.hpp"

namespace gcb::models {

struct RankShape {
  int B = 1, T = 1, C = 1;
  int tp = 1, tp_rank = 0;
  int Cl = 1, heads = 1, Vl = 1, v0 = 0;  // C/t, NH/t, V_p/t, first vocabulary row of this rank
  int Vreal = 1;                          // rows of the shard below V (the rest is padding)
  int R = 1, Rs = 1;                      // rows; rows of the LayerNorm/residual regions
  int Rh = 1;                             // rows of the LM head's logits held at a time (≤ R)
  bool sp = false;                        // sequence parallelism active (tp > 1)
  int stage_layers = 0;
  // Layers per recomputed block (train_options.hpp Recompute): K under full recomputation (at most
  // the stage's layers), else 1. A block is layers [b·K, min((b + 1)·K, stage_layers)).
  int recompute_block = 1;
  bool first = true, last = true;  // first / last pipeline stage
  int slots = 1;                   // micro-batches in flight (activation sets)

  RankShape(const TrainOptions& o, const ParallelLayout& lay, int tp_rank_, int pp_rank, int layers)
      : B(o.micro_batch),
        T(o.model.seq),
        C(o.model.hidden),
        tp(lay.tp),
        tp_rank(tp_rank_),
        Cl(o.model.hidden / lay.tp),
        heads(o.model.heads / lay.tp),
        Vl(padded_vocab(o.model.vocab, lay.tp) / lay.tp),
        v0(tp_rank_ * Vl),
        Vreal(std::clamp(o.model.vocab - v0, 0, Vl)),
        R(o.micro_batch * o.model.seq),
        Rs(o.sp && lay.tp > 1 ? R / lay.tp : R),
        Rh(o.logit_rows > 0 ? std::min(o.logit_rows, R) : R),
        sp(o.sp && lay.tp > 1),
        stage_layers(layers),
        recompute_block(o.recompute == Recompute::full ? std::clamp(o.recompute_every, 1, std::max(1, layers)) : 1),
        first(pp_rank == 0),
        last(pp_rank == lay.pp - 1),
        slots(micro_batches_in_flight(o, lay, pp_rank)) {}

  // Layer l ends its block: its output is kept per micro-batch (the next block's input, or the
  // stage's output), and its backward, the block's first, reruns the block's forward.
  bool block_end(int l) const { return l % recompute_block == recompute_block - 1 || l == stage_layers - 1; }
  int block_start(int l) const { return l - l % recompute_block; }
  int blocks() const { return (stage_layers + recompute_block - 1) / recompute_block; }

  // GPipe keeps all m micro-batches of the step, 1F1B at most p − s (Narayanan et al. 2021 §2.2);
  // without a pipeline each micro-batch's backward follows its forward.
  static int micro_batches_in_flight(const TrainOptions& o, const ParallelLayout& lay, int stage) {
    if (lay.pp == 1) return 1;
    return o.schedule == PipeSchedule::gpipe ? o.grad_accum : std::min(o.grad_accum, lay.pp - stage);
  }
};

}  // namespace gcb::models
