#include "bench/runner.hpp"

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/nvml.hpp"
#include "core/nvtx.hpp"
#include "reports/render.hpp"

namespace gcb::bench {

namespace {

nlohmann::json clocks_json(const nvml::DeviceSample& s) {
  auto opt = [](const auto& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); };
  nlohmann::json j = {{"sm_clock_mhz", opt(s.sm_clock_mhz)},     {"sm_clock_max_mhz", opt(s.sm_clock_max_mhz)},
                      {"mem_clock_mhz", opt(s.mem_clock_mhz)},   {"mem_clock_max_mhz", opt(s.mem_clock_max_mhz)},
                      {"power_mw", opt(s.power_mw)},             {"power_limit_mw", opt(s.power_limit_mw)},
                      {"temperature_c", opt(s.temperature_c)},   {"throttle_reasons", opt(s.throttle_reasons)}};
  if (s.throttle_reasons) j["throttle_reason_names"] = nvml::throttle_reason_names(*s.throttle_reasons);
  return j;
}

std::string bus_id_of(int gpu_index) {
  const auto& devices = gpu::runtime().devices;
  if (gpu_index < 0 || gpu_index >= static_cast<int>(devices.size())) return {};
  return devices[static_cast<size_t>(gpu_index)].pci_bus_id;
}

}  // namespace

Runner::Runner(RunnerOptions options, JsonlSink* sink) : options_(std::move(options)), sink_(sink) {
  validate(options_.harness);
}

void Runner::emit(Result r) {
  if (!options_.quiet) {
    if (!header_printed_) {
      fmt::print("{}", console_header());
      header_printed_ = true;
    }
    fmt::print("{}", console_row(r));
    std::fflush(stdout);
  }
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
    if (!bus_id.empty() && nvml::available()) {
      hooks.probe = [&bus_id] { return nvml::throttle_reasons(bus_id).value_or(0) & nvml::kThrottleMask; };
    }
    if (options_.profile_range && c.gpu() >= 0) {
      hooks.region = [](bool entering) { entering ? gpu::profiler_start() : gpu::profiler_stop(); };
    }
    if (!bus_id.empty()) {
      if (const auto s = nvml::sample(bus_id)) r.clocks["before"] = clocks_json(*s);
    }
    const Measurement m = measure(*timer, [&c] { c.launch(); }, options_.harness, hooks);
    if (!bus_id.empty()) {
      if (const auto s = nvml::sample(bus_id)) r.clocks["after"] = clocks_json(*s);
    }
    r.take(m);
    for (uint64_t f : m.sample_flags) r.throttled = r.throttled || f != 0;
    const std::string wrong = c.verify();
    r.metrics = c.metrics(m.stats);
    r.extra = c.extra();
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
    run(*c);
    c.reset();  // free its memory before the next case allocates
  }
}

}  // namespace gcb::bench
