// The measurement harness: the only code in gcbench that times anything (docs/design.md "Harness").
// A Timer knows how to time a batch of launches on one kind of device (host steady clock, CUDA
// events behind a blocking kernel); measure() owns warm-up, cache flushing, batching, the
// sampling loop, its stopping rule and the statistics.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/stats.hpp"

namespace gcb {

// Wall-clock source for budgets and host timing; injectable so tests can drive the harness
// with a fake clock.
class Clock {
 public:
  virtual ~Clock() = default;
  virtual double now() const = 0;  // seconds, monotonic
};
const Clock& steady_clock();

class Timer {
 public:
  virtual ~Timer() = default;
  virtual std::string_view kind() const = 0;
  // Runs `launch` once, untimed and outside any latch, and waits for it; measure() calls it before
  // warm-up. A first launch may wait for work no sample should see: CUDA's lazy module loading
  // (the default since 12.2) loads a kernel's module at its first launch, which behind a held
  // stream waits for the latch's timeout (NVIDIA/nvbench issue #136). Default: nothing (a host
  // timer's first warm-up launch is the same thing).
  virtual void prime(const std::function<void()>& launch) { (void)launch; }
  // Runs `launch` `batch` times back to back and returns the seconds the batch took. Blocking:
  // when it returns, the work has completed.
  virtual double time_batch(const std::function<void()>& launch, int batch) = 0;
  // True when the latch of the batch just timed gave up (its timeout passed before the host
  // released it): enqueue time may be in that sample, so measure() retakes it. Not a throttle.
  virtual bool latch_timed_out() const { return false; }
  // Evicts the caches the next sample would otherwise hit (cold mode). Never timed.
  virtual void flush() {}
};

// Host timer: the clock read around the batch. flush() streams a buffer of `flush_bytes`
// (default: 2 × the last-level cache size reported by sysconf, at least 64 MiB) through the
// caches.
class HostTimer final : public Timer {
 public:
  explicit HostTimer(const Clock& clock = steady_clock(), size_t flush_bytes = 0);
  std::string_view kind() const override { return "host steady_clock"; }
  double time_batch(const std::function<void()>& launch, int batch) override;
  void flush() override;

 private:
  const Clock& clock_;
  size_t flush_bytes_;
  std::vector<char> flush_buffer_;
};

struct HarnessOptions {
  int warmup = 3;                    // untimed launches before sampling (the first also calibrates batch)
  int min_samples = 10;              // never stop with fewer
  int max_samples = 1000;            // budget: stop here whatever the noise
  double min_time = 0.1;             // seconds of measured time needed before the noise rule may stop
  double max_time = 5.0;             // budget: wall seconds of warm-up and sampling of one case
  double noise = 0.005;              // stop once relative stddev of the samples ≤ this (0.5 %)
  bool cold = false;                 // flush caches before every sample
  int batch = 0;                     // launches per sample; 0 = choose so a sample lasts ≥ target
  double target_sample_time = 1e-3;  // seconds, for batch = 0
  int latch_retries = 2;             // retakes of one sample whose latch timed out before it is kept, flagged
};

enum class StopReason { converged, max_samples, max_time };
std::string_view stop_reason_name(StopReason r);

struct Measurement {
  std::vector<double> samples;         // seconds per launch (batch time / batch), in order taken
  std::vector<uint64_t> sample_flags;  // per sample, from the probe (e.g. NVML throttle reasons)
  int latch_retakes = 0;               // samples (and calibrations) retaken after a latch timeout
  std::vector<size_t> latch_timeouts;  // indices of samples kept although their latch timed out
  Statistics stats;                    // of `samples`
  StopReason stop = StopReason::converged;
  double wall_seconds = 0;  // time spent in the sampling loop
  int batch = 1;
  std::string timer;
};

// Called just before each timed sample (after any cache flush), e.g. to read running counters.
using SampleStart = std::function<void()>;
// Called after each sample; returns flags recorded beside it (0 = nothing to report).
using SampleProbe = std::function<uint64_t()>;
// Called with true just before the first timed sample and false after the last (used for
// --profile-range: cudaProfilerStart/Stop around the timed region only).
using RegionHook = std::function<void(bool entering)>;

struct HarnessHooks {
  SampleStart sample_start;
  SampleProbe probe;
  RegionHook region;
};

// Validates options and throws gcb::UsageError for impossible ones (min > max, noise ≤ 0, …).
void validate(const HarnessOptions& options);

// Measures `launch` until the stopping rule holds: at least min_samples samples and min_time of
// measured time, and relative stddev ≤ noise; or until max_samples samples or max_time wall
// seconds (the budget; stop says which). `wall` measures the budget, which covers warm-up and
// sampling: warm-up stops when it is spent, and a fixed batch is cut (to one launch at least)
// when the first warm-up launch shows that a sample would outlast what is left. So a case
// lasts at most max_time plus its first warm-up launch and one sample (plus latch retakes).
// The timer is primed first (Timer::prime), outside the budget; a sample whose latch timed out
// is retaken up to latch_retries times, then kept and listed in latch_timeouts.
Measurement measure(Timer& timer, const std::function<void()>& launch, const HarnessOptions& options,
                    const HarnessHooks& hooks = {}, const Clock& wall = steady_clock());

}  // namespace gcb
