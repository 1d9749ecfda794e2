// `gcbench train`: see bench/train.hpp and docs/readme-train.md ("gcbench train").
// Every rank times its steps through the harness (measure() with a HostTimer, a fixed number of
// samples so that every rank runs the same number of collective steps); core/phase_timer.hpp
// divides the timed steps among forward / backward / optimizer / comm:<kind> and tallies the
// matmul span. Rank 0 assembles the result from an all-gather of every rank's figures.
#include "bench/train.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <map>

#include "bench/cli.hpp"
#include "collectives/world.hpp"
#include "core/error.hpp"
#include "core/harness.hpp"
#include "core/host_memory.hpp"
#include "core/phase_timer.hpp"
#include "core/watchdog.hpp"
#include "core/stats.hpp"
#include "models/cpu_backend.hpp"
#include "models/gpt.hpp"
#include "reports/writer.hpp"

namespace gcb::bench {
namespace {

using models::CommKind;
using models::MemCategory;
using models::PipeSchedule;
using models::Recompute;
using models::ZeroStage;

int parse_int_suffix(const std::string& tok, size_t prefix) {
  const std::string digits = tok.substr(prefix);
  if (digits.empty() || digits.find_first_not_of("0123456789") != std::string::npos || digits.size() > 4) {
    throw UsageError(fmt::format("sweep: bad token '{}'", tok));
  }
  return std::stoi(digits);
}

Recompute parse_recompute(const std::string& s) {
  if (s == "none") return Recompute::none;
  if (s == "selective") return Recompute::selective;
  if (s == "full") return Recompute::full;
  throw UsageError(fmt::format("--recompute {}: expected none, selective or full", s));
}

PipeSchedule parse_schedule(const std::string& s) {
  if (s == "gpipe") return PipeSchedule::gpipe;
  if (s == "1f1b") return PipeSchedule::one_f_one_b;
  throw UsageError(fmt::format("--schedule {}: expected gpipe or 1f1b", s));
}

std::string layout_name(const TrainLayout& l) {
  std::string s = fmt::format("dp{}", l.dp);
  if (l.zero > 0) s += fmt::format("-zero{}", l.zero);
  if (l.tp > 1) s += fmt::format("-tp{}", l.tp);
  if (l.sp) s += "-sp";
  if (l.pp > 1) s += fmt::format("-pp{}-{}", l.pp, l.schedule == PipeSchedule::gpipe ? "gpipe" : "1f1b");
  if (l.overlap) s += "-overlap";
  return s;
}

models::GptConfig resolve_config(const TrainCliOptions& o) {
  const bool file = o.model.find(".json") != std::string::npos;
  const models::GptConfig base = file ? models::load_config_file(o.model) : models::named_config(o.model);
  models::GptConfig c = models::apply_overrides(base, o.overrides);
  models::validate(c);
  return c;
}

models::TrainOptions train_options(const TrainCliOptions& o, const models::GptConfig& c,
                                   const TrainLayout& l, int global_batch) {
  models::TrainOptions t;
  t.model = c;
  t.zero = static_cast<ZeroStage>(l.zero);
  t.micro_batch = o.micro_batch;
  t.grad_accum = global_batch / (l.dp * o.micro_batch);
  t.seed = o.seed;
  t.recompute = parse_recompute(o.recompute);
  t.sp = l.sp;
  t.schedule = l.schedule;
  t.overlap_comm = l.overlap;
  t.adam.lr = 1e-3f;
  t.adam.weight_decay = 0.1f;
  return t;
}

int global_batch_of(const TrainCliOptions& o, int ranks) {
  return o.global_batch > 0 ? o.global_batch : ranks * o.micro_batch;
}

// Phases reported in the time split (exclusive seconds per step).
const std::vector<std::string>& phase_names() {
  static const std::vector<std::string> names = {
      "forward", "backward", "forward_backward", "optimizer", "comm:all_reduce",
      "comm:reduce_scatter", "comm:all_gather", "comm:loss_all_reduce", "comm:tp_all_reduce",
      "comm:tp_all_gather", "comm:tp_reduce_scatter", "comm:pp_send_recv", "comm:pp_embed",
      "comm:bucket_wait"};
  return names;
}

// Per-rank figures, all-gathered as doubles.
enum Field : size_t { kMedian, kP10, kP90, kMean, kLoss, kMatmul, kCommLane, kPhases };
size_t field_count() { return kPhases + phase_names().size() + models::kMemCategories; }

struct LayoutOutcome {
  std::vector<std::vector<double>> ranks;  // field vectors
  std::vector<double> samples;             // rank 0's step times
  models::MemoryStats mem0;
  models::MemoryStats state0;  // rank 0 between steps, engine alive: the persistent bytes
  models::CommStats comm0;
  size_t padded0 = 0;
  std::vector<float> losses;
};

LayoutOutcome run_layout(const TrainCliOptions& o, const models::TrainOptions& topt,
                         const TrainLayout& l, int ranks, bool& is_rank0) {
  LayoutOutcome out;
  WorldOptions w;
  w.backend = world_is_processes() ? "mpi" : "threads";
  w.ranks = ranks;
  w.timeout = std::chrono::milliseconds(static_cast<long long>(o.timeout * 1e3));
  run_world(w, [&](RankContext& rc) -> int {
    models::RankContext ctx = models::make_rank_context(rc.world_comm, {l.dp, l.tp, l.pp});
    models::CpuBackend be;
    PhaseTimer phases;
    std::vector<double> mine(field_count(), 0.0);
    std::vector<double> samples;
    models::CommStats comm;
    models::MemoryStats state;
    size_t padded = 0;
    std::vector<float> losses;
    {
      auto engine = models::make_training_step(be, ctx, topt);
      be.set_phase_timer(&phases);
      engine->set_phase_timer(&phases);
      HostTimer timer(steady_clock(), 1);  // never flushes
      HarnessOptions h;
      h.warmup = o.warmup;
      h.min_samples = h.max_samples = o.steps;  // every rank runs exactly the same steps
      h.min_time = 0;
      h.max_time = 1e9;
      h.noise = 1.0;
      h.batch = 1;
      HarnessHooks hooks;
      hooks.region = [&](bool entering) {
        if (entering) phases.reset();
      };
      const Measurement m = measure(
          timer, [&] {
            const WatchScope watch("training step");  // --timeout bounds every step
            losses.push_back(engine->step());
          },
          h, hooks);
      samples = m.samples;
      mine[kMedian] = m.stats.median;
      mine[kP10] = percentile(m.samples, 0.10);
      mine[kP90] = percentile(m.samples, 0.90);
      mine[kMean] = m.stats.mean;
      mine[kLoss] = losses.back();
      const double n = static_cast<double>(m.samples.size());
      const auto sp = phases.spans().find("matmul");
      mine[kMatmul] = sp == phases.spans().end() ? 0.0 : sp->second / n;
      const auto lane = phases.spans().find("comm_lane");  // --overlap: the lane's busy time
      mine[kCommLane] = lane == phases.spans().end() ? 0.0 : lane->second / n;
      for (size_t i = 0; i < phase_names().size(); ++i) {
        const auto it = phases.exclusive().find(phase_names()[i]);
        mine[kPhases + i] = it == phases.exclusive().end() ? 0.0 : it->second / n;
      }
      be.set_phase_timer(nullptr);
      engine->set_phase_timer(nullptr);
      comm = engine->last_step_comm();
      padded = engine->padded_params();
      state = be.memory();
      for (size_t c = 0; c < models::kMemCategories; ++c) {
        mine[kPhases + phase_names().size() + c] = static_cast<double>(be.memory().by_category[c].peak);
      }
      if (!o.dump.empty()) {
        const std::vector<float> params = engine->full_params();
        if (rc.rank == 0) {
          std::string text;
          for (float x : losses) text += fmt::format("loss {:a}\n", x);
          for (float x : params) text += fmt::format("{:a}\n", x);
          write_output(o.dump, text);
        }
      }
    }
    std::vector<double> all(field_count() * static_cast<size_t>(rc.size));
    rc.host_comm.all_gather(mine.data(), all.data(), field_count(), DType::f64);
    rc.host_comm.synchronize();
    if (rc.rank == 0) {
      is_rank0 = true;
      for (int r = 0; r < rc.size; ++r) {
        out.ranks.emplace_back(all.begin() + static_cast<long>(field_count()) * r,
                               all.begin() + static_cast<long>(field_count()) * (r + 1));
      }
      out.samples = samples;
      out.mem0 = be.memory();
      out.comm0 = comm;
      out.state0 = state;
      out.padded0 = padded;
      out.losses = losses;
    }
    return 0;
  });
  return out;
}

double mib(double bytes) { return bytes / (1024.0 * 1024.0); }

struct Row {
  std::string layout;
  double step = 0, tps = 0, mfu = 0, params = 0, grads = 0, optim = 0, acts = 0, comm = 0,
         bubble = 0, bubble_theory = 0, loss = 0;
};

Result make_result(const TrainCliOptions& o, const models::TrainOptions& t, const TrainLayout& l,
                   int ranks, int global_batch, double peak, const std::string& peak_source,
                   const LayoutOutcome& out, Row& row) {
  const models::GptConfig& c = t.model;
  Result r;
  r.key = "train/" + l.name;
  r.params = {{"model", c.name},
              {"layout", l.name},
              {"dp", l.dp},
              {"tp", l.tp},
              {"pp", l.pp},
              {"sp", l.sp},
              {"zero", l.zero},
              {"overlap", l.overlap},
              {"schedule", l.schedule == PipeSchedule::gpipe ? "gpipe" : "1f1b"},
              {"micro_batch", t.micro_batch},
              {"global_batch", global_batch},
              {"recompute", o.recompute},
              {"ranks", ranks}};
  r.samples = out.samples;
  r.stats = summarize(out.samples);
  r.stop_reason = "max_samples";
  r.batch = 1;
  r.timer = "host steady_clock";
  const auto& f0 = out.ranks[0];
  const double step = f0[kMedian];
  const double tokens = static_cast<double>(global_batch) * c.seq;
  const double tps = tokens / step;
  const double f_causal = models::model_flops_per_token(c, models::FlopsConvention::causal);
  const double f_palm = models::model_flops_per_token(c, models::FlopsConvention::palm);
  const double f_hw = models::hardware_flops_per_token(c, models::FlopsConvention::causal, t.recompute);
  const double mfu = 100.0 * tps * f_causal / peak;
  const double hfu = 100.0 * tps * f_hw / peak;
  r.metrics.push_back({"step_time", step, "s", false, std::nullopt, ""});
  r.metrics.push_back({"tokens_per_s", tps, "tokens/s", true, std::nullopt, ""});
  r.metrics.push_back({"mfu", mfu, "%", true, 100.0, peak_source});
  r.metrics.push_back({"hfu", hfu, "%", true, 100.0, peak_source});
  r.metrics.push_back({"final_loss", f0[kLoss], "nats", false, std::nullopt, ""});
  r.model = {{"flops_per_token_causal", f_causal}, {"flops_per_token_palm", f_palm},
             {"hardware_flops_per_token", f_hw}, {"tokens_per_step", tokens}, {"peak_flops", peak}};

  nlohmann::json ex = nlohmann::json::object();
  ex["step_time_p10"] = f0[kP10];
  ex["step_time_p90"] = f0[kP90];
  ex["step_time_mean"] = f0[kMean];
  ex["tokens_per_s_per_rank"] = tps / ranks;
  ex["mfu_palm"] = 100.0 * tps * f_palm / peak;
  ex["peak_flops"] = peak;
  ex["peak_source"] = peak_source;
  double mn = step, mx = step;
  for (const auto& f : out.ranks) {
    mn = std::min(mn, f[kMedian]);
    mx = std::max(mx, f[kMedian]);
  }
  ex["step_time_min_rank"] = mn;
  ex["step_time_max_rank"] = mx;
  // Time split (rank 0, mean seconds per timed step; step_time_mean is its denominator). Every
  // comm:* phase blocked the rank's compute thread: that is the exposed communication. With
  // --overlap the bucket collectives ran on the comm lane instead; the rank blocked only in
  // comm:bucket_wait, so overlapped = lane busy time − that wait.
  nlohmann::json split = nlohmann::json::object();
  double comm_total = 0;
  for (size_t i = 0; i < phase_names().size(); ++i) {
    const double s = f0[kPhases + i];
    if (s == 0.0) continue;
    split[phase_names()[i]] = s;
    if (phase_names()[i].starts_with("comm:")) comm_total += s;
  }
  ex["time_split"] = split;
  ex["matmul_time"] = f0[kMatmul];
  ex["matmul_share"] = f0[kMatmul] / f0[kMean];
  ex["comm_exposed"] = comm_total;
  const size_t wait_idx = static_cast<size_t>(
      std::find(phase_names().begin(), phase_names().end(), "comm:bucket_wait") - phase_names().begin());
  ex["comm_overlapped"] = std::max(0.0, f0[kCommLane] - f0[kPhases + wait_idx]);
  ex["comm_overlap_note"] =
      l.overlap ? "bucket collectives on a second thread per rank; overlapped = its busy time − comm:bucket_wait"
                : "collectives block the rank (no --overlap): all communication is exposed";
  // Memory per category: rank 0 measured peak next to the analytic bytes where a formula exists.
  const bool megatron = l.tp > 1 || l.pp > 1 || l.sp;
  models::StateBytes sb;
  size_t act = 0;
  if (megatron) {
    const models::ParallelLayout pl{l.dp, l.tp, l.pp};
    sb = models::parallel_state_bytes(t, pl, 0);
    act = 4 * models::parallel_activation_floats(t, pl, 0);
  } else {
    sb = models::expected_state_bytes(t.zero, out.padded0, l.dp);
    act = 4 * models::GptModel::activation_floats(c, t.micro_batch, t.recompute);
  }
  nlohmann::json mem = nlohmann::json::object();
  for (size_t k = 0; k < models::kMemCategories; ++k) {
    const auto cat = static_cast<MemCategory>(k);
    nlohmann::json e = {{"measured", out.mem0.by_category[k].peak},
                        {"persistent", out.state0.by_category[k].current},
                        {"analytic", nullptr}};
    double mxr = 0;
    for (const auto& f : out.ranks) mxr = std::max(mxr, f[kPhases + phase_names().size() + k]);
    e["max_rank"] = mxr;
    switch (cat) {
      case MemCategory::params: e["analytic"] = sb.params; break;
      case MemCategory::grads: e["analytic"] = sb.grads; break;
      case MemCategory::adam_m: e["analytic"] = sb.adam_m; break;
      case MemCategory::adam_v: e["analytic"] = sb.adam_v; break;
      case MemCategory::activations: e["analytic"] = act; break;
      case MemCategory::master: e["analytic"] = 0; break;
      default: break;
    }
    // ZeRO-2/3 peaks include transient buckets and gathers above the persistent formula.
    mem[std::string(models::mem_category_name(cat))] = e;
  }
  ex["memory"] = mem;
  ex["memory_note"] = "rank 0 (first pipeline stage); measured = peak, persistent = allocated between steps; "
                      "analytic = persistent formula (ZeRO paper §3.1, Korthikanti Table 2 adapted) for model "
                      "states, peak derivation for activations; ZeRO-2/3 peaks add transient gradient buckets, "
                      "ZeRO-3 peaks the gathered unit";
  // Communication per step, rank 0: measured logical bytes next to theory.
  std::array<int64_t, models::kCommKinds> th{};
  if (megatron) {
    th = models::parallel_comm_theory(t, {l.dp, l.tp, l.pp}, 0);
  } else {
    const models::CommTheory d = models::comm_theory_elements(t.zero, static_cast<int64_t>(out.padded0),
                                                              t.grad_accum, l.dp);
    th[static_cast<size_t>(CommKind::all_reduce)] = d.all_reduce;
    th[static_cast<size_t>(CommKind::reduce_scatter)] = d.reduce_scatter;
    th[static_cast<size_t>(CommKind::all_gather)] = d.all_gather;
    th[static_cast<size_t>(CommKind::loss_all_reduce)] = l.dp > 1 ? 1 : 0;
  }
  nlohmann::json cb = nlohmann::json::object();
  for (size_t k = 0; k < models::kCommKinds; ++k) {
    const auto& cc = out.comm0.by_kind[k];
    if (cc.bytes == 0 && th[k] == 0) continue;
    cb[std::string(models::comm_kind_name(static_cast<CommKind>(k)))] = {
        {"measured", cc.bytes}, {"theory", 4 * th[k]}, {"calls", cc.calls}};
  }
  ex["comm_bytes"] = cb;
  // Pipeline bubble: time a rank waits in pipeline send/recv per step over the step time, next
  // to the GPipe/1F1B theory (p − 1)/(m + p − 1) (Narayanan et al. 2021 §2.2).
  const size_t pp_idx = kPhases + static_cast<size_t>(
      std::find(phase_names().begin(), phase_names().end(), "comm:pp_send_recv") - phase_names().begin());
  nlohmann::json per_rank = nlohmann::json::array();
  double bmin = 1, bmax = 0, bsum = 0;
  for (const auto& f : out.ranks) {
    const double b = f[kMean] > 0 ? f[pp_idx] / f[kMean] : 0.0;  // both means over timed steps
    per_rank.push_back(b);
    bmin = std::min(bmin, b);
    bmax = std::max(bmax, b);
    bsum += b;
  }
  const int m = t.grad_accum;
  const double theory = l.pp > 1 ? static_cast<double>(l.pp - 1) / (m + l.pp - 1) : 0.0;
  ex["bubble"] = {{"per_rank", per_rank}, {"min", bmin}, {"max", bmax}, {"theory", theory},
                  {"micro_batches", m}};
  ex["losses"] = out.losses;
  r.extra = ex;

  row.layout = l.name;
  row.step = step;
  row.tps = tps;
  row.mfu = mfu;
  row.params = static_cast<double>(out.mem0[MemCategory::params].peak);
  row.grads = static_cast<double>(out.mem0[MemCategory::grads].peak);
  row.optim = static_cast<double>(out.mem0[MemCategory::adam_m].peak + out.mem0[MemCategory::adam_v].peak);
  row.acts = static_cast<double>(out.mem0[MemCategory::activations].peak);
  row.comm = comm_total;
  row.bubble = bsum / static_cast<double>(out.ranks.size());
  row.bubble_theory = theory;
  row.loss = f0[kLoss];
  return r;
}

void print_table(const std::vector<Row>& rows, const std::string& title) {
  fmt::print("\n{}\n", title);
  fmt::print("{:<28} {:>10} {:>11} {:>7} {:>9} {:>9} {:>9} {:>9} {:>10} {:>13} {:>9}\n", "layout",
             "step ms", "tokens/s", "MFU %", "params", "grads", "optim", "activ", "comm ms",
             "bubble/theory", "loss");
  fmt::print("{:<28} {:>10} {:>11} {:>7} {:>9} {:>9} {:>9} {:>9} {:>10} {:>13} {:>9}\n", "", "",
             "", "", "MiB r0", "MiB r0", "MiB r0", "MiB r0", "exposed", "mean ranks", "final");
  for (const Row& r : rows) {
    fmt::print("{:<28} {:>10.3f} {:>11.1f} {:>7.3f} {:>9.3f} {:>9.3f} {:>9.3f} {:>9.3f} {:>10.3f} {:>6.3f}/{:<6.3f} {:>9.5f}\n",
               r.layout, 1e3 * r.step, r.tps, r.mfu, mib(r.params), mib(r.grads), mib(r.optim),
               mib(r.acts), 1e3 * r.comm, r.bubble, r.bubble_theory, r.loss);
  }
}

}  // namespace

std::vector<TrainLayout> parse_sweep(const std::string& text, int ranks) {
  std::vector<TrainLayout> out;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t comma = text.find(',', start);
    const std::string item = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    start = comma == std::string::npos ? text.size() + 1 : comma + 1;
    if (item.empty()) throw UsageError(fmt::format("--sweep '{}': empty layout", text));
    TrainLayout l;
    int dp = 0;
    size_t s = 0;
    while (s <= item.size()) {
      const size_t dash = item.find('-', s);
      const std::string tok = item.substr(s, dash == std::string::npos ? std::string::npos : dash - s);
      s = dash == std::string::npos ? item.size() + 1 : dash + 1;
      if (tok == "dp") {
        dp = 0;
      } else if (tok == "sp") {
        l.sp = true;
      } else if (tok == "gpipe") {
        l.schedule = PipeSchedule::gpipe;
      } else if (tok == "1f1b") {
        l.schedule = PipeSchedule::one_f_one_b;
      } else if (tok == "overlap") {
        l.overlap = true;
      } else if (tok.starts_with("dp")) {
        dp = parse_int_suffix(tok, 2);
      } else if (tok.starts_with("tp")) {
        l.tp = parse_int_suffix(tok, 2);
      } else if (tok.starts_with("pp")) {
        l.pp = parse_int_suffix(tok, 2);
      } else if (tok.starts_with("zero")) {
        l.zero = parse_int_suffix(tok, 4);
      } else {
        throw UsageError(fmt::format("--sweep: unknown token '{}' in '{}' (dp[N], tpN, ppN, sp, zeroK, gpipe, 1f1b, overlap)", tok, item));
      }
    }
    if (l.tp < 1 || l.pp < 1 || ranks % (l.tp * l.pp) != 0) {
      throw UsageError(fmt::format("--sweep {}: tp·pp = {} does not divide {} ranks", item, l.tp * l.pp, ranks));
    }
    l.dp = dp > 0 ? dp : ranks / (l.tp * l.pp);
    if (l.zero < 0 || l.zero > 3) throw UsageError(fmt::format("--sweep {}: zero stage must be 0–3", item));
    l.name = layout_name(l);
    out.push_back(l);
  }
  return out;
}

