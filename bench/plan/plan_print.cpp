// `gcbench plan`'s tables: the cluster and where its rates come from, the ranked layouts with
// their time breakdown, why the others were rejected, the shapes to calibrate, published runs.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <iterator>
#include <map>
#include <set>

#include "bench/plan/plan.hpp"
#include "models/planner/step_work.hpp"
#include "reports/render.hpp"

namespace gcb::bench {
namespace {

using namespace models::planner;

constexpr double kGiB = 1024.0 * 1024 * 1024;

std::string gbps(double bytes_per_s) { return fmt::format("{:.1f} GB/s", bytes_per_s / 1e9); }

}  // namespace

std::string memory_text(double bytes) {
  const double b = std::abs(bytes);
  if (b >= kGiB) return fmt::format("{:.2f} GiB", bytes / kGiB);
  if (b >= 1024.0 * 1024) return fmt::format("{:.1f} MiB", bytes / (1024.0 * 1024));
  if (b >= 1024.0) return fmt::format("{:.1f} KiB", bytes / 1024.0);
  return fmt::format("{:.0f} B", bytes);
}

namespace {

// A reason with its numbers replaced, so that "tp 16 > 8 GPUs per node" and "tp 32 > 8 …" group.
std::string reason_kind(const std::string& reason) {
  std::string k;
  for (const char ch : reason) {
    if (std::isdigit(static_cast<unsigned char>(ch)) != 0) {
      if (k.empty() || k.back() != '#') k += '#';
    } else {
      k += ch;
    }
  }
  return k;
}

void print_cluster(const PlanRequest& req, const PlanModel& pm) {
  std::string out;
  auto to = std::back_inserter(out);
  const Cluster& c = pm.cluster;
  const models::GptConfig& m = pm.model;
  fmt::format_to(to, "plan: {} (L {} C {} heads {} V {} T {}), {} sequences per step, {}, attention {}\n", m.name,
                 m.layers, m.hidden, m.heads, m.vocab, m.seq, pm.global_batch, models::precision_name(pm.precision),
                 pm.attention.flash     ? "flash"
                 : pm.attention.dropout ? "materialized with dropout"
                                        : "materialized");
  fmt::format_to(to, "cluster: {} × {}", c.gpus, c.device);
  if (!c.is_cpu()) fmt::format_to(to, ", {} node{} of {}", c.nodes(), c.nodes() > 1 ? "s" : "", c.gpus_per_node);
  fmt::format_to(to, "\n  peak {} per device ({}); memory limit {} ({})\n",
                 c.peak_flops >= 1e12 ? fmt::format("{:.1f} TFLOP/s", c.peak_flops / 1e12)
                                      : fmt::format("{:.1f} GFLOP/s", c.peak_flops / 1e9),
                 c.peak_source, memory_text(c.memory_bytes), c.memory_source);
  fmt::format_to(to, "  memory bandwidth {}{} ({})\n",
                 c.memory_bandwidth > 0 ? gbps(c.memory_bandwidth) : "unknown: element-wise work not costed",
                 c.is_cpu() && c.memory_bandwidth > 0 ? " per rank" : "",
                 c.memory_bandwidth > 0 ? c.memory_bandwidth_source : "give mem results");
  if (!c.is_cpu() && std::any_of(req.space.offload.begin(), req.space.offload.end(),
                                 [](models::Offload o) { return o != models::Offload::none; })) {
    fmt::format_to(to, "  offload: host link {} h2d, {} d2h ({}); host AdamW at {} per rank ({})\n",
                   c.h2d_bandwidth > 0 ? gbps(c.h2d_bandwidth) : "unknown",
                   c.d2h_bandwidth > 0 ? gbps(c.d2h_bandwidth) : "unknown", c.host_link_source,
                   gbps(c.host_memory_bandwidth), c.host_memory_bandwidth_source);
    fmt::format_to(to, "  host memory for offload: {}\n",
                   c.host_memory_bytes > 0
                       ? fmt::format("{} per node, {} per rank ({})", memory_text(c.host_memory_bytes),
                                     memory_text(c.host_memory_bytes / c.gpus_per_node), c.host_memory_source)
                       : "not checked (give --host-memory)");
  }
  const SharedHostRates& sh = pm.compute.shared_host();
  if (!sh.source.empty()) {
    fmt::format_to(to, "  shared host: {}\n  element-wise in-cache ceilings, M elements/s per rank:", sh.source);
    for (size_t k = 0; k < kEwOps; ++k)
      if (sh.ceiling[k] > 0) fmt::format_to(to, " {} {:.0f}", ew_op_name(static_cast<EwOp>(k)), sh.ceiling[k] / 1e6);
    fmt::format_to(to, "\n");
  } else if (c.is_cpu()) {
    fmt::format_to(
        to,
        "  shared host: not probed (--no-host-probe): element-wise work at the memory roof only, GEMMs as calibrated alone\n");
  }
  const Calibration& cal = req.calibration;
  fmt::format_to(to, "  GEMMs: {}; attention: {}\n",
                 cal.gemm.empty() ? fmt::format("{} × peak (no gemm results)", pm.compute.efficiency())
                                  : fmt::format("{} measured shapes, others interpolated", cal.gemm.size()),
                 cal.attn.empty() ? fmt::format("{} × peak (no attn results)", pm.compute.efficiency())
                                  : fmt::format("{} measured shapes, others interpolated", cal.attn.size()));
  for (const Tier t : {Tier::intra_node, Tier::inter_node}) {
    if (t == Tier::inter_node && c.nodes() <= 1) continue;
    const int n = t == Tier::intra_node ? std::min(c.gpus, c.gpus_per_node) : c.nodes();
    const AlphaBeta ab = pm.comm.model(Collective::all_reduce, std::max(2, n), t);
    fmt::format_to(to, "  {} all-reduce of {} ranks: α {:.1f} µs, β {} ({})\n", tier_name(t), std::max(2, n),
                   ab.alpha_s * 1e6, ab.bytes_per_s > 0 ? gbps(ab.bytes_per_s) : "not costed", ab.source);
  }
  if (!cal.files.empty())
    fmt::format_to(to, "  calibration: {} results from {}\n", cal.results_read, fmt::join(cal.files, ", "));
  fmt::print("{}", wrap_lines(out));
}

// The ranked table's columns: a header with its unit, text-aligned (left) or numeric (right).
// Every column is as wide as its widest cell, so a long layout name moves the columns after it
// on every row alike.
struct Column {
  std::string header;
  bool left = false;
};

void print_table(const std::vector<Column>& cols, const std::vector<std::vector<std::string>>& rows) {
  std::vector<size_t> width(cols.size());
  auto cells = [](const std::string& s) {  // display width: UTF-8 continuation bytes take no column
    size_t n = 0;
    for (const char ch : s) n += (static_cast<unsigned char>(ch) & 0xC0) != 0x80;
    return n;
  };
  for (size_t c = 0; c < cols.size(); ++c) {
    width[c] = cells(cols[c].header);
    for (const auto& row : rows) width[c] = std::max(width[c], cells(row[c]));
  }
  auto line = [&](auto cell_of) {
    std::string out;
    for (size_t c = 0; c < cols.size(); ++c) {
      const std::string text = cell_of(c);
      const std::string pad(width[c] - cells(text), ' ');
      if (c > 0) out += " ";
      out += cols[c].left ? text + pad : pad + text;
    }
    while (!out.empty() && out.back() == ' ') out.pop_back();
    fmt::print("{}\n", out);
  };
  line([&](size_t c) { return cols[c].header; });
  for (const auto& row : rows) line([&](size_t c) { return row[c]; });
}

// A time unit for a whole table: seconds from a 1 s step on, else ms, else µs (a CPU plan's steps
// once read 0.001728 s beside parts of 2.55e-07 s).
std::pair<const char*, double> time_unit(double slowest_s) {
  if (slowest_s >= 1) return {"s", 1};
  if (slowest_s >= 1e-3) return {"ms", 1e3};
  return {"µs", 1e6};
}

// Two tables of the same rows (#): the ranking, then the step's time by part, each within a
// terminal's 100 columns where the layout names allow (one table of both ran to 190).
void print_ranked(const std::vector<Prediction>& preds, size_t n) {
  const size_t shown = std::min(n, preds.size());
  double slowest = 0, most_flops = 0;
  for (size_t i = 0; i < shown; ++i) {
    slowest = std::max(slowest, preds[i].time.step);
    most_flops = std::max(most_flops, preds[i].model_flops_per_gpu);
  }
  const auto [unit, scale] = time_unit(slowest);
  // Model FLOP/s per GPU: Prediction::model_flops_per_gpu, Megatron-LM's headline figure (the
  // model FLOPs of MFU over the predicted step time and the GPUs), in TFLOP/s, or GFLOP/s below 1.
  const bool tera = most_flops >= 1e12;
  const std::vector<Column> ranking = {{"#"},
                                       {"layout", true},
                                       {"mb"},
                                       {"recompute", true},
                                       {fmt::format("step [{}]", unit)},
                                       {"tokens/s"},
                                       {tera ? "TFLOP/s/GPU" : "GFLOP/s/GPU"},
                                       {"MFU [%]"},
                                       {"HFU [%]"},
                                       {"memory"}};
  std::vector<Column> parts = {{"#"}};
  for (const char* part : {"fwd+bwd", "recomp", "tp", "pp", "zero3", "bubble", "dp", "optim", "other"})
    parts.push_back({fmt::format("{} [{}]", part, unit)});
  std::vector<std::vector<std::string>> rows, times;
  for (size_t i = 0; i < shown; ++i) {
    const Prediction& p = preds[i];
    const TimeBreakdown& t = p.time;
    std::string layout = p.candidate.layout.name;
    if (p.candidate.virtual_stages > 1) layout += fmt::format("-v{}", p.candidate.virtual_stages);
    layout += offload_suffix(p.candidate.offload);  // "optim" holds the copies and the host AdamW
    auto s3 = [scale = scale](double v) { return v == 0 ? std::string("0") : fmt::format("{:.3g}", v * scale); };
    rows.push_back({fmt::format("{}", i + 1), layout, fmt::format("{}", p.candidate.micro_batch),
                    p.candidate.recompute_label(), fmt::format("{:.4g}", t.step * scale), format_value(p.tokens_per_s),
                    fmt::format("{:.1f}", p.model_flops_per_gpu / (tera ? 1e12 : 1e9)), fmt::format("{:.2f}", p.mfu),
                    fmt::format("{:.2f}", p.hfu), memory_text(p.memory.total())});
    times.push_back({fmt::format("{}", i + 1), s3(t.forward + t.backward), s3(t.recompute), s3(t.tp_comm),
                     s3(t.pp_comm), s3(t.zero3_gather), s3(t.bubble), s3(t.dp_comm), s3(t.optimizer + t.offload),
                     s3(t.other_comm)});
  }
  fmt::print("\n");
  print_table(ranking, rows);
  fmt::print("\ntime per step by part, the layouts above by #\n");
  print_table(parts, times);
}

std::string memory_line(const StageMemory& m) {
  std::string s;
  for (size_t k = 0; k < models::kMemCategories; ++k) {
    const auto cat = static_cast<models::MemCategory>(k);
    const double v = cat == models::MemCategory::workspace ? m.workspace_steady : m.peak[k];
    if (v <= 0) continue;
    s += fmt::format("{}{} {}", s.empty() ? "" : ", ", models::mem_category_name(cat), memory_text(v));
  }
  if (m.host > 0) s += fmt::format("; on the host (offload) {}", memory_text(m.host));
  return s;
}

}  // namespace

void print_plan(const PlanRequest& req, const PlanModel& pm, const PlanOutcome& out, int top, int rejected) {
  print_cluster(req, pm);
  long invalid = 0;
  for (const Rejection& r : out.invalid) invalid += r.variants;
  fmt::print("candidates: {} predicted — {} fit in {}, {} do not; {} combinations cannot run\n", out.candidates,
             out.fits.size(), memory_text(pm.cluster.memory_bytes), out.oom.size(), invalid);
  if (out.offload_left_out > 0) {
    fmt::print(
        "  {} offloaded candidates left out: they do not fit, or the same layout fits as fast with less offload\n",
        out.offload_left_out);
  }
  if (out.fits.empty()) {
    fmt::print("\nno layout fits");
  } else {
    print_ranked(out.fits, static_cast<size_t>(std::max(0, top)));
    const Prediction& best = out.fits.front();
    const TimeBreakdown& t = best.time;
    fmt::print(
        "\nbest: {} — {} per step, {:.1f} % MFU; stage {} is the slowest\n  compute {:.0f} %, communication in the "
        "step {:.0f} %, bubble {:.0f} %, optimizer {:.0f} %{}\n",
        best.candidate.name(), format_seconds(t.step), best.mfu, best.bottleneck_stage,
        100 * (t.forward + t.backward + t.recompute) / t.step,
        100 * (t.tp_comm + t.pp_comm + t.zero3_gather + t.dp_comm + t.other_comm) / t.step, 100 * t.bubble / t.step,
        100 * t.optimizer / t.step,
        t.offload > 0 ? fmt::format(", offload copies (and host AdamW) {:.0f} %", 100 * t.offload / t.step) : "");
    fmt::print("{}",
               wrap_lines(fmt::format("  memory of stage {}: {}\n", best.memory.stage, memory_line(best.memory))));
  }
  if (!out.oom.empty()) {
    fmt::print("\nout of memory: {} candidates; the closest:\n", out.oom.size());
    for (size_t i = 0; i < std::min<size_t>(static_cast<size_t>(std::max(0, rejected)), out.oom.size()); ++i) {
      const Prediction& p = out.oom[i];
      if (p.device_fits()) {  // the host does not
        fmt::print("  {:<48} host {} per rank, {} over its {} — stage {}: {}\n", p.candidate.name(),
                   memory_text(p.host_peak), memory_text(p.host_peak - p.host_limit), memory_text(p.host_limit),
                   p.memory.stage, memory_line(p.memory));
        continue;
      }
      fmt::print("  {:<48} {}, {} over — stage {}: {}\n", p.candidate.name(), memory_text(p.memory.total()),
                 memory_text(p.memory.total() - p.memory_limit), p.memory.stage, memory_line(p.memory));
    }
  }
  if (!out.invalid.empty()) {
    std::map<std::string, std::pair<long, const Rejection*>> kinds;
    for (const Rejection& r : out.invalid) {
      auto& k = kinds[reason_kind(r.reason)];
      k.first += r.variants;
      if (!k.second) k.second = &r;
    }
    fmt::print("\ncannot run:\n");
    for (const auto& [kind, entry] : kinds)
      fmt::print("  {:>7} × {} (e.g. {})\n", entry.first, entry.second->reason, entry.second->what);
  }
}

void print_shapes(const PlanModel& pm, const std::vector<Prediction>& shown) {
  std::set<GemmShape> gemms;
  std::set<AttnShapeCall> attns;
  for (const Prediction& p : shown) {
    const models::ParallelLayout lay = p.candidate.layout.layout();
    for (int s : {0, lay.pp - 1}) {
      const StageWork w = stage_work(p.options, lay, s, pm.attention);
      for (const PassWork* pass : {&w.forward, &w.backward, &w.recompute}) {
        for (const GemmCall& g : pass->gemm) gemms.insert(g.shape);
        for (const AttnCall& a : pass->attn) attns.insert(a.shape);
      }
    }
  }
  fmt::print(
      "\n# shapes of these layouts: gemm M N K (gcbench gemm --m M --n N --k K); attn B H S D causal pass "
      "(gcbench attn --batch B --heads H --seq S --head-dim D --causal on --pass P)\n");
  for (const GemmShape& g : gemms) fmt::print("gemm {} {} {}\n", g.m, g.n, g.k);
  for (const AttnShapeCall& a : attns)
    fmt::print("attn {} {} {} {} {} {}\n", a.batch, a.heads, a.seq, a.head_dim, a.causal ? "on" : "off",
               a.backward ? "bwd" : "fwd");
}

void print_published(const std::vector<PublishedCheck>& checks, const std::string& gpu) {
  fmt::print(
      "published runs on {}: iteration time from eq. (3) F / (GPUs × published TFLOP/s), against the planner with the "
      "compute efficiency fitted to the other runs (leave-one-out)\n\n",
      gpu);
  fmt::print("{:<12} {:>5} {:>3} {:>3} {:>4} {:>3} {:>2} {:>7} {:>6} {:>6} {:>6} {:>9} {:>9} {:>7} {:>7} {:>7} {:>8}\n",
             "model", "GPUs", "tp", "pp", "dp", "mb", "v", "TFLOP/s", "%peak", "HFU%", "MFU%", "time s", "pred. s",
             "error", "e fit", "e LOO", "mem GiB");
  double worst = 0, sum = 0, esum = 0;
  for (const PublishedCheck& c : checks) {
    const PublishedRun& r = c.run;
    fmt::print(
        "{:<12} {:>5} {:>3} {:>3} {:>4} {:>3} {:>2} {:>7.0f} {:>6.0f} {:>6.2f} {:>6.2f} {:>9.2f} {:>9.2f} {:>+6.1f}% {:>7.3f} {:>7.3f} {:>8.1f}\n",
        r.model, r.gpus, r.tp, r.pp, r.dp, r.micro_batch, r.virtual_stages, r.tflops_per_gpu, r.percent_of_peak, c.hfu,
        c.mfu, c.iteration_time, c.predicted_time, 100 * c.error, c.fitted_efficiency, c.loo_efficiency,
        c.prediction.memory.total() / kGiB);
    worst = std::max(worst, std::abs(c.error));
    sum += std::abs(c.error);
    esum += c.fitted_efficiency;
  }
  if (!checks.empty()) {
    const auto n = static_cast<double>(checks.size());
    fmt::print("\n{} runs: mean |error| {:.1f} %, max {:.1f} %; mean fitted efficiency {:.3f} (the one-constant fit)\n",
               checks.size(), 100 * sum / n, 100 * worst, esum / n);
  }
}

}  // namespace gcb::bench
