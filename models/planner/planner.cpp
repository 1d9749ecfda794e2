// make_plan (planner.hpp): the request's model (plan_model), every candidate predicted, those that fit ranked by step
// time and the others explained; prediction_result writes each as a "plan/<candidate>" result.
#include "models/planner/planner.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "core/error.hpp"
#include "models/theory/theory.hpp"
#include "models/model/sweep.hpp"

namespace gcb::models::planner {

PlanModel plan_model(const PlanRequest& r) {
  Cluster cl = r.cluster;
  if (cl.is_cpu()) {
    if (const std::optional<RankBandwidth> b = rank_bandwidth(r.calibration, cl.gpus, cl.threads_per_rank)) {
      cl.memory_bandwidth = b->bytes_per_s;
      cl.memory_bandwidth_source = b->source;
    }
  } else if (r.calibration.memory_bandwidth) {
    cl.memory_bandwidth = *r.calibration.memory_bandwidth;
    cl.memory_bandwidth_source = "calibration: mem triad";
  }
  // --offload optimizer's copies and CPU AdamW (cluster.hpp).
  if (cl.is_cpu()) {
    cl.h2d_bandwidth = cl.d2h_bandwidth = cl.memory_bandwidth / 2;
    cl.host_link_source = "a copy within host memory: half the rank's memory bandwidth (read + write)";
    cl.host_memory_bandwidth = cl.memory_bandwidth;
    cl.host_memory_bandwidth_source = "the rank's memory bandwidth";
  } else {
    const Calibration& c = r.calibration;
    if (c.h2d_bytes_per_s && c.d2h_bytes_per_s) {
      cl.h2d_bandwidth = *c.h2d_bytes_per_s;
      cl.d2h_bandwidth = *c.d2h_bytes_per_s;
      cl.host_link_source = "calibration: mem/copy h2d and d2h (copy engine, pinned, best size)";
    }
    if (c.host_triad_bytes_per_s) {
      cl.host_memory_bandwidth = *c.host_triad_bytes_per_s / cl.gpus_per_node;
      cl.host_memory_bandwidth_source = fmt::format("calibration: mem/host/triad {:.3g} GB/s / {} ranks per node",
                                                    *c.host_triad_bytes_per_s / 1e9, cl.gpus_per_node);
    }
  }
  if (cl.peak_flops <= 0) {
    // No spec peak (the CPU): the best calibrated GEMM rate.
    for (const GemmPoint& g : r.calibration.gemm) {
      cl.peak_flops = std::max(cl.peak_flops, 2.0 * static_cast<double>(g.m) * static_cast<double>(g.n) *
                                                  static_cast<double>(g.k) / g.seconds);
    }
    cl.peak_source = "calibration: best GEMM rate";
  }
  PlanModel pm{r.model,
               r.global_batch,
               r.precision,
               r.attention,
               r.pp_scatter_gather,
               cl,
               ComputeModel(cl.peak_flops, r.efficiency, cl.memory_bandwidth, r.calibration),
               CommModel(cl, r.calibration)};
  pm.compute.set_shared_host(r.shared);
  return pm;
}

std::optional<int> smallest_fitting_block(const PlanModel& pm, const Candidate& c) {
  if (c.recompute != Recompute::full || c.recompute_every != 1) return std::nullopt;
  const int smallest_stage = pm.model.layers / std::max(1, c.layout.pp);
  for (int k = 2; k <= smallest_stage; ++k) {
    Candidate b = c;
    b.recompute_every = k;
    if (candidate_memory(pm, b).total() <= pm.cluster.memory_bytes && predict(pm, b).host_fits()) return k;
  }
  return std::nullopt;
}

PlanOutcome make_plan(const PlanRequest& r) {
  if (r.global_batch < 1) throw UsageError("--global-batch must be ≥ 1");
  validate(r.model);
  const PlanModel pm = plan_model(r);
  PlanOutcome out;
  std::vector<Candidate> cands;
  if (!r.only.empty()) {
    for (const Candidate& c : r.only) {
      if (std::string e = candidate_error(pm, c, true); !e.empty())
        throw UsageError(fmt::format("{}: {}", c.name(), e));
      cands.push_back(c);
    }
  } else {
    cands = enumerate_candidates(pm, r.space, out.invalid);
  }
  out.candidates = cands.size();
  for (const Candidate& c : cands) {
    Prediction p = predict(pm, c);
    const bool fits = p.fits();
    (fits ? out.fits : out.oom).push_back(std::move(p));
    if (fits || r.space.recompute_every != 0) continue;
    if (const std::optional<int> k = smallest_fitting_block(pm, c)) {
      Candidate blocks = c;
      blocks.recompute_every = *k;
      out.fits.push_back(predict(pm, blocks));
      ++out.candidates;
    }
  }
  // Offload is proposed only where it changes what fits or is faster: with no offload searched too,
  // an offloaded candidate that does not fit goes, and so does one with a twin of less offload (a
  // subset of what it offloads: none, or one of optimizer and activations) that fits at least as fast.
  const auto& offs = r.space.offload;
  if (r.only.empty() && std::find(offs.begin(), offs.end(), Offload::none) != offs.end() &&
      std::any_of(offs.begin(), offs.end(), [](Offload o) { return o != Offload::none; })) {
    std::map<std::string, double> fitting;  // name → step time of the fitting candidates
    for (const Prediction& p : out.fits) fitting.emplace(p.candidate.name(), p.time.step);
    const auto needless = [&fitting](const Prediction& p) {
      const auto bits = static_cast<unsigned>(p.candidate.offload);
      for (unsigned less = 0; less < 4; ++less) {
        if (less == bits || (less & ~bits) != 0) continue;  // a proper subset of what p offloads
        Candidate twin = p.candidate;
        twin.offload = static_cast<Offload>(less);
        const auto it = fitting.find(twin.name());
        if (it != fitting.end() && it->second <= p.time.step) return true;
      }
      return false;
    };
    // Kept: those whose device fits but whose host does not (they fit with more host memory).
    out.offload_left_out = std::erase_if(out.fits, needless) + std::erase_if(out.oom, [](const Prediction& p) {
                             return p.candidate.offload != Offload::none && (p.host_fits() || !p.device_fits());
                           });
  }
  std::stable_sort(out.fits.begin(), out.fits.end(),
                   [](const Prediction& a, const Prediction& b) { return a.time.step < b.time.step; });
  // The closest first: those short of host memory only (by how much), then by device bytes over.
  std::stable_sort(out.oom.begin(), out.oom.end(), [](const Prediction& a, const Prediction& b) {
    if (a.device_fits() != b.device_fits()) return a.device_fits();
    if (a.device_fits()) return a.host_peak - a.host_limit < b.host_peak - b.host_limit;
    return a.memory.total() - a.memory_limit < b.memory.total() - b.memory_limit;
  });
  return out;
}

Result prediction_result(const Prediction& p, const PlanModel& pm, int rank) {
  const Candidate& c = p.candidate;
  const LayoutSpec& l = c.layout;
  Result r;
  r.key = "plan/" + c.name();
  r.params = layout_params(l, p.options, pm.global_batch);
  r.params.update({{"virtual_stages", c.virtual_stages},
                   {"gpus", pm.cluster.gpus},
                   {"gpus_per_node", pm.cluster.gpus_per_node},
                   {"device", pm.cluster.device},
                   {"rank", rank}});
  r.status = Status::pass;
  if (!p.fits()) {
    r.status = Status::waived;
    r.reason = p.host_fits() ? fmt::format("out of memory: {:.2f} GiB > limit {:.2f} GiB", p.memory.total() / (1 << 30),
                                           p.memory_limit / (1 << 30))
                             : fmt::format("out of host memory: {:.2f} GiB per rank > {:.2f} GiB (--host-memory)",
                                           p.host_peak / (1 << 30), p.host_limit / (1 << 30));
  }
  r.stop_reason = "predicted";
  r.timer = "none (prediction)";
  const std::string peak_src = pm.cluster.peak_source;
  r.metrics.push_back({"step_time", p.time.step, "s", false, std::nullopt, ""});
  r.metrics.push_back({"tokens_per_s", p.tokens_per_s, "tokens/s", true, std::nullopt, ""});
  r.metrics.push_back({"mfu", p.mfu, "%", true, 100.0, peak_src});
  r.metrics.push_back({"hfu", p.hfu, "%", true, 100.0, peak_src});
  r.metrics.push_back({"tflops_per_gpu", p.model_flops_per_gpu / 1e12, "TFLOP/s", true, std::nullopt, ""});
  r.metrics.push_back({"memory", p.memory.total(), "B", false, p.memory_limit, pm.cluster.memory_source});
  const TrainOptions& o = p.options;
  r.model = {{"flops_per_token_causal", model_flops_per_token(pm.model, FlopsConvention::causal)},
             {"flops_per_token_palm", model_flops_per_token(pm.model, FlopsConvention::palm)},
             {"hardware_flops_per_token", hardware_flops_per_token(pm.model, FlopsConvention::causal, c.recompute)},
             {"tokens_per_step", static_cast<double>(pm.global_batch) * pm.model.seq},
             {"peak_flops", pm.cluster.peak_flops},
             {"micro_batches", o.grad_accum},
             {"vocab", o.model.vocab}};
  const TimeBreakdown& t = p.time;
  nlohmann::json mem = nlohmann::json::object();
  for (size_t k = 0; k < kMemCategories; ++k)
    mem[std::string(mem_category_name(static_cast<MemCategory>(k)))] = p.memory.peak[k];
  r.extra = {
      {"breakdown",
       {{"forward", t.forward},
        {"backward", t.backward},
        {"recompute", t.recompute},
        {"gemm", t.gemm},
        {"attention", t.attention},
        {"elementwise", t.elementwise},
        {"contention", t.contention},
        {"tp_comm", t.tp_comm},
        {"pp_comm", t.pp_comm},
        {"zero3_gather", t.zero3_gather},
        {"bubble", t.bubble},
        {"dp_comm", t.dp_comm},
        {"dp_comm_hidden", t.dp_comm_hidden},
        {"optimizer", t.optimizer},
        {"offload", t.offload},
        {"other_comm", t.other_comm}}},
      {"bottleneck_stage", p.bottleneck_stage},
      {"memory", mem},
      {"memory_total", p.memory.total()},
      {"memory_host", p.host_peak},
      {"host_limit", p.host_limit},
      {"memory_workspace_steady", p.memory.workspace_steady},
      {"memory_stage", p.memory.stage},
      {"memory_limit", p.memory_limit},
      {"mfu_palm", p.mfu_palm},
      {"sources",
       {{"peak", peak_src},
        {"memory_limit", pm.cluster.memory_source},
        {"memory_bandwidth", pm.cluster.memory_bandwidth_source},
        {"host_link", pm.cluster.host_link_source},
        {"host_memory_bandwidth", pm.cluster.host_memory_bandwidth_source},
        {"host_memory", pm.cluster.host_memory_bytes > 0 ? pm.cluster.host_memory_source : "not checked"},
        {"gemm", pm.compute.gemm_calibrated() ? "calibration: gemm results"
                                              : fmt::format("efficiency {} × peak", pm.compute.efficiency())},
        {"attention", pm.compute.attention_calibrated() ? "calibration: attn results"
                                                        : fmt::format("efficiency {} × peak", pm.compute.efficiency())},
        {"tp", pm.comm.model(Collective::all_reduce, l.tp, group_tier(pm.cluster, l.tp, 1)).source},
        {"dp", pm.comm.model(Collective::all_reduce, l.dp, group_tier(pm.cluster, l.dp, l.tp)).source},
        {"pp", pm.comm.model(Collective::send_recv, 2, group_tier(pm.cluster, l.pp, l.tp * l.dp)).source}}}};
  return r;
}

}  // namespace gcb::models::planner
