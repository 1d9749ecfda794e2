// What the GPU did during each timed sample, from NVML's running counters read at the sample's
// edges (energy, time held below application clocks by each limiter), accumulated over a case:
// mean power, the fraction of time throttled, and per-sample throttle flags. One reading after a
// sample sees only how it ended; a slowdown in its middle would pass unseen. Pure C++ over
// nvml::DeviceCounters, so it is tested with fakes.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <utility>

#include "core/nvml.hpp"

namespace gcb::nvml {

struct SampleWindow {
  double seconds = 0;                        // host time between the two readings
  std::optional<double> mean_power_w;        // Δenergy / Δt
  std::optional<double> throttled_fraction;  // Δ(time below application clocks, any limiter) / Δt
  // kThrottleMask bits for the limiters whose violation time grew: power → kSwPowerCap,
  // thermal → kSwThermalSlowdown, board limit and reliability → kHwSlowdown.
  uint64_t flags = 0;
  bool violation_counters = false;  // both readings had the violation counters
};
SampleWindow integrate(const DeviceCounters& before, const DeviceCounters& after);

// Reads counters through `read` before and after every sample (HarnessHooks::sample_start and
// ::probe) and adds the windows up.
class WindowMonitor {
 public:
  using Reader = std::function<std::optional<DeviceCounters>()>;
  explicit WindowMonitor(Reader read) : read_(std::move(read)) {}
  void start();
  // The flags of the sample that just ended; nullopt when NVML has no violation counters here
  // (the caller may fall back to the throttle reasons of the moment).
  std::optional<uint64_t> finish();
  // Over all samples so far: energy / time, violation time / time; nullopt where NVML had no counter.
  std::optional<double> mean_power_w() const;
  std::optional<double> throttled_fraction() const;
  int samples() const { return samples_; }
  int samples_throttled() const { return throttled_; }

 private:
  Reader read_;
  std::optional<DeviceCounters> before_;
  double seconds_ = 0, power_seconds_ = 0, energy_j_ = 0, violation_seconds_ = 0, violation_window_ = 0;
  int samples_ = 0, throttled_ = 0;
};

}  // namespace gcb::nvml