TrainPlan plan_train(const TrainCliOptions& o) {
  if (o.backend == "cuda") {
    throw UsageError("--backend cuda: the CUDA training backend is not built in this binary (use --backend cpu)");
  }
  if (o.backend != "cpu") throw UsageError(fmt::format("--backend {}: expected cpu or cuda", o.backend));
  if (o.steps < 1 || o.warmup < 0) throw UsageError("--steps must be ≥ 1 and --warmup ≥ 0");
  if (o.micro_batch < 1) throw UsageError("--micro-batch must be ≥ 1");
  if (o.zero < 0 || o.zero > 3) throw UsageError(fmt::format("--zero {}: expected 0, 1, 2 or 3", o.zero));
  (void)parse_recompute(o.recompute);
  if (o.peak_flops <= 0)  // the peak sgemm holds three n×n float matrices
    check_host_memory(12.0 * o.peak_size * o.peak_size, fmt::format("--peak-size {}", o.peak_size));
  TrainPlan plan;
  plan.config = resolve_config(o);
  const LauncherInfo launcher = detect_launcher();
  if (!o.sweep.empty()) {
    plan.ranks = launcher.launched ? launcher.size : (o.ranks > 0 ? o.ranks : 1);
    plan.layouts = parse_sweep(o.sweep, plan.ranks);
  } else {
    TrainLayout l;
    l.dp = o.dp;
    l.tp = o.tp;
    l.pp = o.pp;
    l.sp = o.sp;
    l.zero = o.zero;
    l.overlap = o.overlap;
    l.schedule = parse_schedule(o.schedule);
    l.name = layout_name(l);
    plan.ranks = launcher.launched ? launcher.size : (o.ranks > 0 ? o.ranks : l.dp * l.tp * l.pp);
    plan.layouts.push_back(l);
  }
  if (launcher.launched && o.ranks > 0 && o.ranks != launcher.size) {
    throw UsageError(fmt::format("--ranks {} but the launcher started {} processes", o.ranks, launcher.size));
  }
  const int gb = global_batch_of(o, plan.ranks);
  for (const TrainLayout& l : plan.layouts) {
    if (l.dp < 1 || l.tp < 1 || l.pp < 1) throw UsageError("dp, tp and pp must be ≥ 1");
    if (l.dp * l.tp * l.pp != plan.ranks) {
      throw UsageError(fmt::format("{}: dp {} × tp {} × pp {} = {} ≠ {} ranks", l.name, l.dp, l.tp, l.pp,
                                   l.dp * l.tp * l.pp, plan.ranks));
    }
    if (gb % (l.dp * o.micro_batch) != 0) {
      throw UsageError(fmt::format("{}: global batch {} is not divisible by dp {} × micro-batch {}", l.name, gb,
                                   l.dp, o.micro_batch));
    }
    const models::TrainOptions t = train_options(o, plan.config, l, gb);
    std::string e = models::layout_error(t, {l.dp, l.tp, l.pp});
    if (e.empty()) e = models::overlap_error(t, {l.dp, l.tp, l.pp});
    if (!e.empty()) throw UsageError(fmt::format("{}: {}", l.name, e));
    check_train_host_memory(train_rank_host_bytes(t, {l.dp, l.tp, l.pp}), plan.ranks, l.name);
  }
  return plan;
}

