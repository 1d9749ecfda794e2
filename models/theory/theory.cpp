// step_theory (theory.hpp) and its parts: FLOPs per token, ZeRO state bytes, activation bytes, communication bytes per
// kind, ring wire bytes and the pipeline bubble, from the options alone.
#include "models/theory/theory.hpp"

#include <algorithm>

#include "collectives/coll_op.hpp"
#include "models/model/rank_shape.hpp"
#include "models/model/rank_units.hpp"

namespace gcb::models {
namespace {

size_t zu(int v) { return static_cast<size_t>(v); }

}  // namespace

PaddedUnits padded_units(const GptConfig& c, const ParallelLayout& lay) {
  const size_t C = zu(c.hidden), t = zu(lay.tp), d = zu(lay.dp);
  auto pad = [d](size_t n) { return (n + d - 1) / d * d; };
  return {pad((12 * C * C + 7 * C) / t + 6 * C),
          pad(zu(padded_vocab(c.vocab, lay.tp)) * C / t + zu(c.seq) * C + 2 * C)};
}

double model_flops_per_token(const GptConfig& c, FlopsConvention conv) {
  const double N = static_cast<double>(param_count(c));
  const double lct = static_cast<double>(c.layers) * c.hidden * c.seq;
  return 6.0 * N + (conv == FlopsConvention::causal ? 6.0 : 12.0) * lct;
}

double hardware_flops_per_token(const GptConfig& c, FlopsConvention conv, Recompute r) {
  const double lct = static_cast<double>(c.layers) * c.hidden * c.seq;
  // Forward of the attention core (QKᵀ and AV) per token: 2·2·L·C·T full, half of it causal.
  const double attn_fwd = (conv == FlopsConvention::causal ? 2.0 : 4.0) * lct;
  double extra = 0.0;
  if (r == Recompute::selective) extra = attn_fwd;
  if (r == Recompute::full) {
    extra = 2.0 * static_cast<double>(c.layers) * static_cast<double>(layer_param_count(c)) + attn_fwd;
  }
  return model_flops_per_token(c, conv) + extra;
}

StateBytes zero_state_bytes(ZeroStage z, size_t psi, int dp, const PrecisionPolicy& p, Offload off) {
  const size_t shard = psi / zu(dp);
  StateBytes b;
  b.params = (z == ZeroStage::three ? shard : psi) * dtype_size(p.params);
  b.grads = (z >= ZeroStage::two ? shard : psi) * dtype_size(p.grads);
  if (offloads_optimizer(off)) return b;
  const size_t optimizer = (z >= ZeroStage::one ? shard : psi) * sizeof(float);
  b.master = p.master_weights ? optimizer : 0;
  b.adam_m = b.adam_v = optimizer;
  return b;
}

StateBytes host_state_bytes(ZeroStage z, size_t psi, int dp, const PrecisionPolicy& p, Offload off) {
  StateBytes b;
  if (!offloads_optimizer(off)) return b;
  const size_t n = z >= ZeroStage::one ? psi / zu(dp) : psi;  // the elements this rank updates
  b.master = b.adam_m = b.adam_v = n * sizeof(float);
  b.grads = n * dtype_size(p.grads);
  b.params = p.master_weights ? n * dtype_size(p.params) : 0;
  return b;
}

OffloadBytes offload_bytes(ZeroStage z, size_t psi, int dp, const PrecisionPolicy& p, Offload off) {
  if (!offloads_optimizer(off)) return {};
  const size_t n = z >= ZeroStage::one ? psi / zu(dp) : psi;
  return {n * dtype_size(p.grads), n * dtype_size(p.params)};
}

size_t stage_padded_params(const GptConfig& c, const ParallelLayout& lay, int stage) {
  const PaddedUnits u = padded_units(c, lay);
  const bool ends = stage == 0 || stage == lay.pp - 1;
  return zu(stage_layers(c.layers, lay.pp, stage)) * u.layer + (ends ? u.embed : 0);
}

namespace {

// One rank's activation bytes of `stage` (activations.hpp), device and host (--offload activations).
struct ActivationSplit {
  size_t device = 0, host = 0;
};

ActivationSplit activation_split(const TrainOptions& o, const ParallelLayout& lay, int stage) {
  const RankShape s(o, lay, 0, stage, stage_layers(o.model.layers, lay.pp, stage));
  const size_t A = dtype_size(precision_policy(o.precision).activations), F = sizeof(float);
  const size_t R = zu(s.R), Rs = zu(s.Rs), C = zu(s.C), Cl = zu(s.Cl), Ls = zu(s.stage_layers);
  // One layer, everything kept: ln1, res2, ln2, res3 (Rs·C each), qkv 3, attention output 1,
  // fc and its GELU 4 + 4 (R·C_l each); LayerNorm means and rstds (4·Rs) and the attention
  // log-sum-exps (R·NH_l) in fp32.
  const size_t layer_all = A * (4 * Rs * C + 12 * R * Cl) + F * (4 * Rs + R * zu(s.heads));
  const size_t core = A * R * Cl + F * R * zu(s.heads);  // attention output and lse (selective)
  const size_t output = A * Rs * C;                      // res3: the next layer's input
  size_t per_slot = 2 * A * Rs * C, shared = 0;          // stage input, output gradient
  // What a slot keeps per layer (X, with its output y), and how many layers keep it: every layer
  // without full recomputation; under full recomputation in blocks of K layers (Chen et al. 2016
  // §3–4) only the ⌈L_s/K⌉ block outputs, with one shared working set of K layers for a block's
  // rerun forward, whose outputs inside the block (K − 1) are shared too: O(L_s/K + K) layers.
  size_t kept = 0, keeping = 0;
  switch (o.recompute) {
    case Recompute::none:
      kept = layer_all;
      keeping = Ls;
      break;
    case Recompute::selective:
      kept = layer_all - core;
      keeping = Ls;
      shared += core;
      break;
    case Recompute::full: {
      const size_t K = zu(s.recompute_block);
      kept = output;
      keeping = zu(s.blocks());
      shared += K * (layer_all - output) + (K - 1) * output;
      break;
    }
  }
  ActivationSplit split;
  if (offloads_activations(o.offload)) {
    // The stage output (the last layer's y) stays on the device per slot; every other kept set is
    // on the host per slot, and the device has two working sets, alternating over the keeping
    // layers — fewer when fewer layers keep something on the host (the last layer's set lacks y).
    per_slot += output;
    const size_t swapped = keeping * kept - output;  // per slot, on the host
    split.host = zu(s.slots) * swapped;
    const size_t sets = std::min<size_t>(keeping, 2);
    if (o.recompute == Recompute::full) {
      shared += std::min<size_t>(keeping - 1, 2) * output;  // the block outputs below the top one
    } else {
      shared += sets * kept - (keeping <= 2 ? output : 0);
    }
  } else {
    per_slot += keeping * kept;
  }
  // Layer scratch: dC (Rs·C), dC_l, d4C_l, dqkv_l (8·R·C_l); the row-parallel partial output (R·C,
  // tp > 1); under SP the gathered gradient and the two re-gathered LayerNorm outputs (3·R·C).
  shared += A * (Rs * C + 8 * R * Cl + (s.tp > 1 ? R * C : 0) + (s.sp ? 3 * R * C : 0));
  if (s.last) {
    // Head: lnf and dlnf (Rs·C each), the gathered lnf (SP), logits Rh·V/t (Rh = R unless the head
    // is chunked; their gradient in place); lnf statistics (2·Rs), losses, row maxima, {Σexp,
    // target logit} (4·R).
    shared += A * (2 * Rs * C + (s.sp ? R * C : 0) + zu(s.Rh) * zu(s.Vl)) + F * (2 * Rs + 4 * R);
  }
  split.device = zu(s.slots) * per_slot + shared;
  return split;
}

}  // namespace

size_t activation_bytes(const TrainOptions& o, const ParallelLayout& lay, int stage) {
  return activation_split(o, lay, stage).device;
}

size_t host_activation_bytes(const TrainOptions& o, const ParallelLayout& lay, int stage) {
  return activation_split(o, lay, stage).host;
}

OffloadBytes activation_offload_bytes(const TrainOptions& o, const ParallelLayout& lay, int stage) {
  if (!offloads_activations(o.offload)) return {};
  // Each micro-batch's host sets go out once after forward and come back once before backward.
  const size_t per_micro_batch =
      host_activation_bytes(o, lay, stage) / zu(RankShape::micro_batches_in_flight(o, lay, stage));
  const size_t b = zu(o.grad_accum) * per_micro_batch;
  return {b, b};
}

std::array<int64_t, kCommKinds> comm_bytes(const TrainOptions& o, const ParallelLayout& lay, int stage) {
  std::array<int64_t, kCommKinds> th{};
  auto at = [&th](CommKind k) -> int64_t& { return th[static_cast<size_t>(k)]; };
  const GptConfig& c = o.model;
  const PrecisionPolicy p = precision_policy(o.precision);
  const auto A = static_cast<int64_t>(dtype_size(p.activations)), G = static_cast<int64_t>(dtype_size(p.grads));
  const auto P = static_cast<int64_t>(dtype_size(p.params)), F = static_cast<int64_t>(sizeof(float));
  const bool sp = o.sp && lay.tp > 1, first = stage == 0, last = stage == lay.pp - 1;
  const int64_t t = lay.tp, R = static_cast<int64_t>(o.micro_batch) * c.seq, C = c.hidden;
  const int64_t Rs = sp ? R / t : R, m = o.grad_accum;
  const int64_t Ls = stage_layers(c.layers, lay.pp, stage), RC = R * C;
  const int64_t redo = o.recompute == Recompute::full ? 2 * Ls * RC : 0;  // rerun forward (any block size)
  if (t > 1 && !sp) {
    // Megatron: 2 all-reduces per layer forward (g), 2 backward (f) = 4·b·s·h per layer; the
    // embedding's and the head's reductions; the loss statistics (row maxima, {Σexp, target}).
    at(CommKind::tp_all_reduce) =
        m * (A * (4 * Ls * RC + redo + (first ? RC : 0) + (last ? RC : 0)) + (last ? F * 3 * R : 0));
  } else if (t > 1) {
    // Korthikanti SP: each all-reduce becomes all-gather + reduce-scatter; backward also
    // re-gathers the two LayerNorm outputs (not kept), so all-gather 6·RC, reduce-scatter 4·RC.
    at(CommKind::tp_all_gather) = m * A * (6 * Ls * RC + redo + (first ? RC : 0) + (last ? RC : 0));
    at(CommKind::tp_reduce_scatter) = m * A * (4 * Ls * RC + redo + (first ? RC : 0) + (last ? RC : 0));
    // Loss statistics, plus once per step the partial LayerNorm / row-parallel bias gradients.
    at(CommKind::tp_all_reduce) = m * (last ? F * 3 * R : 0) + G * (Ls * 6 * C + (first || last ? 2 * C : 0));
  }
  if (lay.pp > 1) {
    // b·s·h (b·s·h/t under SP) per stage boundary per micro-batch, each direction.
    const int64_t n = m * A * Rs * C * ((first ? 0 : 1) + (last ? 0 : 1));
    at(CommKind::pp_send) = n;
    at(CommKind::pp_recv) = n;
    if (first || last) at(CommKind::pp_embed) = G * (padded_vocab(c.vocab, lay.tp) * C / t + c.seq * C + 2 * C);
  }
  if (lay.dp > 1) {
    // Each unit's gradient is reduced once per step, summed over the m micro-batches
    // (model_states.hpp): all-reduce Ψ (zero 0), reduce-scatter Ψ (1–3); updated parameters are
    // all-gathered once (zero 1 and 2). ZeRO-3 all-gathers each unit before every use (ZeRO paper
    // §7.2.2): per micro-batch each layer for forward and again for backward, the embedding unit
    // once at each end where it is used (first stage: embedding forward, last: the head's forward
    // and backward together), so 2·m·Ψ at pp = 1; the embedding backward needs no parameters.
    const auto psi = static_cast<int64_t>(stage_padded_params(c, lay, stage));
    switch (o.zero) {
      case ZeroStage::none: at(CommKind::all_reduce) = G * psi; break;
      case ZeroStage::one:
      case ZeroStage::two:
        at(CommKind::reduce_scatter) = G * psi;
        at(CommKind::all_gather) = P * psi;
        break;
      case ZeroStage::three: {
        const PaddedUnits u = padded_units(c, lay);
        const auto layer = static_cast<int64_t>(u.layer), embed = static_cast<int64_t>(u.embed);
        at(CommKind::reduce_scatter) = G * psi;
        // Full recomputation in blocks of K: each block's rerun forward gathers its layers but
        // the last (whose backward follows at once) again, L_s − ⌈L_s/K⌉ more per micro-batch.
        const RankShape s(o, lay, 0, stage, static_cast<int>(Ls));
        const int64_t regather = o.recompute == Recompute::full ? Ls - s.blocks() : 0;
        at(CommKind::all_gather) = P * m * ((2 * Ls + regather) * layer + ((first ? 1 : 0) + (last ? 1 : 0)) * embed);
        break;
      }
    }
  }
  // The step's loss (fp64) over dp, then over the pipeline.
  at(CommKind::loss_all_reduce) = static_cast<int64_t>(sizeof(double)) * ((lay.dp > 1 ? 1 : 0) + (lay.pp > 1 ? 1 : 0));
  // Gradient clipping: the squared norm (fp64) over dp, tp and pp (engine.cpp).
  if (o.optim.grad_clip > 0.0) {
    at(CommKind::grad_norm_all_reduce) =
        static_cast<int64_t>(sizeof(double)) * ((lay.dp > 1 ? 1 : 0) + (lay.tp > 1 ? 1 : 0) + (lay.pp > 1 ? 1 : 0));
  }
  return th;
}

double ring_wire_bytes(CommKind kind, double bytes, int n) {
  if (n <= 1) return 0.0;
  const bool all_reduce = kind == CommKind::all_reduce || kind == CommKind::loss_all_reduce ||
                          kind == CommKind::tp_all_reduce || kind == CommKind::grad_norm_all_reduce;
  // nccl-tests' bus factor, defined once (collectives/coll_op.hpp): bytes on the wire per rank.
  return busbw_factor(all_reduce ? CollOp::all_reduce : CollOp::all_gather, n) * bytes;
}

double bubble_fraction(int pp, int micro_batches) {
  return pp > 1 ? static_cast<double>(pp - 1) / (micro_batches + pp - 1) : 0.0;
}

double interleaved_bubble_fraction(int pp, int micro_batches, int virtual_stages) {
  if (pp <= 1) return 0.0;
  return static_cast<double>(pp - 1) / (static_cast<double>(virtual_stages) * micro_batches + pp - 1);
}

double narayanan_flops_per_iteration(const GptConfig& c, int64_t batch, bool full_recompute) {
  const double B = static_cast<double>(batch), s = c.seq, l = c.layers, h = c.hidden, V = c.vocab;
  if (full_recompute) return 96.0 * B * s * l * h * h * (1.0 + s / (6.0 * h) + V / (16.0 * l * h));
  return 72.0 * B * s * l * h * h * (1.0 + s / (6.0 * h) + V / (12.0 * l * h));
}

size_t materialized_attention_bytes(const TrainOptions& o, const ParallelLayout& lay, bool dropout) {
  const size_t A = dtype_size(precision_policy(o.precision).activations);
  const size_t heads = zu(o.model.heads / lay.tp), T = zu(o.model.seq), B = zu(o.micro_batch);
  return (dropout ? 2 * A + 1 : A) * heads * T * T * B;
}

StepTheory step_theory(const TrainOptions& o, const ParallelLayout& lay) {
  StepTheory th;
  th.tokens_per_step = static_cast<int64_t>(lay.dp) * o.grad_accum * o.micro_batch * o.model.seq;
  th.flops_per_token_causal = model_flops_per_token(o.model, FlopsConvention::causal);
  th.flops_per_token_palm = model_flops_per_token(o.model, FlopsConvention::palm);
  th.hardware_flops_per_token = hardware_flops_per_token(o.model, FlopsConvention::causal, o.recompute);
  th.bubble = bubble_fraction(lay.pp, o.grad_accum);
  const PrecisionPolicy policy = precision_policy(o.precision);
  for (int s = 0; s < lay.pp; ++s) {
    StageTheory st;
    st.stage = s;
    st.padded_params = stage_padded_params(o.model, lay, s);
    st.states = zero_state_bytes(o.zero, st.padded_params, lay.dp, policy, o.offload);
    st.host_states = host_state_bytes(o.zero, st.padded_params, lay.dp, policy, o.offload);
    st.offload = offload_bytes(o.zero, st.padded_params, lay.dp, policy, o.offload);
    st.activation_bytes = activation_bytes(o, lay, s);
    st.host_activation_bytes = host_activation_bytes(o, lay, s);
    st.offload += activation_offload_bytes(o, lay, s);
    st.comm_bytes = comm_bytes(o, lay, s);
    th.stages.push_back(st);
  }
  return th;
}

}  // namespace gcb::models
