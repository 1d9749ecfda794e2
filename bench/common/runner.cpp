// Runner (runner.hpp): each Case through the harness into a Result — NVTX range, WAIVED checks, NVML clocks and
// per-sample throttle flags, verification, metrics — printed and appended to the JSONL sink as the case ends.
#include "bench/common/runner.hpp"

#include <fmt/format.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <cstdlib>

#include "core/error.hpp"
#include "core/interrupt.hpp"
#include "core/nvml.hpp"
#include "core/nvml_window.hpp"
#include "core/nvtx.hpp"
#include "reports/render.hpp"

namespace gcb::bench {

namespace {

nlohmann::json clocks_json(const nvml::DeviceSample& s) {
  auto opt = [](const auto& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); };
  nlohmann::json j = {{"sm_clock_mhz", opt(s.sm_clock_mhz)},   {"sm_clock_max_mhz", opt(s.sm_clock_max_mhz)},
                      {"mem_clock_mhz", opt(s.mem_clock_mhz)}, {"mem_clock_max_mhz", opt(s.mem_clock_max_mhz)},
                      {"power_mw", opt(s.power_mw)},           {"power_limit_mw", opt(s.power_limit_mw)},
                      {"temperature_c", opt(s.temperature_c)}, {"throttle_reasons", opt(s.throttle_reasons)}};
  if (s.throttle_reasons) j["throttle_reason_names"] = nvml::throttle_reason_names(*s.throttle_reasons);
  return j;
}

std::string bus_id_of(int gpu_index) {
  const auto& devices = gpu::runtime().devices;
  if (gpu_index < 0 || gpu_index >= static_cast<int>(devices.size())) return {};
  return devices[static_cast<size_t>(gpu_index)].pci_bus_id;
}

// What NVML saw during the timed samples: mean power from the energy counter, the fraction of time
// any limiter held the clocks below application clocks, how many samples a limiter touched, and
// the mean of the SM-clock samples the driver took during the run.
nlohmann::json during_json(const nvml::WindowMonitor& m, const std::optional<nvml::ClockSamples>& clocks) {
  auto opt = [](const std::optional<double>& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); };
  nlohmann::json j = {{"mean_power_w", opt(m.mean_power_w())},
                      {"throttled_fraction", opt(m.throttled_fraction())},
                      {"samples_throttled", m.samples_throttled()},
                      {"samples", m.samples()}};
  j["sm_clock_mean_mhz"] = clocks && clocks->count ? nlohmann::json(clocks->mean_mhz) : nlohmann::json(nullptr);
  j["sm_clock_samples"] = clocks ? clocks->count : 0;
  return j;
}

}  // namespace

void waive_peaks(std::vector<Metric>& metrics, nlohmann::json& extra, const std::string& why) {
  bool any = false;
  for (auto& m : metrics) {
    any = any || m.peak.has_value();
    m.peak.reset();
    m.peak_source.clear();
  }
  if (any) extra["peak_waived"] = why;
}

Runner::Runner(RunnerOptions options, JsonlSink* sink) : options_(std::move(options)), sink_(sink) {
  validate(options_.harness);
}

std::string progress_line(size_t k, double elapsed_s, const std::string& row) {
  return fmt::format("{:<14} {}", fmt::format("[{}, {:.1f} s]", k, elapsed_s), row);
}

size_t progress_columns(bool tty, int fd) {
  if (tty) {
    winsize w{};
    return ::ioctl(fd, TIOCGWINSZ, &w) == 0 && w.ws_col > 1 ? w.ws_col - 1u : 99u;
  }
  if (const char* c = std::getenv("COLUMNS")) {
    char* end = nullptr;
    const long n = std::strtol(c, &end, 10);
    if (end != c && *end == '\0' && n >= 40) return static_cast<size_t>(n);
  }
  return 100;
}

void Runner::progress(const Result& r) {
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  std::string row = console_row(r);
  row = row.substr(0, row.find('\n'));
  const bool tty = ::isatty(STDERR_FILENO) != 0;
  const std::string line =
      fit_columns(progress_line(results_.size() + 1, elapsed, row), progress_columns(tty, STDERR_FILENO));
  std::fflush(stdout);  // what the family printed before (its plan of the run) comes first in a log
  if (tty) {
    fmt::print(stderr, "\r\033[K{}", line);
    drawn_ = true;
  } else {
    fmt::print(stderr, "{}\n", line);
  }
  std::fflush(stderr);
}