double measure_sgemm_peak(int n) {
  const size_t nn = static_cast<size_t>(n) * static_cast<size_t>(n);
  std::vector<float> a(nn, 1.0f / static_cast<float>(n)), b(nn, 0.5f), c(nn, 0.0f);
  HostTimer timer(steady_clock(), 1);
  HarnessOptions h;
  h.warmup = 1;
  h.min_samples = 3;
  h.max_samples = 20;
  h.min_time = 0.2;
  h.max_time = 3.0;
  h.noise = 0.02;
  h.batch = 1;
  const Measurement m = measure(
      timer, [&] { models::cpu_sgemm(false, false, n, n, n, a.data(), b.data(), c.data(), 0.0f); }, h);
  // Peak = the best sample: the rate the machine demonstrably reaches on this shape.
  return 2.0 * static_cast<double>(n) * static_cast<double>(nn) / m.stats.min;
}

void run_train(const TrainCliOptions& o, const TrainPlan& plan, Runner& runner, bool quiet) {
  const double peak = o.peak_flops > 0 ? o.peak_flops : measure_sgemm_peak(o.peak_size);
  const std::string peak_source =
      o.peak_flops > 0 ? "flag:--peak-flops"
                       : fmt::format("measured:sgemm {}^3 ({}, all cores of this host)", o.peak_size,
                                     models::cpu_matmul_impl());
  const int gb = global_batch_of(o, plan.ranks);
  std::vector<Row> rows;
  for (const TrainLayout& l : plan.layouts) {
    const models::TrainOptions t = train_options(o, plan.config, l, gb);
    bool rank0 = false;
    const LayoutOutcome out = run_layout(o, t, l, plan.ranks, rank0);
    if (!rank0) continue;
    Row row;
    runner.add(make_result(o, t, l, plan.ranks, gb, peak, peak_source, out, row));
    rows.push_back(row);
  }
  if (!quiet && !rows.empty()) {
    print_table(rows, fmt::format("train: {} (L {} C {} heads {} V {} T {}), global batch {} × micro-batch {}, {} ranks, "
                                  "recompute {}, peak {:.2f} GFLOP/s ({})",
                                  plan.config.name, plan.config.layers, plan.config.hidden, plan.config.heads,
                                  plan.config.vocab, plan.config.seq, gb, o.micro_batch, plan.ranks, o.recompute,
                                  peak / 1e9, peak_source));
  }
}

