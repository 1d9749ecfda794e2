// The rank program of a training run: every rank times its steps through the harness (measure()
// on the backend's timeline — the host clock on the CPU, CUDA events on the compute stream on a
// GPU — with a fixed number of samples, so that every rank runs the same number of collective
// steps); core/phase_timer.hpp divides the timed steps among forward / backward / optimizer /
// comm:<kind> on the same timeline and tallies the matmul span. On a GPU, NVML's slowdown reasons
// are sampled after every step and the clocks before and after. Rank 0 assembles the result from
// an all-gather of every rank's figures (training_result.hpp).
#include "models/run/training_run.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <iterator>
#include <map>
#include <mutex>

#include "collectives/factory.hpp"
#include "collectives/world.hpp"
#include "core/error.hpp"
#include "core/interrupt.hpp"
#include "core/gpu.hpp"
#include "core/harness.hpp"
#include "core/host_memory.hpp"
#include "core/nvml.hpp"
#include "core/phase_timer.hpp"
#include "core/stats.hpp"
#include "core/timeline.hpp"
#include "core/watchdog.hpp"
#include "models/model/attention_choice.hpp"
#include "models/backend/backend_factory.hpp"
#include "models/backend/cpu/cpu_backend.hpp"
#include "models/theory/device_fit.hpp"
#include "models/engine/engine.hpp"
#include "models/io/hf_gpt2.hpp"
#include "models/engine/parallel_groups.hpp"
#include "models/io/token_data.hpp"
#include "models/theory/theory.hpp"
#include "models/run/training_result.hpp"
#include "reports/writer.hpp"

