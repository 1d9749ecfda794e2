// Per-sample integration of NVML's running counters (core/nvml_window.hpp) with fake readings:
// mean power from the energy difference, throttled time from the violation counters, flags per
// limiter, and a fallback signal where the counters are missing.
#include <gtest/gtest.h>

#include <vector>

#include "core/nvml_window.hpp"

namespace gcb::nvml {
namespace {

DeviceCounters reading(double t, uint64_t energy_mj, uint64_t power_ns, uint64_t thermal_ns, uint64_t any_ns) {
  DeviceCounters c;
  c.host_seconds = t;
  c.energy_mj = energy_mj;
  c.power_violation_ns = power_ns;
  c.thermal_violation_ns = thermal_ns;
  c.board_violation_ns = 0;
  c.reliability_violation_ns = 0;
  c.any_violation_ns = any_ns;
  return c;
}

TEST(NvmlWindow, IntegratesEnergyAndViolationTimeOverTheSample) {
  // 0.5 s, 200 J → 400 W; power held the clocks down for 0.1 s of it.
  const SampleWindow w =
      integrate(reading(10.0, 1'000'000, 5'000, 0, 5'000), reading(10.5, 1'200'000, 100'005'000, 0, 100'005'000));
  EXPECT_DOUBLE_EQ(w.seconds, 0.5);
  EXPECT_DOUBLE_EQ(*w.mean_power_w, 400.0);
  EXPECT_DOUBLE_EQ(*w.throttled_fraction, 0.2);
  EXPECT_EQ(w.flags, kSwPowerCap);
  EXPECT_TRUE(w.violation_counters);
}

TEST(NvmlWindow, ASlowdownInTheMiddleIsSeenThoughItEndedBeforeTheSample) {
  // Thermal slowdown for 3 ms inside the sample; by the end no limiter is active (a reading of
  // the reasons after the sample would say 0).
  const SampleWindow w = integrate(reading(0, 0, 0, 7, 7), reading(0.01, 3'000, 0, 3'000'007, 3'000'007));
  EXPECT_EQ(w.flags, kSwThermalSlowdown);
  EXPECT_DOUBLE_EQ(*w.throttled_fraction, 0.3);
}

TEST(NvmlWindow, MonitorAddsWindowsUpAndFallsBackWithoutCounters) {
  std::vector<std::optional<DeviceCounters>> script = {
      reading(0, 0, 0, 0, 0), reading(1, 300'000, 0, 0, 0),                             // 300 W, clean
      reading(2, 300'000, 0, 0, 0), reading(3, 800'000, 500'000'000, 0, 500'000'000)};  // 500 W, half throttled
  size_t next = 0;
  WindowMonitor m([&] { return script[next++]; });
  m.start();
  EXPECT_EQ(m.finish(), std::optional<uint64_t>{0});
  m.start();
  EXPECT_EQ(m.finish(), std::optional<uint64_t>{kSwPowerCap});
  EXPECT_EQ(m.samples(), 2);
  EXPECT_EQ(m.samples_throttled(), 1);
  EXPECT_DOUBLE_EQ(*m.mean_power_w(), 400.0);
  EXPECT_DOUBLE_EQ(*m.throttled_fraction(), 0.25);

  DeviceCounters energy_only;
  energy_only.energy_mj = 0;
  DeviceCounters energy_later = energy_only;
  energy_later.host_seconds = 1;
  energy_later.energy_mj = 100'000;
  std::vector<std::optional<DeviceCounters>> bare = {energy_only, energy_later};
  size_t i = 0;
  WindowMonitor no_violations([&] { return bare[i++]; });
  no_violations.start();
  EXPECT_EQ(no_violations.finish(), std::nullopt);  // the caller falls back to the reasons of the moment
  EXPECT_DOUBLE_EQ(*no_violations.mean_power_w(), 100.0);
  EXPECT_FALSE(no_violations.throttled_fraction().has_value());
}

TEST(NvmlWindow, CounterResetIsNotANegativeWindow) {
  const SampleWindow w = integrate(reading(0, 5'000, 9'000, 0, 9'000), reading(1, 1'000, 10, 0, 10));
  EXPECT_FALSE(w.mean_power_w.has_value());
  EXPECT_FALSE(w.throttled_fraction.has_value());
  EXPECT_EQ(w.flags, 0u);
}

}  // namespace
}  // namespace gcb::nvml
