// stage_memory (memory_model.hpp): a pipeline stage's memory per category — theory.hpp's model states and activations,
// plus an unfused attention's probabilities and the in-flight buffers the options add.
#include "models/planner/memory_model.hpp"

#include <algorithm>

#include "models/model/rank_shape.hpp"
#include "models/model/rank_units.hpp"
#include "models/theory/theory.hpp"

namespace gcb::models::planner {

double StageMemory::total() const {
  double t = 0;
  for (size_t k = 0; k < kMemCategories; ++k)
    t += static_cast<MemCategory>(k) == MemCategory::workspace ? workspace_steady : peak[k];
  return t;
}

StageMemory stage_memory(const TrainOptions& o, const ParallelLayout& lay, int stage, const MemoryOptions& m) {
  StageMemory mem;
  mem.stage = stage;
  auto set = [&mem](MemCategory c, double v) { mem.peak[static_cast<size_t>(c)] = v; };
  const PrecisionPolicy p = precision_policy(o.precision);
  const double G = static_cast<double>(dtype_size(p.grads)), P = static_cast<double>(dtype_size(p.params));
  const int layers = stage_layers(o.model.layers, lay.pp, stage);
  const RankShape s(o, lay, 0, stage, layers);
  const bool has_embed = s.first || s.last;
  const size_t psi = stage_padded_params(o.model, lay, stage);
  const StateBytes states = zero_state_bytes(o.zero, psi, lay.dp, p, o.offload);
  mem.host = static_cast<double>(host_state_bytes(o.zero, psi, lay.dp, p, o.offload).total() +
                                 host_activation_bytes(o, lay, stage));
  const PaddedUnits u = padded_units(o.model, lay);
  const double largest_unit = static_cast<double>(has_embed ? std::max(u.layer, u.embed) : u.layer);

  // ZeRO-3 gathers one unit at a time into a parameter buffer (model_states.cpp acquire/release).
  set(MemCategory::params, static_cast<double>(states.params) + (o.zero == ZeroStage::three ? P * largest_unit : 0.0));
  // ZeRO-2/3: a unit's full gradient is a bucket from its first backward until it is reduced once
  // complete for the step. With several micro-batches (or overlapped reductions, freed only when
  // waited for) every bucket of the stage is alive at the last micro-batch; with one, a layer's
  // bucket dies right after its backward, while the embedding's lives from the head's backward (last
  // stage) to the end of the schedule.
  double buckets = 0;
  if (o.zero >= ZeroStage::two && lay.dp > 1) {
    if (o.grad_accum > 1 || o.overlap_comm) {
      buckets = static_cast<double>(psi);
    } else if (s.last) {
      buckets = static_cast<double>(u.embed) + (layers > 0 ? static_cast<double>(u.layer) : 0.0);
    } else {
      buckets = s.first ? largest_unit : static_cast<double>(u.layer);
    }
  }
  set(MemCategory::grads, static_cast<double>(states.grads) + G * buckets);
  set(MemCategory::master, static_cast<double>(states.master));
  set(MemCategory::adam_m, static_cast<double>(states.adam_m));
  set(MemCategory::adam_v, static_cast<double>(states.adam_v));

  double acts = static_cast<double>(activation_bytes(o, lay, stage));
  if (!m.attention.flash) {
    const double per_layer = static_cast<double>(materialized_attention_bytes(o, lay, m.attention.dropout));
    if (o.recompute == Recompute::none) acts += per_layer * layers * s.slots;
    if (o.recompute == Recompute::full) acts += per_layer * s.recompute_block;  // one block's working set
  }
  // Interleaved 1F1B: the first stage keeps (1 + (p − 1)/(p·v)) times the activations of the
  // non-interleaved schedule (Korthikanti et al. 2022 §4.2.3; Narayanan et al. 2021 §2.2.2).
  if (m.virtual_stages > 1 && lay.pp > 1) acts *= 1.0 + (lay.pp - 1.0) / (lay.pp * m.virtual_stages);
  set(MemCategory::activations, acts);

  // The tied embedding's gradient from the other end of the pipeline (engine.cpp reduce_unit), of
  // the padded vocabulary (config.hpp padded_vocab).
  const double embed_unit = static_cast<double>(padded_vocab(o.model.vocab, lay.tp)) * o.model.hidden / lay.tp +
                            static_cast<double>(o.model.seq) * o.model.hidden + 2.0 * o.model.hidden;
  set(MemCategory::comm, lay.pp > 1 && has_embed ? G * embed_unit : 0.0);
  // Token ids per micro-batch in flight (first stage), targets (last), the fp64 loss and the fp64
  // squared gradient norm (clipping); before them, initialisation filled one padded unit in fp32 at
  // a time.
  const double R = s.R;
  mem.workspace_steady = (s.first ? 4.0 * R * s.slots : 0.0) + (s.last ? 4.0 * R : 0.0) + 8.0 + 8.0;
  set(MemCategory::workspace, std::max(mem.workspace_steady, 4.0 * largest_unit));
  return mem;
}

}  // namespace gcb::models::planner
