// measure() (harness.hpp), the one timing loop: warm-up, cache flushing, batching, sampling until the stopping rule
// holds, statistics; HostTimer, the steady clock and the harness's option validation.
#include "core/harness.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fmt/format.h>
#include <utility>

#include "core/error.hpp"
#include "core/host_memory.hpp"

namespace gcb {

namespace {

class SteadyClock final : public Clock {
 public:
  double now() const override {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
  }
};

size_t default_flush_bytes() { return std::max<size_t>(2 * host_last_level_cache_bytes(), size_t{64} << 20); }

}  // namespace

const Clock& steady_clock() {
  static const SteadyClock clock;
  return clock;
}

std::string_view stop_reason_name(StopReason r) {
  switch (r) {
    case StopReason::converged: return "converged";
    case StopReason::max_samples: return "max_samples";
    case StopReason::max_time: return "max_time";
  }
  return "?";
}

HostTimer::HostTimer(const Clock& clock, size_t flush_bytes)
    : clock_(clock), flush_bytes_(flush_bytes ? flush_bytes : default_flush_bytes()) {}

double HostTimer::time_batch(const std::function<void()>& launch, int batch) {
  const double t0 = clock_.now();
  for (int i = 0; i < batch; ++i) launch();
  return clock_.now() - t0;
}

void HostTimer::flush() {
  // Allocated on first use: hot-mode runs never pay for it.
  if (flush_buffer_.empty()) flush_buffer_.assign(flush_bytes_, 0);
  volatile char sink = 0;
  for (size_t i = 0; i < flush_buffer_.size(); i += 64) {
    flush_buffer_[i] = static_cast<char>(flush_buffer_[i] + 1);
    sink = static_cast<char>(sink + flush_buffer_[i]);
  }
  (void)sink;
}

void validate(const HarnessOptions& o) {
  auto bad = [](const std::string& what) { return UsageError("harness options: " + what); };
  if (o.warmup < 0) throw bad("--warmup must be ≥ 0");
  if (o.min_samples < 1) throw bad("--min-samples must be ≥ 1");
  if (o.max_samples < o.min_samples)
    throw bad(fmt::format("--max-samples ({}) is below --min-samples ({})", o.max_samples, o.min_samples));
  if (!(o.min_time >= 0)) throw bad("--min-time must be ≥ 0");
  if (!(o.max_time > 0)) throw bad("--max-time must be > 0");
  if (o.max_time < o.min_time)
    throw bad(fmt::format("--max-time ({} s) is below --min-time ({} s)", o.max_time, o.min_time));
  if (!(o.noise > 0)) throw bad("--noise must be > 0 (a relative standard deviation, e.g. 0.005)");
  if (o.batch < 0) throw bad("batch must be ≥ 0");
  if (o.latch_retries < 0) throw bad("latch retries must be ≥ 0");
}

Measurement measure(Timer& timer, const std::function<void()>& launch, const HarnessOptions& o,
                    const HarnessHooks& hooks, const Clock& wall) {
  validate(o);
  Measurement m;
  m.timer = std::string(timer.kind());

  // One timed batch, retaken while its latch timed out (bounded); true in `.second` when every
  // try timed out.
  const auto timed = [&](int n) {
    double t = timer.time_batch(launch, n);
    for (int retry = 0; retry < o.latch_retries && timer.latch_timed_out(); ++retry) {
      ++m.latch_retakes;
      if (o.cold) timer.flush();
      t = timer.time_batch(launch, n);
    }
    return std::pair{t, timer.latch_timed_out()};
  };

  timer.prime(launch);
  // The budget (max_time) covers warm-up and sampling: no launch starts once it is spent, except
  // the first warm-up launch and the one sample every measurement has.
  const double start = wall.now();
  // Warm-up; the first warm-up launch also calibrates the batch size.
  int batch = o.batch;
  double first_launch = 0;
  for (int i = 0; i < std::max(o.warmup, batch == 0 ? 1 : 0); ++i) {
    if (i > 0 && wall.now() - start >= o.max_time) break;
    if (o.cold) timer.flush();
    const double t = i == 0 && batch == 0 ? timed(1).first : timer.time_batch(launch, 1);
    if (i == 0) first_launch = t;
    if (i == 0 && batch == 0) {
      const double per = std::max(t, 1e-9);
      // The 1e-9 keeps representation error (1e-3 / 1e-6 = 1000.0000000000001) from adding a launch.
      batch = static_cast<int>(std::clamp(std::ceil(o.target_sample_time / per * (1 - 1e-9)), 1.0, 1e5));
    }
  }
  if (batch == 0) batch = 1;
  // A fixed batch whose sample would outlast what is left of the budget is cut to fit it (one
  // launch at least): a sample of 20 collectives of a second each is not a 0.2 s budget.
  if (o.batch > 0 && first_launch > 0) {
    const double left = std::max(o.max_time - (wall.now() - start), 0.0);
    batch = static_cast<int>(std::clamp(std::floor(left / first_launch), 1.0, static_cast<double>(batch)));
  }
  // Cold mode times single launches: a batch would warm the caches after its first launch.
  if (o.cold) batch = 1;
  m.batch = batch;

  double measured = 0;
  // Welford's running mean and sum of squared deviations: O(1) per sample for the noise rule.
  double mean = 0, m2 = 0;
  if (hooks.region) hooks.region(true);
  const double sampling_start = wall.now();
  for (;;) {
    if (o.cold) timer.flush();
    if (hooks.sample_start) hooks.sample_start();
    const auto [batch_seconds, latch_timed_out] = timed(batch);
    const double t = batch_seconds / batch;
    if (latch_timed_out) m.latch_timeouts.push_back(m.samples.size());
    m.samples.push_back(t);
    measured += t * batch;
    if (hooks.probe) m.sample_flags.push_back(hooks.probe());
    const auto n = static_cast<int>(m.samples.size());
    const double delta = t - mean;
    mean += delta / n;
    m2 += delta * (t - mean);
    const double rel_sd = n > 1 && mean != 0 ? std::sqrt(m2 / (n - 1)) / std::fabs(mean) : 0.0;
    if (n >= o.min_samples && measured >= o.min_time && rel_sd <= o.noise) {
      m.stop = StopReason::converged;
      break;
    }
    if (n >= o.max_samples) {
      m.stop = StopReason::max_samples;
      break;
    }
    if (wall.now() - start >= o.max_time && n >= 1) {
      m.stop = StopReason::max_time;
      break;
    }
  }
  m.wall_seconds = wall.now() - sampling_start;
  if (hooks.region) hooks.region(false);
  m.stats = summarize(m.samples);
  return m;
}

}  // namespace gcb
