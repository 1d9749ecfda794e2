// nvml_window.hpp's per-sample window: NVML counters read at a sample's edges (integrate) and WindowMonitor's mean
// power, throttled fraction and per-sample throttle flags over a case.
#include "core/nvml_window.hpp"

namespace gcb::nvml {

namespace {

// Growth of a running counter, or nullopt when either reading is missing (or it went backwards:
// a driver reload resets them).
std::optional<uint64_t> growth(const std::optional<uint64_t>& a, const std::optional<uint64_t>& b) {
  if (!a || !b || *b < *a) return std::nullopt;
  return *b - *a;
}

}  // namespace

SampleWindow integrate(const DeviceCounters& before, const DeviceCounters& after) {
  SampleWindow w;
  w.seconds = after.host_seconds - before.host_seconds;
  if (!(w.seconds > 0)) return w;
  if (const auto e = growth(before.energy_mj, after.energy_mj))
    w.mean_power_w = static_cast<double>(*e) * 1e-3 / w.seconds;
  if (const auto v = growth(before.any_violation_ns, after.any_violation_ns))
    w.throttled_fraction = static_cast<double>(*v) * 1e-9 / w.seconds;
  w.violation_counters = (before.power_violation_ns && after.power_violation_ns) ||
                         (before.thermal_violation_ns && after.thermal_violation_ns) ||
                         (before.any_violation_ns && after.any_violation_ns);
  const auto grew = [&](const std::optional<uint64_t>& a, const std::optional<uint64_t>& b) {
    const auto g = growth(a, b);
    return g && *g > 0;
  };
  if (grew(before.power_violation_ns, after.power_violation_ns)) w.flags |= kSwPowerCap;
  if (grew(before.thermal_violation_ns, after.thermal_violation_ns)) w.flags |= kSwThermalSlowdown;
  if (grew(before.board_violation_ns, after.board_violation_ns) ||
      grew(before.reliability_violation_ns, after.reliability_violation_ns))
    w.flags |= kHwSlowdown;
  return w;
}

void WindowMonitor::start() { before_ = read_(); }

std::optional<uint64_t> WindowMonitor::finish() {
  const auto after = read_();
  if (!before_ || !after) return std::nullopt;
  const SampleWindow w = integrate(*before_, *after);
  before_.reset();
  ++samples_;
  seconds_ += w.seconds;
  if (w.mean_power_w) {
    energy_j_ += *w.mean_power_w * w.seconds;
    power_seconds_ += w.seconds;
  }
  if (w.throttled_fraction) {
    violation_seconds_ += *w.throttled_fraction * w.seconds;
    violation_window_ += w.seconds;
  }
  if (w.flags) ++throttled_;
  if (!w.violation_counters) return std::nullopt;
  return w.flags;
}

std::optional<double> WindowMonitor::mean_power_w() const {
  if (!(power_seconds_ > 0)) return std::nullopt;
  return energy_j_ / power_seconds_;
}

std::optional<double> WindowMonitor::throttled_fraction() const {
  if (!(violation_window_ > 0)) return std::nullopt;
  return violation_seconds_ / violation_window_;
}

}  // namespace gcb::nvml
