// The parameters one rank holds: the units of its pipeline stage (a contiguous block of layers,
// plus the embedding unit on the first and the last stage, which share the tied wte), each cut to
// the rank's tensor-parallel share (Shoeybi et al. 2019 §3) and padded to a multiple of dp for
// ZeRO (ShardSpec). Pieces map every local element back to the canonical layout
// (param_layout.hpp), which is how parameters are initialised, loaded and reassembled.
//
// Tensor parallelism per layer (t ranks, rank r, C_l = C/t): column-parallel QKV [3C_l, C] (this
// rank's heads of q, k and v) and fc [4C_l, C]; row-parallel attention projection [C, C_l] and
// fc projection [C, 4C_l]; vocabulary-parallel wte rows [r·V_p/t, (r+1)·V_p/t) of the padded
// vocabulary (config.hpp padded_vocab; rows ≥ V are zero padding). Local units hold the
// tp-sharded tensors first, then a "sync" tail of replicated tensors whose gradients are partial
// under sequence parallelism (LayerNorms, the row-parallel biases) and are all-reduced over tp.
#pragma once

#include <cstddef>
#include <vector>

#include "models/model/param_layout.hpp"
#include "models/model/shard.hpp"
#include "models/model/train_options.hpp"

namespace gcb::models {

// Layers of pipeline stage s: a contiguous block, the first L mod p stages one more.
int stage_layers(int layers, int pp, int stage);
int stage_first_layer(int layers, int pp, int stage);

// A run of elements of the canonical unit stored contiguously in the local unit. replicated: the
// same values exist on every tp rank (written once when reassembling).
struct Piece {
  size_t canonical, local, len;
  bool replicated;
};

// Element offsets inside a local unit.
struct LocalEmbed {
  size_t wte, wpe, lnfw, lnfb, sync_begin, size;
};
struct LocalLayer {
  size_t qkvw, qkvb, projw, fcw, fcb, fcprojw, ln1w, ln1b, projb, ln2w, ln2b, fcprojb, sync_begin, size;
};

struct LocalUnit {
  int unit = 0;  // canonical unit index (0 = embedding, 1 + l = layer l)
  std::vector<Piece> pieces;
  size_t size = 0, sync_begin = 0;
  ShardSpec spec;                       // over dp
  size_t offset = 0, shard_offset = 0;  // in the rank's padded flat buffers and in its shards
};

// A run of a local unit's elements and whether weight decay applies to them.
struct DecaySegment {
  size_t begin = 0, len = 0;
  bool decay = false;
  bool operator==(const DecaySegment&) const = default;
};

class RankUnits {
 public:
  RankUnits(const GptConfig& c, const ParallelLayout& layout, int tp_rank, int pp_rank);
  const ParamLayout& canonical() const { return canonical_; }
  const LocalEmbed& embed() const { return embed_; }
  const LocalLayer& layer() const { return layer_; }
  const std::vector<LocalUnit>& units() const { return units_; }
  size_t count() const { return units_.size(); }
  // The embedding unit lives on the first and the last stage, as local unit 0.
  bool has_embedding() const { return has_embedding_; }
  // Local unit of the stage's l-th layer.
  size_t layer_unit(int l) const { return static_cast<size_t>(l) + (has_embedding_ ? 1 : 0); }
  int stage_layers() const { return stage_layers_; }
  int first_layer() const { return first_layer_; }
  // Elements [begin, end) of local unit u (padding included) cut into maximal runs that decay or do
  // not: the optimizer's parameter groups as nanoGPT (karpathy/nanoGPT model.py configure_optimizers:
  // tensors of ≥ 2 dimensions decay — wte, wpe and the four linear weights —, biases and LayerNorm
  // parameters do not) and Megatron-LM (megatron/core/optimizer/__init__.py: no decay for biases
  // and 1-D parameters) configure them. Padding (zero, with a zero gradient) counts as not decaying.
  // A ZeRO shard [begin, end) crosses tensor boundaries, hence the runs.
  // groups = false: one decaying run (weight decay on every tensor).
  std::vector<DecaySegment> decay_segments(const LocalUnit& u, size_t begin, size_t end, bool groups) const;
  size_t padded_total() const { return padded_total_; }  // Ψ of this rank, each unit padded to dp
  size_t shard_total() const { return shard_total_; }    // Ψ / dp

 private:
  ParamLayout canonical_;
  LocalEmbed embed_{};
  LocalLayer layer_{};
  std::vector<LocalUnit> units_;
  bool has_embedding_ = false;
  int stage_layers_ = 0, first_layer_ = 0;
  size_t padded_total_ = 0, shard_total_ = 0;
};

}  // namespace gcb::models