namespace gcb::models {
namespace {

// Per-rank figures as one flat vector of doubles (gathered over the host communicator): the scalar
// fields in the order of one table, which packing and unpacking both walk, then the phases and the
// memory peaks; the throttle bits travel as a double (exact: they fit in 53 bits).
constexpr double RankFigures::*kScalarFields[] = {
    &RankFigures::step_median, &RankFigures::step_p10, &RankFigures::step_p90,  &RankFigures::step_mean,
    &RankFigures::loss,        &RankFigures::matmul,   &RankFigures::comm_lane, &RankFigures::sm_clock_mhz};
constexpr size_t kScalars = std::size(kScalarFields) + 1;  // + throttle
size_t flat_size() { return kScalars + train_phase_names().size() + kMemCategories; }

std::vector<double> flatten(const RankFigures& f) {
  GCB_CHECK(f.phases.size() == train_phase_names().size() && f.memory_peak.size() == kMemCategories,
            fmt::format("rank figures with {} phases and {} memory categories", f.phases.size(), f.memory_peak.size()));
  GCB_CHECK(f.throttle < (uint64_t{1} << 53), "throttle bits beyond a double's integers");
  std::vector<double> v;
  v.reserve(flat_size());
  for (double RankFigures::*field : kScalarFields) v.push_back(f.*field);
  v.push_back(static_cast<double>(f.throttle));
  v.insert(v.end(), f.phases.begin(), f.phases.end());
  v.insert(v.end(), f.memory_peak.begin(), f.memory_peak.end());
  return v;
}

RankFigures unflatten(const double* v) {
  RankFigures f;
  size_t i = 0;
  for (double RankFigures::*field : kScalarFields) f.*field = v[i++];
  f.throttle = static_cast<uint64_t>(v[i++]);
  const size_t phases = train_phase_names().size();
  f.phases.assign(v + i, v + i + phases);
  f.memory_peak.assign(v + i + phases, v + i + phases + kMemCategories);
  return f;
}

// NVML's view of the rank's GPU (empty bus id: no GPU, nothing sampled).
std::string bus_id_of(int device) {
  const auto& devices = gpu::runtime().devices;
  if (device < 0 || device >= static_cast<int>(devices.size())) return {};
  return devices[static_cast<size_t>(device)].pci_bus_id;
}

nlohmann::json clock_sample(const std::string& bus_id) {
  const std::optional<nvml::DeviceSample> s = bus_id.empty() ? std::nullopt : nvml::sample(bus_id);
  if (!s) return nullptr;
  const auto field = [](const std::optional<unsigned>& x) { return x ? nlohmann::json(*x) : nlohmann::json(nullptr); };
  nlohmann::json j = {{"sm_clock_mhz", field(s->sm_clock_mhz)},
                      {"sm_clock_max_mhz", field(s->sm_clock_max_mhz)},
                      {"temperature_c", field(s->temperature_c)},
                      {"power_mw", field(s->power_mw)}};
  if (s->throttle_reasons) j["throttle_reasons"] = nvml::throttle_reason_names(*s->throttle_reasons);
  return j;
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
std::optional<LayoutMeasurement> run_layout(const TrainRequest& req, const LayoutPlan& plan,
                                            const std::vector<float>& initial) {
  std::optional<LayoutMeasurement> out;
  const LayoutSpec& l = plan.spec;
  const TrainOptions& topt = plan.options;
  WorldOptions w;
  // A communicator that moves the compute backend's memory (host: threads or MPI; device: NCCL).
  w.backend = communicator_for(req.backend.memory, world_is_processes());
  w.ranks = req.ranks;
  w.timeout = std::chrono::milliseconds(static_cast<long long>(req.timeout * 1e3));
  run_world(w, [&](gcb::RankContext& rc) -> int {
    // The safe point of Ctrl-C / scancel (core/interrupt.hpp): before a layout, agreed by every rank.
    if (agreed_interrupt(rc, "train/" + l.name) != 0) return 0;
    ParallelGroups ctx = make_parallel_groups(rc.world_comm, l.layout());
    const std::unique_ptr<Backend> be =
        make_backend(req.backend, {rc.device, req.attn, req.lt_gelu, process_devices(rc)});
    PhaseTimer phases(be->timeline());
    RankFigures mine;
    LayoutMeasurement m;
    {
      auto engine = make_training_step(*be, ctx, topt);
      if (!initial.empty()) engine->load_params(initial);
      be->set_phase_timer(&phases);
      engine->set_phase_timer(&phases);
      TimelineTimer timer(be->timeline());  // never flushes
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
      const std::string bus_id = bus_id_of(rc.device);
      if (!bus_id.empty() && nvml::available()) {
        hooks.probe = [&bus_id] { return nvml::throttle_reasons(bus_id).value_or(0) & nvml::kThrottleMask; };
      }
      // The safe point of Ctrl-C / scancel between timed steps (core/interrupt.hpp), agreed by
      // every rank before each sample, outside its timing: the layout is then left unfinished
      // and not reported.
      struct Stopped {};
      int step = 0;
      hooks.sample_start = [&] {
        if (agreed_interrupt(rc, fmt::format("train/{} step {}", l.name, ++step)) != 0) throw Stopped{};
      };
      m.clocks["before"] = clock_sample(bus_id);
      Measurement meas;
      try {
        meas = measure(
            timer,
            [&] {
              const WatchScope watch("training step");  // --timeout bounds every step, warm-up included
              m.losses.push_back(engine->step());
              m.grad_norms.push_back(engine->last_grad_norm());
              m.lrs.push_back(engine->last_lr());
            },
            h, hooks);
      } catch (const Stopped&) {
        be->set_phase_timer(nullptr);
        engine->set_phase_timer(nullptr);
        return 0;
      }
      m.clocks["after"] = clock_sample(bus_id);
      mine.sm_clock_mhz = sampled_sm_clock(m.clocks["after"]);
      for (uint64_t f : meas.sample_flags) mine.throttle |= f;
      m.sample_flags = meas.sample_flags;
      m.timer = std::string(timer.kind());
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
      if (const MemoryStats* d = be->device_memory()) m.device_memory = *d;
      m.host_memory = be->host_memory();
      m.offload = engine->last_step_offload();
      m.comm = engine->last_step_comm();
      m.notes = be->notes();
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
      m.backend = std::string(req.backend.name);
      m.blas_threads = cpu_matmul_threads();
      for (int r = 0; r < rc.size; ++r)
        m.ranks_figures.push_back(unflatten(all.data() + flat_size() * static_cast<size_t>(r)));
      out = std::move(m);
    }
    return 0;
  });
  return out;
}

}  // namespace

int global_batch(const TrainRequest& r) { return r.global_batch > 0 ? r.global_batch : r.ranks * r.base.micro_batch; }

namespace {
// The memory budget of one GPU of this host for a device backend (nodes are taken to hold one GPU
// model, as the MFU peak does); nullopt on a host backend or without a GPU.
std::optional<uint64_t> device_budget(const TrainRequest& r) {
  if (r.backend.memory != MemorySpace::device) return std::nullopt;
  const auto& devices = gpu::runtime().devices;
  if (devices.empty() || devices[0].memory_bytes == 0) return std::nullopt;
  return static_cast<uint64_t>(kDeviceBudget * static_cast<double>(devices[0].memory_bytes));
}
}  // namespace

TrainOptions layout_options(const TrainRequest& r, const LayoutSpec& l) {
  TrainOptions t = apply_layout(r.base, l);
  t.grad_accum = global_batch(r) / (l.dp * r.base.micro_batch);
  const std::optional<uint64_t> budget = device_budget(r);
  if (budget && t.logit_rows == 0 && layout_error(t, l.layout()).empty()) {
    t.logit_rows = logit_rows_to_fit(t, l.layout(), *budget).value_or(0);  // nothing fits: layout_unavailable says so
  }
  return t;
}

std::vector<LayoutPlan> resolve_request(const TrainRequest& r) {
  if (const std::string e = backend_error(r.backend); !e.empty()) throw UsageError(e);
  if (r.steps < 1 || r.warmup < 0) throw UsageError("--steps must be ≥ 1 and --warmup ≥ 0");
  if (!(r.timeout > 0)) throw UsageError("--timeout must be > 0 seconds");
  if (r.ranks < 1) throw UsageError("--ranks must be ≥ 1");
  if (r.peak_flops < 0 || std::isnan(r.peak_flops)) throw UsageError("--peak-flops must be > 0 (or 0: measure)");
  if (r.peak_size < 1) throw UsageError("--peak-size must be ≥ 1");
  if (r.base.micro_batch < 1) throw UsageError("--micro-batch must be ≥ 1");
  if (r.base.logit_rows < 0) throw UsageError("--logit-chunk must be ≥ 0 rows");
  if (r.base.recompute_every < 1) throw UsageError("--recompute-every must be ≥ 1 layers");
  if (r.base.recompute_every > 1 && r.base.recompute != Recompute::full)
    throw UsageError(fmt::format("--recompute-every {} needs --recompute full", r.base.recompute_every));
  if (r.layouts.empty()) throw UsageError("no layout to run");
  if (!r.save.empty() && r.layouts.size() > 1)
    throw UsageError("--save writes one model: give one layout, not a sweep");
  if (!r.init_from.empty()) {
    const GptConfig c = hf_gpt2_config(r.init_from, r.base.model.heads);
    if (c.layers != r.base.model.layers || c.hidden != r.base.model.hidden || c.vocab != r.base.model.vocab ||
        c.seq != r.base.model.seq || c.heads != r.base.model.heads) {
      throw UsageError(
          fmt::format("--init-from {}: the checkpoint holds L {} C {} heads {} V {} T {}, the run asks for "
                      "L {} C {} heads {} V {} T {}",
                      r.init_from, c.layers, c.hidden, c.heads, c.vocab, c.seq, r.base.model.layers,
                      r.base.model.hidden, r.base.model.heads, r.base.model.vocab, r.base.model.seq));
    }
  }
  validate(r.base.model);
  const bool host_memory = r.backend.memory == MemorySpace::host;
  if (!r.base.data_file.empty()) open_token_file(r.base.data_file, r.base.model.vocab, r.base.model.seq);
  const int gb = global_batch(r);
  std::vector<LayoutPlan> plans;
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
    // One layout the model cannot take is the user's to fix; in a sweep it is a WAIVED row
    // (layout_unavailable), so that e.g. GPT-2's odd vocabulary refuses only the tp layouts.
    const TrainOptions t = layout_options(r, l);
    plans.push_back({l, t, layout_unavailable(r, l, t)});
    if (const std::string e = layout_error(t, l.layout()); !e.empty()) {
      if (r.layouts.size() == 1) throw UsageError(fmt::format("{}: {}", l.name, e));
      continue;  // no theory of a layout the model refuses
    }
    if (host_memory) {
      const int here = ranks_on_this_host(r.ranks);
      // --offload optimizer's host states are host memory too (on a host backend, the same memory).
      uint64_t rank = 0;
      for (const StageTheory& st : step_theory(t, l.layout()).stages)
        rank = std::max<uint64_t>(rank, uint64_t{st.states.total()} + st.host_states.total() + st.activation_bytes);
      check_host_memory(here * static_cast<double>(rank),
                        fmt::format("train {} ({} rank(s) on this host; model states + activations)", l.name, here));
    }
  }
  // The CPU peak's sgemm holds three n×n float matrices.
  if (r.peak_flops == 0)
    check_host_memory(12.0 * r.peak_size * r.peak_size, fmt::format("--peak-size {}", r.peak_size));
  return plans;
}

void check_request(const TrainRequest& r) { (void)resolve_request(r); }

std::string layout_unavailable(const TrainRequest& r, const LayoutSpec& l, const TrainOptions& options) {
  if (std::string why = layout_error(options, l.layout()); !why.empty()) return why;
  if (std::string why = backend_unavailable(r.backend); !why.empty()) return why;
  if (const std::optional<uint64_t> budget = device_budget(r)) {
    TrainOptions t = options;
    if (!logit_rows_to_fit(t, l.layout(), *budget)) {
      t.logit_rows = 1;
      return fmt::format(
          "a rank needs at least {} bytes of GPU memory with the LM head one row at a time (theory: "
          "states + activations), more than {:.0f} % of the GPU's {} bytes",
          rank_bytes_lower_bound(t, l.layout()), 100 * kDeviceBudget, gpu::runtime().devices[0].memory_bytes);
    }
  }
  const int ranks = l.dp * l.tp * l.pp;
  if (r.backend.memory == MemorySpace::device && !world_is_processes() && ranks > gpu::device_count()) {
    return fmt::format(
        "{} ranks need {} GPUs, this host has {} (NCCL refuses two ranks of one communicator on the "
        "same GPU)",
        ranks, ranks, gpu::device_count());
  }
  return "";
}

namespace {

// The MFU denominator and where it comes from: the flag's, the spec table's for a GPU it knows
// (device 0 of this process: nodes are taken to hold one GPU model), else measured — the
// backend's own bf16 GEMM on a GPU, the CPU sgemm on the host (with the probe's spread).
struct RunPeak {
  double flops = 0;
  std::string source;
  std::optional<PeakProbe> probe;  // when the CPU sgemm measured it
};

RunPeak run_peak(const TrainRequest& r) {
  if (r.peak_flops > 0) return {r.peak_flops, r.peak_source, std::nullopt};
  const ComputeBackend& b = r.backend;
  if (b.memory == MemorySpace::device) {
    if (b.peak != nullptr) {
      if (const std::optional<PeakFlops> p = b.peak(0)) return {p->flops, p->source, std::nullopt};
    }
    BackendSpec spec;
    spec.device = 0;
    spec.attn = r.attn;
    const std::unique_ptr<Backend> be = make_backend(r.backend, spec);
    const int n = 8192;
    return {measure_backend_gemm_peak(*be, n),
            fmt::format("measured:{} bf16 GEMM {}^3 (the GPU is not in the spec table)", r.backend.name, n),
            std::nullopt};
  }
  const PeakProbe probe = measure_sgemm_peak(r.peak_size);
  return {probe.best, fmt::format("measured:sgemm {}^3 ({}, all cores of this host)", r.peak_size, cpu_matmul_impl()),
          probe};
}

// An n×n×n matmul `run` timed on `timer`, 2 warm-up calls (the first pay for page faults, a BLAS
// thread pool's start, a GPU library's first launch), then at least 5 repetitions and 0.3 s.
PeakProbe matmul_probe(Timer& timer, int n, const std::function<void()>& run) {
  HarnessOptions h;
  h.warmup = 2;
  h.min_samples = 5;
  h.max_samples = 30;
  h.min_time = 0.3;
  h.max_time = 3.0;
  h.noise = 0.02;
  h.batch = 1;
  const Measurement m = measure(timer, run, h);
  const double flop = 2.0 * static_cast<double>(n) * static_cast<double>(n) * static_cast<double>(n);
  // Peak = the best repetition: the rate the machine demonstrably reaches on this shape. The
  // median and worst say how far a busy or throttling host strays from it.
  return {flop / m.stats.min, flop / m.stats.median, flop / m.stats.max, static_cast<int>(m.samples.size()), n};
}

}  // namespace

std::vector<Result> run_training(const TrainRequest& r) {
  const std::vector<LayoutPlan> plans = resolve_request(r);
  std::vector<Result> results;
  const bool any = std::any_of(plans.begin(), plans.end(), [](const LayoutPlan& p) { return p.unavailable.empty(); });
  if (!any) {  // nothing will run: no peak to measure, no weights to load
    for (const LayoutPlan& p : plans) {
      results.push_back(
          waived_training_result(p.spec, p.options, global_batch(r), std::string(r.backend.name), p.unavailable));
    }
    return results;
  }
  const RunPeak peak = run_peak(r);
  const std::vector<float> initial =
      r.init_from.empty() ? std::vector<float>{} : load_hf_gpt2(r.init_from, r.base.model);
  for (size_t i = 0; i < plans.size(); ++i) {
    const LayoutPlan& p = plans[i];
    if (!p.unavailable.empty()) {
      results.push_back(
          waived_training_result(p.spec, p.options, global_batch(r), std::string(r.backend.name), p.unavailable));
      if (r.on_layout) r.on_layout(i + 1, plans.size(), results.back());
      continue;
    }
    const std::optional<LayoutMeasurement> m = run_layout(r, p, initial);
    if (recorded_stop()) break;  // every rank agreed to stop before this layout
    if (!m) continue;
    results.push_back(training_result(*m, peak.flops, peak.source));
    if (peak.probe) record_peak_probe(results.back(), *peak.probe);
    if (r.on_layout) r.on_layout(i + 1, plans.size(), results.back());
  }
  return results;
}

PeakProbe measure_sgemm_peak(int n) {
  static std::mutex mutex;
  static std::map<int, PeakProbe> measured;
  const std::lock_guard lock(mutex);
  if (auto it = measured.find(n); it != measured.end()) return it->second;
  const size_t nn = static_cast<size_t>(n) * static_cast<size_t>(n);
  std::vector<float> a(nn, 1.0f / static_cast<float>(n)), b(nn, 0.5f), c(nn, 0.0f);
  HostTimer timer(steady_clock(), 1);
  const PeakProbe p =
      matmul_probe(timer, n, [&] { cpu_sgemm(false, false, n, n, n, a.data(), b.data(), c.data(), 0.0f); });
  measured[n] = p;
  return p;
}

void record_peak_probe(Result& r, const PeakProbe& p) {
  r.extra["peak_probe"] = {{"n", p.n},
                           {"repetitions", p.repetitions},
                           {"best_flops", p.best},
                           {"median_flops", p.median},
                           {"worst_flops", p.worst},
                           {"spread", p.best > 0 ? 1.0 - p.median / p.best : 0.0}};
}

double measure_backend_gemm_peak(Backend& be, int n) {
  const size_t nn = static_cast<size_t>(n) * static_cast<size_t>(n);
  Buffer a = be.alloc(MemCategory::workspace, DType::bf16, nn), b = be.alloc(MemCategory::workspace, DType::bf16, nn),
         c = be.alloc(MemCategory::workspace, DType::bf16, nn);
  be.fill(a.view(), nn, 1.0f / static_cast<float>(n));
  be.fill(b.view(), nn, 0.5f);
  TimelineTimer timer(be.timeline());
  const PeakProbe p = matmul_probe(timer, n, [&] {
    be.gemm({false, true, n, n, n, a.view(), b.view(), c.view(), 0.0f, {}});
  });
  be.timeline().clear();
  return p.best;
}

}  // namespace gcb::models