void Runner::clear_progress() {
  if (!drawn_) return;
  fmt::print(stderr, "\r\033[K");
  std::fflush(stderr);
  drawn_ = false;
}

void Runner::emit(Result r) {
  if (!options_.quiet) progress(r);
  if (sink_) sink_->append(r);
  results_.push_back(std::move(r));
}

void Runner::add(Result r) { emit(std::move(r)); }

Result Runner::run(Case& c) {
  Result r;
  r.key = c.key();
  r.params = c.params();
  r.model = c.model();
  const std::string waived = c.waived_reason();
  if (!waived.empty()) {
    r.status = Status::waived;
    r.reason = waived;
    emit(r);
    return r;
  }
  NvtxRange range(r.key + " " + r.params.dump());
  const std::string bus_id = bus_id_of(c.gpu());
  try {
    c.setup();
    std::unique_ptr<Timer> timer;
    if (c.gpu() >= 0)
      timer = gpu::make_event_timer(c.gpu(), c.stream(), c.host_synchronous() ? gpu::Latch::off : gpu::Latch::on);
    else
      timer = std::make_unique<HostTimer>();
    HarnessHooks hooks;
    std::optional<nvml::WindowMonitor> monitor;
    uint64_t clock_mark = 0;  // NVML time stamp of the last SM-clock sample before the run
    if (!bus_id.empty() && nvml::available()) {
      monitor.emplace([&bus_id] { return nvml::counters(bus_id); });
      hooks.sample_start = [&monitor] { monitor->start(); };
      // Flags from the counters integrated over the sample; where NVML has none, the throttle
      // reasons of the moment after it.
      hooks.probe = [&monitor, &bus_id] {
        if (const auto flags = monitor->finish()) return *flags;
        return nvml::throttle_reasons(bus_id).value_or(0) & nvml::kThrottleMask;
      };
      if (const auto cs = nvml::sm_clock_samples(bus_id, 0)) clock_mark = cs->last_us;
    }
    if (options_.profile_range && c.gpu() >= 0) {
      hooks.region = [](bool entering) { entering ? gpu::profiler_start() : gpu::profiler_stop(); };
    }
    if (!bus_id.empty()) {
      if (const auto s = nvml::sample(bus_id)) r.clocks["before"] = clocks_json(*s);
    }
    const Measurement m = measure(
        *timer, [&c] { c.launch(); }, options_.harness, hooks);
    if (!bus_id.empty()) {
      if (const auto s = nvml::sample(bus_id)) r.clocks["after"] = clocks_json(*s);
    }
    if (monitor) r.clocks["during"] = during_json(*monitor, nvml::sm_clock_samples(bus_id, clock_mark));
    r.take(m);
    for (uint64_t f : m.sample_flags) r.throttled = r.throttled || f != 0;
    const std::string wrong = c.verify();
    r.metrics = c.metrics(m.stats);
    r.extra = c.extra();
    if (!bus_id.empty()) {
      if (const auto s = nvml::static_info(bus_id); s && s->mig_enabled.value_or(false))
        waive_peaks(r.metrics, r.extra,
                    "MIG mode is on: a GPU instance has a fraction of the GPU's SMs and memory "
                    "bandwidth, so the full-GPU peak does not apply");
    }
    if (!wrong.empty()) {
      r.status = Status::fail;
      r.reason = "verification failed: " + wrong;
    }
  } catch (const UsageError&) {
    c.teardown();
    throw;  // bad input is the user's to fix: stop the run
  } catch (const std::exception& e) {
    r.status = Status::error;
    r.reason = e.what();
  }
  c.teardown();
  emit(r);
  return r;
}

void Runner::run_all(CaseList& cases) {
  for (auto& c : cases) {
    // The safe point of Ctrl-C / scancel (core/interrupt.hpp) for cases of one process.
    if (const int signo = interrupt_signal(); signo != 0 && options_.stop_on_signal) {
      record_stop(signo, c->key());
      return;
    }
    run(*c);
    c.reset();  // free its memory before the next case allocates
  }
}

}  // namespace gcb::bench
