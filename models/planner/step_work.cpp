// stage_work (step_work.hpp): a stage's GEMM shapes, attention calls, element-wise calls and collectives per
// micro-batch and per step, as the engine runs them; step_comm_bytes sums one kind's bytes per step.
#include "models/planner/step_work.hpp"

#include "models/model/rank_shape.hpp"
#include "models/model/rank_units.hpp"
#include "models/theory/theory.hpp"

namespace gcb::models::planner {
namespace {

void add_gemm(PassWork& w, GemmShape s, double count) {
  for (GemmCall& g : w.gemm)
    if (g.shape == s) {
      g.count += count;
      return;
    }
  w.gemm.push_back({s, count});
}

// The backward of D[m,n] = X[m,k]·W[k,n]: dX[m,k] = dD·Wᵀ and dW[k,n] = Xᵀ·dD.
void add_backward_of(PassWork& w, GemmShape f, double count) {
  add_gemm(w, {f.m, f.k, f.n}, count);
  add_gemm(w, {f.k, f.n, f.m}, count);
}

void add_comm(std::vector<CommCall>& v, CommKind k, double bytes, double calls, bool embedding_unit = false) {
  if (calls > 0 && bytes > 0) v.push_back({k, bytes, calls, embedding_unit});
}

}  // namespace

double PassWork::flops() const {
  double f = 0;
  for (const GemmCall& g : gemm)
    f += g.count * 2.0 * static_cast<double>(g.shape.m) * static_cast<double>(g.shape.n) *
         static_cast<double>(g.shape.k);
  for (const AttnCall& a : attn) f += a.count * a.shape.flops();
  return f;
}

StageWork stage_work(const TrainOptions& o, const ParallelLayout& lay, int stage, const AttentionCostModel& attention) {
  StageWork w;
  w.stage = stage;
  w.layers = stage_layers(o.model.layers, lay.pp, stage);
  const RankShape s(o, lay, 0, stage, w.layers);
  w.first = s.first;
  w.last = s.last;
  const PrecisionPolicy p = precision_policy(o.precision);
  const double A = static_cast<double>(dtype_size(p.activations)), G = static_cast<double>(dtype_size(p.grads));
  const double P = static_cast<double>(dtype_size(p.params)), F = 4.0;
  const double L = w.layers, R = s.R, Rs = s.Rs, C = s.C, Cl = s.Cl, Vl = s.Vl;
  const int64_t r = s.R, c = s.C, cl = s.Cl;
  const bool full = o.recompute == Recompute::full, selective = o.recompute == Recompute::selective;

  // Layer GEMMs (Shoeybi et al. 2019 §3: qkv and fc column-parallel, the projections row-parallel).
  const GemmShape layer_gemms[] = {{r, 3 * cl, c}, {r, c, cl}, {r, 4 * cl, c}, {r, c, 4 * cl}};
  const AttnShapeCall attn_fwd{s.B, s.heads, s.T, o.model.head_dim(), true, false};
  AttnShapeCall attn_bwd = attn_fwd;
  attn_bwd.backward = true;
  for (const GemmShape& g : layer_gemms) {
    add_gemm(w.forward, g, L);
    add_backward_of(w.backward, g, L);
    if (full) add_gemm(w.recompute, g, L);
  }
  w.forward.attn.push_back({attn_fwd, L});
  w.backward.attn.push_back({attn_bwd, L});
  if (full || selective) w.recompute.attn.push_back({attn_fwd, L});
  if (!attention.flash) {
    const double scores = static_cast<double>(s.B) * s.heads * static_cast<double>(s.T) * s.T;
    const double attn_ew = scores * (attention.dropout ? 6.0 * A + 1.0 : 4.0 * A);
    add_ew(w.forward.elementwise, EwOp::attention_scores, scores, attn_ew, L);
    add_ew(w.backward.elementwise, EwOp::attention_scores, scores, 2.0 * attn_ew, L);
    if (full || selective) add_ew(w.recompute.elementwise, EwOp::attention_scores, scores, attn_ew, L);
  }
  // A layer's element-wise ops (gpt_layers.cpp layer_forward / layer_backward). LayerNorm reads x
  // and writes y, its statistics in fp32 (8 B per row) and reads w, b; its backward reads dy and
  // x and accumulates into dx (read + write). A bias loop reads and writes its GEMM's output; a
  // bias gradient reads dY. GELU reads x and writes y; its backward reads x and dy, writes dx.
  const double ln_f = 2.0 * A * Rs * C + 8.0 * Rs + 2.0 * P * C,
               ln_b = 4.0 * A * Rs * C + 8.0 * Rs + 2.0 * (P + 2.0 * G) * C;
  const auto layer_forward_ops = [&](std::vector<EwCall>& v) {
    add_ew(v, EwOp::layernorm_forward, Rs * C, ln_f, 2.0 * L);
    add_ew(v, EwOp::bias_forward, R * 3.0 * Cl, 2.0 * A * R * 3.0 * Cl + P * 3.0 * Cl, L);  // qkv
    add_ew(v, EwOp::bias_forward, R * C, 2.0 * A * R * C + P * C, 2.0 * L);                 // proj, fcproj (rank 0)
    add_ew(v, EwOp::bias_forward, R * 4.0 * Cl, 2.0 * A * R * 4.0 * Cl + P * 4.0 * Cl, L);  // fc
    add_ew(v, EwOp::residual_add, Rs * C, 3.0 * A * Rs * C, 2.0 * L);
    add_ew(v, EwOp::gelu_forward, R * 4.0 * Cl, 2.0 * A * R * 4.0 * Cl, L);
  };
  layer_forward_ops(w.forward.elementwise);
  if (full) layer_forward_ops(w.recompute.elementwise);
  add_ew(w.backward.elementwise, EwOp::gelu_backward, R * 4.0 * Cl, 3.0 * A * R * 4.0 * Cl, L);
  add_ew(w.backward.elementwise, EwOp::bias_backward, Rs * C, A * Rs * C + 2.0 * G * C, 2.0 * L);  // fcproj, proj
  add_ew(w.backward.elementwise, EwOp::bias_backward, R * 4.0 * Cl, A * R * 4.0 * Cl + 2.0 * G * 4.0 * Cl, L);
  add_ew(w.backward.elementwise, EwOp::bias_backward, R * 3.0 * Cl, A * R * 3.0 * Cl + 2.0 * G * 3.0 * Cl, L);
  add_ew(w.backward.elementwise, EwOp::layernorm_backward, Rs * C, ln_b, 2.0 * L);
  if (s.first) {
    // Embedding: wte and wpe rows read, their sum written; backward reads dy and accumulates into
    // the wte and wpe gradient rows (read + write).
    add_ew(w.forward.elementwise, EwOp::embedding_forward, R * C, 3.0 * A * R * C, 1);
    add_ew(w.backward.elementwise, EwOp::embedding_backward, R * C, (A + 4.0 * G) * R * C, 1);
  }
  if (s.last) {
    // Head (GptLayers::head): final LayerNorm; cross-entropy reads the logits three times (max,
    // Σexp, finish) and writes the probabilities over them; backward reads and writes them once
    // more; the input gradient is zeroed, then the LayerNorm backward.
    const GemmShape logits{r, s.Vl, c};
    add_gemm(w.forward, logits, 1);
    add_backward_of(w.backward, logits, 1);
    add_ew(w.forward.elementwise, EwOp::layernorm_forward, Rs * C, ln_f, 1);
    add_ew(w.forward.elementwise, EwOp::cross_entropy_forward, R * Vl, 4.0 * A * R * Vl, 1);
    add_ew(w.backward.elementwise, EwOp::cross_entropy_backward, R * Vl, 2.0 * A * R * Vl, 1);
    add_ew(w.backward.elementwise, EwOp::fill, Rs * C, A * Rs * C, 1);
    add_ew(w.backward.elementwise, EwOp::layernorm_backward, Rs * C, ln_b, 1);
  }

  // Communication, as theory.hpp's comm_bytes counts it, call by call.
  const double RC = A * R * C, ends = (s.first ? 1 : 0) + (s.last ? 1 : 0), redo = full ? 2.0 * L : 0.0;
  if (lay.tp > 1) {
    if (!s.sp) {
      add_comm(w.per_micro_batch, CommKind::tp_all_reduce, RC, 4.0 * L + redo + ends);
    } else {
      add_comm(w.per_micro_batch, CommKind::tp_all_gather, RC, 6.0 * L + redo + ends);
      add_comm(w.per_micro_batch, CommKind::tp_reduce_scatter, RC, 4.0 * L + redo + ends);
      add_comm(w.per_step, CommKind::tp_all_reduce, G * 6.0 * C, L);  // LayerNorm / bias sync tails
      if (s.first || s.last) add_comm(w.per_step, CommKind::tp_all_reduce, G * 2.0 * C, 1);
    }
    if (s.last) {  // loss statistics: row maxima, then {Σexp, target logit}
      add_comm(w.per_micro_batch, CommKind::tp_all_reduce, F * R, 1);
      add_comm(w.per_micro_batch, CommKind::tp_all_reduce, F * 2.0 * R, 1);
    }
  }
  if (lay.pp > 1) {
    const double boundaries = (s.first ? 0 : 1) + (s.last ? 0 : 1);
    add_comm(w.per_micro_batch, CommKind::pp_send, A * Rs * C, boundaries);
    add_comm(w.per_micro_batch, CommKind::pp_recv, A * Rs * C, boundaries);
    if (s.first || s.last)
      add_comm(w.per_step, CommKind::pp_embed,
               G * (static_cast<double>(padded_vocab(o.model.vocab, lay.tp)) * C / lay.tp + o.model.seq * C + 2.0 * C),
               1);
  }
  const PaddedUnits u = padded_units(o.model, lay);
  const double layer_u = static_cast<double>(u.layer), embed_u = static_cast<double>(u.embed);
  const double units_embed = (s.first || s.last) ? 1 : 0;
  if (lay.dp > 1) {
    const CommKind grad_kind = o.zero == ZeroStage::none ? CommKind::all_reduce : CommKind::reduce_scatter;
    add_comm(w.per_step, grad_kind, G * layer_u, L);
    add_comm(w.per_step, grad_kind, G * embed_u, units_embed, true);
    if (o.zero == ZeroStage::one || o.zero == ZeroStage::two) {
      add_comm(w.per_step, CommKind::all_gather, P * layer_u, L);
      add_comm(w.per_step, CommKind::all_gather, P * embed_u, units_embed, true);
    }
    if (o.zero == ZeroStage::three) {
      // Forward and backward, plus the layers of a recomputed block that its rerun forward gathers
      // again (theory.cpp comm_bytes).
      add_comm(w.per_micro_batch, CommKind::all_gather, P * layer_u, 2.0 * L + (full ? L - s.blocks() : 0.0));
      add_comm(w.per_micro_batch, CommKind::all_gather, P * embed_u, ends, true);
    }
  }
  const double loss_calls = (lay.dp > 1 ? 1 : 0) + (lay.pp > 1 ? 1 : 0);
  add_comm(w.per_step, CommKind::loss_all_reduce, 8.0, loss_calls);
  if (o.optim.grad_clip > 0.0) {  // gradient clipping's squared norm over dp, tp and pp
    const double norm_calls = (lay.dp > 1 ? 1 : 0) + (lay.tp > 1 ? 1 : 0) + (lay.pp > 1 ? 1 : 0);
    add_comm(w.per_step, CommKind::grad_norm_all_reduce, 8.0, norm_calls);
  }

  // Optimizer (model_states.cpp): gradients zeroed (G per local element), then AdamW on the own
  // elements: read parameter, gradient, m, v (and master), write parameter, m, v (and master).
  const double psi = static_cast<double>(stage_padded_params(o.model, lay, stage));
  const double own = o.zero == ZeroStage::none ? psi : psi / lay.dp;
  const double grads_zeroed = o.zero >= ZeroStage::two ? psi / lay.dp : psi;
  const double master = p.master_weights ? 4.0 : 0.0;
  add_ew(w.optimizer, EwOp::fill, grads_zeroed, G * grads_zeroed, 1);
  if (offloads_optimizer(o.offload)) {
    w.offload_d2h = own * G;
    w.offload_h2d = own * P;
    w.host_adamw_bytes = own * (G + 3 * 4.0 + 3 * 4.0 + (p.master_weights ? P : 0.0));
  } else {
    add_ew(w.optimizer, EwOp::adamw, own, own * (P + G + 4.0 + 4.0 + master + P + 4.0 + 4.0 + master), 1);
  }
  // Gradient clipping: Σ g² over the own dp shard range at every stage (ModelStates::grad_square_sum).
  if (o.optim.grad_clip > 0.0) add_ew(w.optimizer, EwOp::grad_norm, psi / lay.dp, G * psi / lay.dp, 1);
  // --offload activations: the kept tensors out after forward and back before backward (theory.hpp).
  const OffloadBytes acts = activation_offload_bytes(o, lay, stage);
  w.swap_d2h = static_cast<double>(acts.d2h);
  w.swap_h2d = static_cast<double>(acts.h2d);
  return w;
}

double step_comm_bytes(const StageWork& w, CommKind k, int micro_batches) {
  double b = 0;
  for (const CommCall& c : w.per_micro_batch)
    if (c.kind == k) b += micro_batches * c.calls * c.bytes;
  for (const CommCall& c : w.per_step)
    if (c.kind == k) b += c.calls * c.bytes;
  return b;
}

double step_comm_calls(const StageWork& w, CommKind k, int micro_batches) {
  double n = 0;
  for (const CommCall& c : w.per_micro_batch)
    if (c.kind == k) n += micro_batches * c.calls;
  for (const CommCall& c : w.per_step)
    if (c.kind == k) n += c.calls;
  return n;
}

}  // namespace gcb::models::planner