void run_train_quick(Runner& runner) {
  TrainCliOptions o;
  o.model = "tiny";
  o.ranks = 2;
  o.micro_batch = 2;
  o.global_batch = 8;
  o.steps = 3;
  o.warmup = 1;
  o.peak_size = 256;
  o.sweep = "dp2,zero1,tp2,tp2-sp,pp2-1f1b";
  const TrainPlan plan = plan_train(o);
  run_train(o, plan, runner, true);
}

void add_train_command(CLI::App& root, std::function<int()>& run, const std::vector<std::string>& argv) {
  auto* app = root.add_subcommand("train", "Training steps of a GPT model under dp × tp × pp, sp, ZeRO, pipeline schedules");
  auto common = std::make_shared<CommonOptions>();
  auto o = std::make_shared<TrainCliOptions>();
  add_common_options(*app, *common, false, false);
  app->add_option("--model", o->model, "Named config (tiny, gpt2-124m, …, gpt3-175b) or a JSON file")->capture_default_str();
  app->add_option("--layers", o->overrides.layers, "Override the number of layers");
  app->add_option("--hidden", o->overrides.hidden, "Override the hidden size");
  app->add_option("--heads", o->overrides.heads, "Override the number of heads");
  app->add_option("--vocab", o->overrides.vocab, "Override the vocabulary size");
  app->add_option("--seq", o->overrides.seq, "Override the sequence length");
  app->add_option("--dp", o->dp, "Data-parallel degree")->capture_default_str();
  app->add_option("--tp", o->tp, "Tensor-parallel degree (Megatron)")->capture_default_str();
  app->add_option("--pp", o->pp, "Pipeline-parallel degree (stages)")->capture_default_str();
  app->add_flag("--sp", o->sp, "Sequence parallelism in the tp group (Korthikanti et al.)");
  app->add_option("--zero", o->zero, "ZeRO stage on the dp dimension: 0–3, with any tp / sp / pp")->capture_default_str();
  app->add_flag("--overlap", o->overlap,
                "DP / ZeRO-1: all-reduce (reduce-scatter) each gradient bucket on a second thread while backward goes on");
  app->add_option("--schedule", o->schedule, "Pipeline schedule: gpipe | 1f1b")->capture_default_str();
  app->add_option("--micro-batch", o->micro_batch, "Sequences per micro-batch")->capture_default_str();
  app->add_option("--global-batch", o->global_batch, "Sequences per step (default: ranks × micro-batch)");
  app->add_option("--recompute", o->recompute, "Activation recomputation: none | selective | full")->capture_default_str();
  app->add_option("--steps", o->steps, "Timed steps")->capture_default_str();
  app->add_option("--warmup", o->warmup, "Untimed steps before timing")->capture_default_str();
  app->add_option("--backend", o->backend, "Compute backend: cpu | cuda (cuda not built yet)")->capture_default_str();
  app->add_option("--ranks", o->ranks, "Rank threads (default dp·tp·pp; under mpirun the world size)")
      ->check(positive());
  app->add_option("--sweep", o->sweep, "Layouts to compare, e.g. dp,zero1,tp2,tp2-sp,pp4-1f1b (see docs)");
  app->add_option("--peak-flops", o->peak_flops, "Device peak in FLOP/s for MFU (default: measured sgemm)")
      ->check(positive());
  app->add_option("--peak-size", o->peak_size, "n of the n³ sgemm that measures the CPU peak")
      ->check(positive())
      ->capture_default_str();
  add_timeout_option(*app, o->timeout, "one training step (warm-up included), or a wait for another rank inside it,");
  app->add_option("--dump", o->dump, "Write every step's loss and the final parameters (hex floats) to FILE");
  run = [=, &argv] {
    TrainCliOptions opts = *o;
    opts.seed = common->seed;  // --seed: parameter initialisation (data: a fixed seed)
    const TrainPlan plan = plan_train(opts);  // every check before any allocation
    Session session(*common, argv, {{{"--dump", opts.dump}}, {{"--model", opts.model}}});
    run_train(opts, plan, session.runner(), common->quiet);
    return session.finish();
  };
}

}  // namespace gcb::bench
