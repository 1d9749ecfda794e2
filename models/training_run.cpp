// The rank program of a training run: every rank times its steps through the harness (measure()
// with a HostTimer and a fixed number of samples, so that every rank runs the same number of
// collective steps; each step ends by reading the loss back, so host time covers the device
// work too); core/phase_timer.hpp divides the timed steps among forward / backward / optimizer /
// comm:<kind> and tallies the matmul span. Rank 0 assembles the result from an all-gather of every
// rank's figures (training_result.hpp).
#include "models/training_run.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>

#include "collectives/factory.hpp"
#include "collectives/world.hpp"
#include "core/error.hpp"
#include "core/harness.hpp"
#include "core/host_memory.hpp"
#include "core/phase_timer.hpp"
#include "core/stats.hpp"
#include "core/watchdog.hpp"
#include "models/backend_factory.hpp"
#include "models/cpu_backend.hpp"
#include "models/engine.hpp"
#include "models/hf_gpt2.hpp"
#include "models/rank_context.hpp"
#include "models/token_data.hpp"
#include "models/theory.hpp"
#include "models/training_result.hpp"
#include "reports/writer.hpp"

namespace gcb::models {
namespace {

// Per-rank figures as one flat vector of doubles (gathered over the host communicator).
size_t flat_size() { return 7 + train_phase_names().size() + kMemCategories; }

std::vector<double> flatten(const RankFigures& f) {
  std::vector<double> v = {f.step_median, f.step_p10, f.step_p90, f.step_mean, f.loss, f.matmul, f.comm_lane};
  v.insert(v.end(), f.phases.begin(), f.phases.end());
  v.insert(v.end(), f.memory_peak.begin(), f.memory_peak.end());
  return v;
}

RankFigures unflatten(const double* v) {
  RankFigures f{v[0], v[1], v[2], v[3], v[4], v[5], v[6], {}, {}};
  const size_t phases = train_phase_names().size();
  f.phases.assign(v + 7, v + 7 + phases);
  f.memory_peak.assign(v + 7 + phases, v + 7 + phases + kMemCategories);
  return f;
}

void write_dump(const std::string& path, const std::vector<double>& losses, const std::vector<float>& params) {
  std::string text;
  for (double x : losses) text += fmt::format("loss {:a}\n", x);
  for (float x : params) text += fmt::format("{:a}\n", x);
  write_output(path, text);  // reports/writer.hpp: atomic, devices in place, failures are exit 3
}

// Ranks of the run on this host: rank threads share this process; MPI ranks on this host share
// its memory.
int ranks_on_this_host(int world_ranks) {
  const LauncherInfo launcher = detect_launcher();
  return !launcher.launched ? world_ranks : std::max(launcher.local_size, 1);
}

// Runs one layout on every rank, from `initial` weights when not empty; rank 0 returns the
// measurement (others: nullopt).
std::optional<LayoutMeasurement> run_layout(const TrainRequest& req, const LayoutSpec& l,
                                            const std::vector<float>& initial) {
  std::optional<LayoutMeasurement> out;
  const TrainOptions topt = layout_options(req, l);
  WorldOptions w;
  // A communicator that moves the compute backend's memory (host: threads or MPI; device: NCCL).
  w.backend = communicator_for(compute_backend(req.backend).memory, world_is_processes());
  w.ranks = req.ranks;
  w.timeout = std::chrono::milliseconds(static_cast<long long>(req.timeout * 1e3));
  run_world(w, [&](gcb::RankContext& rc) -> int {
    RankContext ctx = make_rank_context(rc.world_comm, l.layout());
    const std::unique_ptr<Backend> be = make_backend(req.backend, {rc.device});
    PhaseTimer phases;
    RankFigures mine;
    LayoutMeasurement m;
    {
      auto engine = make_training_step(*be, ctx, topt);
      if (!initial.empty()) engine->load_params(initial);
      be->set_phase_timer(&phases);
      engine->set_phase_timer(&phases);
      HostTimer timer(steady_clock(), 1);  // never flushes
      HarnessOptions h;
      h.warmup = req.warmup;
      h.min_samples = h.max_samples = req.steps;  // every rank runs exactly the same steps
      h.min_time = 0;
      h.max_time = 1e9;
      h.noise = 1.0;
      h.batch = 1;
      HarnessHooks hooks;
      hooks.region = [&](bool entering) {
        if (entering) phases.reset();
      };
      const Measurement meas = measure(
          timer,
          [&] {
            const WatchScope watch("training step");  // --timeout bounds every step, warm-up included
            m.losses.push_back(engine->step());
          },
          h, hooks);
      be->set_phase_timer(nullptr);
      engine->set_phase_timer(nullptr);
      const auto n = static_cast<double>(meas.samples.size());
      mine.step_median = meas.stats.median;
      mine.step_p10 = percentile(meas.samples, 0.10);
      mine.step_p90 = percentile(meas.samples, 0.90);
      mine.step_mean = meas.stats.mean;
      mine.loss = m.losses.back();
      const auto span = [&](const char* name) {
        const auto it = phases.spans().find(name);
        return it == phases.spans().end() ? 0.0 : it->second / n;
      };
      mine.matmul = span("matmul");
      mine.comm_lane = span("comm_lane");
      for (const std::string& p : train_phase_names()) {
        const auto it = phases.exclusive().find(p);
        mine.phases.push_back(it == phases.exclusive().end() ? 0.0 : it->second / n);
      }
      for (const MemCounter& c : be->memory().by_category) mine.memory_peak.push_back(static_cast<double>(c.peak));
      m.samples = meas.samples;
      m.memory = be->memory();
      m.comm = engine->last_step_comm();
      if (!req.dump.empty() || !req.save.empty()) {
        const std::vector<float> params = engine->full_params();  // collective
        if (rc.rank == 0 && !req.dump.empty()) write_dump(req.dump, m.losses, params);
        if (rc.rank == 0 && !req.save.empty()) save_hf_gpt2(req.save, topt.model, params);
      }
    }
    const std::vector<double> flat = flatten(mine);
    std::vector<double> all(flat_size() * static_cast<size_t>(rc.size));
    rc.host_comm.all_gather(flat.data(), all.data(), flat_size(), DType::f64);
    rc.host_comm.synchronize();
    if (rc.rank == 0) {
      m.layout = l;
      m.options = topt;
      m.ranks = rc.size;
      m.global_batch = global_batch(req);
      m.backend = req.backend;
      m.blas_threads = cpu_matmul_threads();
      for (int r = 0; r < rc.size; ++r) m.ranks_figures.push_back(unflatten(all.data() + flat_size() * static_cast<size_t>(r)));
      out = std::move(m);
    }
    return 0;
  });
  return out;
}

}  // namespace

int global_batch(const TrainRequest& r) { return r.global_batch > 0 ? r.global_batch : r.ranks * r.base.micro_batch; }

TrainOptions layout_options(const TrainRequest& r, const LayoutSpec& l) {
  TrainOptions t = apply_layout(r.base, l);
  t.grad_accum = global_batch(r) / (l.dp * r.base.micro_batch);
  return t;
}

void check_request(const TrainRequest& r) {
  if (const std::string e = backend_error(r.backend); !e.empty()) throw UsageError(e);
  if (r.steps < 1 || r.warmup < 0) throw UsageError("--steps must be ≥ 1 and --warmup ≥ 0");
  if (!(r.timeout > 0)) throw UsageError("--timeout must be > 0 seconds");
  if (r.ranks < 1) throw UsageError("--ranks must be ≥ 1");
  if (r.peak_flops < 0 || std::isnan(r.peak_flops)) throw UsageError("--peak-flops must be > 0 (or 0: measure)");
  if (r.peak_size < 1) throw UsageError("--peak-size must be ≥ 1");
  if (r.base.micro_batch < 1) throw UsageError("--micro-batch must be ≥ 1");
  if (r.layouts.empty()) throw UsageError("no layout to run");
  if (!r.save.empty() && r.layouts.size() > 1) throw UsageError("--save writes one model: give one layout, not a sweep");
  if (!r.init_from.empty()) {
    const GptConfig c = hf_gpt2_config(r.init_from, r.base.model.heads);
    if (c.layers != r.base.model.layers || c.hidden != r.base.model.hidden || c.vocab != r.base.model.vocab ||
        c.seq != r.base.model.seq || c.heads != r.base.model.heads) {
      throw UsageError(fmt::format("--init-from {}: the checkpoint holds L {} C {} heads {} V {} T {}, the run asks for "
                                   "L {} C {} heads {} V {} T {}",
                                   r.init_from, c.layers, c.hidden, c.heads, c.vocab, c.seq, r.base.model.layers,
                                   r.base.model.hidden, r.base.model.heads, r.base.model.vocab, r.base.model.seq));
    }
  }
  validate(r.base.model);
  const bool host_memory = compute_backend(r.backend).memory == MemorySpace::host;
  if (!r.base.data_file.empty()) open_token_file(r.base.data_file, r.base.model.vocab, r.base.model.seq);
  const int gb = global_batch(r);
  for (const LayoutSpec& l : r.layouts) {
    if (l.dp < 1 || l.tp < 1 || l.pp < 1) throw UsageError("dp, tp and pp must be ≥ 1");
    if (l.dp * l.tp * l.pp != r.ranks) {
      throw UsageError(fmt::format("{}: dp {} × tp {} × pp {} = {} ≠ {} ranks", l.name, l.dp, l.tp, l.pp,
                                   l.dp * l.tp * l.pp, r.ranks));
    }
    if (gb % (l.dp * r.base.micro_batch) != 0) {
      throw UsageError(fmt::format("{}: global batch {} is not divisible by dp {} × micro-batch {}", l.name, gb, l.dp,
                                   r.base.micro_batch));
    }
    const TrainOptions t = layout_options(r, l);
    if (const std::string e = layout_error(t, l.layout()); !e.empty()) throw UsageError(fmt::format("{}: {}", l.name, e));
    if (host_memory) {
      const int here = ranks_on_this_host(r.ranks);
      check_host_memory(here * static_cast<double>(rank_host_bytes(t, l.layout())),
                        fmt::format("train {} ({} rank(s) on this host; model states + activations)", l.name, here));
    }
  }
  // The CPU peak's sgemm holds three n×n float matrices.
  if (r.peak_flops == 0)
    check_host_memory(12.0 * r.peak_size * r.peak_size, fmt::format("--peak-size {}", r.peak_size));
}

uint64_t rank_host_bytes(const TrainOptions& o, const ParallelLayout& lay) {
  uint64_t most = 0;
  for (const StageTheory& s : step_theory(o, lay).stages)
    most = std::max<uint64_t>(most, uint64_t{s.states.total()} + s.activation_bytes);
  return most;
}

std::vector<Result> run_training(const TrainRequest& r) {
  check_request(r);
  const bool given = r.peak_flops > 0;
  const PeakProbe probe = given ? PeakProbe{} : measure_sgemm_peak(r.peak_size);
  const double peak = given ? r.peak_flops : probe.best;
  const std::string source =
      given ? r.peak_source
            : fmt::format("measured:sgemm {}^3 ({}, all cores of this host)", r.peak_size, cpu_matmul_impl());
  const std::vector<float> initial = r.init_from.empty() ? std::vector<float>{} : load_hf_gpt2(r.init_from, r.base.model);
  std::vector<Result> results;
  for (const LayoutSpec& l : r.layouts) {
    const std::optional<LayoutMeasurement> m = run_layout(r, l, initial);
    if (!m) continue;
    results.push_back(training_result(*m, peak, source));
    if (!given) record_peak_probe(results.back(), probe);
  }
  return results;
}

PeakProbe measure_sgemm_peak(int n) {
  const size_t nn = static_cast<size_t>(n) * static_cast<size_t>(n);
  std::vector<float> a(nn, 1.0f / static_cast<float>(n)), b(nn, 0.5f), c(nn, 0.0f);
  HostTimer timer(steady_clock(), 1);
  HarnessOptions h;
  h.warmup = 2;  // first calls pay for page faults and the BLAS thread pool's start
  h.min_samples = 5;
  h.max_samples = 30;
  h.min_time = 0.3;
  h.max_time = 3.0;
  h.noise = 0.02;
  h.batch = 1;
  const Measurement m = measure(timer, [&] { cpu_sgemm(false, false, n, n, n, a.data(), b.data(), c.data(), 0.0f); }, h);
  const double flop = 2.0 * static_cast<double>(n) * static_cast<double>(nn);
  // Peak = the best repetition: the rate the machine demonstrably reaches on this shape. The
  // median and worst say how far a busy or throttling host strays from it.
  return {flop / m.stats.min, flop / m.stats.median, flop / m.stats.max, static_cast<int>(m.samples.size()), n};
}

void record_peak_probe(Result& r, const PeakProbe& p) {
  r.extra["peak_probe"] = {{"n", p.n},
                           {"repetitions", p.repetitions},
                           {"best_flops", p.best},
                           {"median_flops", p.median},
                           {"worst_flops", p.worst},
                           {"spread", p.best > 0 ? 1.0 - p.median / p.best : 0.0}};
}

}  // namespace gcb::models
