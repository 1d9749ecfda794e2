// One layout's prediction (predict.hpp): memory per category and the step time — each stage's passes priced by the
// compute and comm models under contention, the pipeline fill and drain, exposed dp communication, the optimizer.
#include "models/planner/predict.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <tuple>

#include "models/planner/step_work.hpp"
#include "models/model/rank_units.hpp"
#include "models/theory/theory.hpp"

namespace gcb::models::planner {
namespace {

Collective collective_of(CommKind k) {
  switch (k) {
    case CommKind::all_reduce:
    case CommKind::loss_all_reduce:
    case CommKind::grad_norm_all_reduce:
    case CommKind::tp_all_reduce: return Collective::all_reduce;
    case CommKind::reduce_scatter:
    case CommKind::tp_reduce_scatter: return Collective::reduce_scatter;
    case CommKind::all_gather:
    case CommKind::tp_all_gather: return Collective::all_gather;
    case CommKind::pp_send:
    case CommKind::pp_recv:
    case CommKind::pp_embed: return Collective::send_recv;
  }
  return Collective::all_reduce;
}

struct Groups {
  Tier tp, dp, pp;
};

// One stage, one micro-batch.
struct StageTime {
  double forward = 0, backward = 0, recompute = 0, tp = 0, pp = 0, zero3 = 0;
  double gemm = 0, attention = 0, elementwise = 0;  // the three passes by kind of work
  double backward_one_layer = 0;
  double total() const { return forward + backward + recompute + tp + pp + zero3; }
  // After the schedule.
  double dp_reduce = 0, dp_reduce_embed = 0, dp_gather = 0, other = 0, optimizer = 0, offload = 0;
};

double pass_seconds(const ComputeModel& cm, const PassWork& w, double contention, StageTime& by_kind) {
  const double ew = cm.elementwise_seconds(w.elementwise);
  double gemm = 0, attn = 0;
  for (const GemmCall& g : w.gemm) gemm += contention * g.count * cm.gemm_seconds(g.shape);
  for (const AttnCall& a : w.attn) attn += contention * a.count * cm.attention_seconds(a.shape);
  by_kind.gemm += gemm;
  by_kind.attention += attn;
  by_kind.elementwise += ew;
  return ew + gemm + attn;
}

StageTime stage_time(const PlanModel& pm, const TrainOptions& o, const ParallelLayout& lay, const Groups& g, int stage,
                     int v, double contention) {
  const StageWork w = stage_work(o, lay, stage, pm.attention);
  const ComputeModel& cm = pm.compute;
  const CommModel& comm = pm.comm;
  StageTime t;
  t.forward = pass_seconds(cm, w.forward, contention, t);
  t.backward = pass_seconds(cm, w.backward, contention, t);
  t.recompute = pass_seconds(cm, w.recompute, contention, t);
  t.backward_one_layer = w.layers > 0 ? (t.backward) / (w.layers + (w.last ? 1.0 : 0.0)) : 0.0;
  for (const CommCall& c : w.per_micro_batch) {
    const Collective op = collective_of(c.kind);
    switch (c.kind) {
      case CommKind::tp_all_reduce:
      case CommKind::tp_all_gather:
      case CommKind::tp_reduce_scatter: t.tp += c.calls * comm.seconds(op, c.bytes, lay.tp, g.tp); break;
      case CommKind::pp_send: {
        // A send and its partner's receive are one transfer; interleaving multiplies the messages.
        if (pm.pp_scatter_gather && lay.tp > 1 && !o.sp) {
          t.pp += v * c.calls *
                  (comm.seconds(Collective::send_recv, c.bytes / lay.tp, 2, g.pp) +
                   comm.seconds(Collective::all_gather, c.bytes, lay.tp, g.tp));
        } else {
          t.pp += v * c.calls * comm.seconds(Collective::send_recv, c.bytes, 2, g.pp);
        }
        break;
      }
      case CommKind::all_gather: t.zero3 += c.calls * comm.seconds(op, c.bytes, lay.dp, g.dp); break;
      default: break;
    }
  }
  for (const CommCall& c : w.per_step) {
    const Collective op = collective_of(c.kind);
    switch (c.kind) {
      case CommKind::all_reduce:
      case CommKind::reduce_scatter: {
        const double s = c.calls * comm.seconds(op, c.bytes, lay.dp, g.dp);
        // The embedding unit is reduced after the schedule, the layers as their backward ends.
        if (c.embedding_unit) {
          t.dp_reduce_embed += s;
        } else {
          t.dp_reduce += s;
        }
        break;
      }
      case CommKind::all_gather: t.dp_gather += c.calls * comm.seconds(op, c.bytes, lay.dp, g.dp); break;
      case CommKind::tp_all_reduce: t.other += c.calls * comm.seconds(op, c.bytes, lay.tp, g.tp); break;
      case CommKind::pp_embed: t.other += comm.seconds(Collective::send_recv, c.bytes, 2, g.pp); break;
      case CommKind::loss_all_reduce:
        if (lay.dp > 1) t.other += comm.seconds(op, c.bytes, lay.dp, g.dp);
        if (lay.pp > 1) t.other += comm.seconds(op, c.bytes, lay.pp, g.pp);
        break;
      case CommKind::grad_norm_all_reduce:
        if (lay.dp > 1) t.other += comm.seconds(op, c.bytes, lay.dp, g.dp);
        if (lay.tp > 1) t.other += comm.seconds(op, c.bytes, lay.tp, g.tp);
        if (lay.pp > 1) t.other += comm.seconds(op, c.bytes, lay.pp, g.pp);
        break;
      default: break;
    }
  }
  t.optimizer = cm.elementwise_seconds(w.optimizer);
  const Cluster& cl = pm.cluster;
  const auto at = [](double bytes, double rate) { return rate > 0 ? bytes / rate : 0.0; };
  // Optimizer offload (model_states.cpp offloaded_step): the gradients out, then per unit AdamW on
  // the host and the unit's copy back, pipelined: with n units of equal share, n·max + min of one
  // unit's AdamW and copy, i.e. max(A, H) + min(A, H)/n of the totals. Activation swaps are in
  // series with the compute (activations.hpp).
  const double adamw = at(w.host_adamw_bytes, cl.host_memory_bandwidth), back = at(w.offload_h2d, cl.h2d_bandwidth);
  const double units = w.layers + (w.first || w.last ? 1 : 0);
  t.offload = at(w.offload_d2h, cl.d2h_bandwidth) + std::max(adamw, back) + std::min(adamw, back) / units +
              at(w.swap_d2h, cl.d2h_bandwidth) + at(w.swap_h2d, cl.h2d_bandwidth);
  return t;
}

}  // namespace

double layout_contention(double kappa, int dp, int tp, int pp, int micro_batches) {
  const int ranks = dp * tp * pp, peers = dp * tp, m = std::max(1, micro_batches);
  if (ranks <= 1 || kappa == 1.0) return 1.0;
  double busy = 0;  // other ranks busy while a rank computes, averaged over the stages
  for (int s = 0; s < pp; ++s) {
    double others = peers - 1;
    for (int q = 0; q < pp; ++q)
      if (q != s) others += peers * std::max(0.0, static_cast<double>(m - std::abs(s - q))) / m;
    busy += others / pp;
  }
  return 1.0 + (kappa - 1.0) * busy / (ranks - 1);
}

std::string_view recompute_name(Recompute r) {
  return r == Recompute::none ? "none" : r == Recompute::selective ? "selective" : "full";
}

std::string Candidate::recompute_label() const {
  std::string s(recompute_name(recompute));
  if (recompute == Recompute::full && recompute_every > 1) s += fmt::format("-k{}", recompute_every);
  return s;
}

std::string_view offload_suffix(Offload o) {
  switch (o) {
    case Offload::none: return "";
    case Offload::optimizer: return "-offload";
    case Offload::activations: return "-swap";
    case Offload::optimizer_activations: return "-offload-swap";
  }
  return "";
}

std::string Candidate::name() const {
  std::string s = layout.name;
  if (virtual_stages > 1) s += fmt::format("-v{}", virtual_stages);
  return s + fmt::format("-mb{}-{}{}", micro_batch, recompute_label(), offload_suffix(offload));
}

Candidate make_candidate(LayoutSpec layout, int micro_batch, Recompute recompute, int virtual_stages, Offload offload) {
  layout.name = layout_name(layout);
  Candidate c{std::move(layout), micro_batch, recompute, virtual_stages};
  c.offload = offload;
  return c;
}

TrainOptions candidate_options(const PlanModel& pm, const Candidate& c) {
  TrainOptions o;
  o.model = pm.model;  // the real vocabulary: the engine and the formulas pad it (config.hpp padded_vocab)
  o = apply_layout(o, c.layout);
  o.micro_batch = c.micro_batch;
  o.grad_accum = pm.global_batch / (c.layout.dp * c.micro_batch);
  o.recompute = c.recompute;
  o.recompute_every = c.recompute_every;
  o.precision = pm.precision;
  o.offload = c.offload;
  return o;
}

StageMemory candidate_memory(const PlanModel& pm, const Candidate& c) {
  const TrainOptions o = candidate_options(pm, c);
  const ParallelLayout lay = c.layout.layout();
  const MemoryOptions mo{pm.attention, std::max(1, c.virtual_stages)};
  // The stages that differ — the first (most micro-batches in flight, embedding), the second (the
  // most layers after it), the last (the head).
  StageMemory most;
  for (int s : {0, std::min(1, lay.pp - 1), lay.pp - 1}) {
    const StageMemory sm = stage_memory(o, lay, s, mo);
    if (s == 0 || sm.total() > most.total()) most = sm;
  }
  return most;
}

Prediction predict(const PlanModel& pm, const Candidate& c) {
  Prediction p;
  p.candidate = c;
  p.options = candidate_options(pm, c);
  p.memory_limit = pm.cluster.memory_bytes;
  const TrainOptions& o = p.options;
  const ParallelLayout lay = c.layout.layout();
  const int m = o.grad_accum, v = std::max(1, c.virtual_stages);

  p.memory = candidate_memory(pm, c);
  if (c.offload != Offload::none) {
    const MemoryOptions mo{pm.attention, std::max(1, c.virtual_stages)};
    for (int s : {0, std::min(1, lay.pp - 1), lay.pp - 1})
      p.host_peak = std::max(p.host_peak, stage_memory(o, lay, s, mo).host);
  }
  if (pm.cluster.host_memory_bytes > 0) p.host_limit = pm.cluster.host_memory_bytes / pm.cluster.gpus_per_node;

  const double contention = layout_contention(pm.compute.shared_host().contention, lay.dp, lay.tp, lay.pp, m);
  p.time.contention = contention;
  const Groups g{group_tier(pm.cluster, lay.tp, 1), group_tier(pm.cluster, lay.dp, lay.tp),
                 group_tier(pm.cluster, lay.pp, lay.tp * lay.dp)};
  // Stages differ only in their layer count and whether they hold an end of the model.
  std::map<std::tuple<int, bool, bool>, StageTime> memo;
  double sum = 0, worst = -1, worst_after = 0;
  StageTime bottleneck, after;
  for (int s = 0; s < lay.pp; ++s) {
    const auto key = std::make_tuple(stage_layers(o.model.layers, lay.pp, s), s == 0, s == lay.pp - 1);
    auto it = memo.find(key);
    if (it == memo.end()) it = memo.emplace(key, stage_time(pm, o, lay, g, s, v, contention)).first;
    const StageTime& st = it->second;
    if (s == 0) p.time.gemm_stage0 = m * st.gemm;
    sum += st.total();
    if (st.total() > worst) {
      worst = st.total();
      bottleneck = st;
      p.bottleneck_stage = s;
    }
    // After the schedule: gradient reductions (overlapped with the last micro-batch's backward,
    // all but the first layer's, when the layout overlaps), parameter gathers, optimizer.
    const double hidden =
        c.layout.overlap ? std::min(st.dp_reduce, std::max(0.0, st.backward - st.backward_one_layer)) : 0.0;
    const double post =
        st.dp_reduce - hidden + st.dp_reduce_embed + st.dp_gather + st.other + st.optimizer + st.offload;
    if (post > worst_after) {
      worst_after = post;
      after = st;
      p.time.dp_comm_hidden = hidden;
    }
  }
  const double pipeline = m * worst + (sum - worst) / v;
  TimeBreakdown& t = p.time;
  t.forward = m * bottleneck.forward;
  t.backward = m * bottleneck.backward;
  t.recompute = m * bottleneck.recompute;
  t.gemm = m * bottleneck.gemm;
  t.attention = m * bottleneck.attention;
  t.elementwise = m * bottleneck.elementwise;
  t.tp_comm = m * bottleneck.tp;
  t.pp_comm = m * bottleneck.pp;
  t.zero3_gather = m * bottleneck.zero3;
  t.bubble = pipeline - m * worst;
  t.dp_comm = after.dp_reduce - t.dp_comm_hidden + after.dp_reduce_embed + after.dp_gather;
  t.optimizer = after.optimizer;
  t.offload = after.offload;
  t.other_comm = after.other;
  t.step = pipeline + worst_after;

  const double tokens = static_cast<double>(pm.global_batch) * pm.model.seq;
  const double denom = t.step * pm.cluster.gpus * pm.cluster.peak_flops;
  p.tokens_per_s = t.step > 0 ? tokens / t.step : 0.0;
  if (t.step > 0 && pm.cluster.gpus > 0)
    p.model_flops_per_gpu =
        tokens * model_flops_per_token(pm.model, FlopsConvention::causal) / (t.step * pm.cluster.gpus);
  if (denom > 0) {
    p.mfu = 100.0 * tokens * model_flops_per_token(pm.model, FlopsConvention::causal) / denom;
    p.mfu_palm = 100.0 * tokens * model_flops_per_token(pm.model, FlopsConvention::palm) / denom;
    p.hfu = 100.0 * tokens * hardware_flops_per_token(pm.model, FlopsConvention::causal, c.recompute) / denom;
  }
  return p;
}

}  // namespace gcb::models::planner
