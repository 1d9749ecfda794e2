// The harness's stopping rule and statistics, driven by a fake clock and a fake timer so every
// sample value and every elapsed second is known.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/harness.hpp"
#include "tests/core/fake_clock.hpp"

namespace gcb {
namespace {

using test_support::FakeClock;

// Returns scripted batch times (cycling) and advances the fake clock by what it reports.
class FakeTimer final : public Timer {
 public:
  FakeTimer(FakeClock& clock, std::vector<double> per_launch) : clock_(clock), times_(std::move(per_launch)) {}
  std::string_view kind() const override { return "fake"; }
  double time_batch(const std::function<void()>& launch, int batch) override {
    for (int i = 0; i < batch; ++i) launch();
    const double t = times_[next_++ % times_.size()] * batch;
    clock_.t += t;
    return t;
  }
  void flush() override { ++flushes; }
  int flushes = 0;
  size_t next_ = 0;

 private:
  FakeClock& clock_;
  std::vector<double> times_;
};

HarnessOptions quiet_options() {
  HarnessOptions o;
  o.warmup = 2;
  o.min_samples = 5;
  o.max_samples = 50;
  o.min_time = 0;
  o.max_time = 100;
  o.noise = 0.01;
  o.batch = 1;
  return o;
}

TEST(Harness, ConstantSamplesConvergeAtMinSamples) {
  FakeClock clock;
  FakeTimer timer(clock, {1e-3});
  int launches = 0;
  const Measurement m = measure(
      timer, [&] { ++launches; }, quiet_options(), {}, clock);
  EXPECT_EQ(m.stop, StopReason::converged);
  ASSERT_EQ(m.samples.size(), 5u);
  EXPECT_EQ(launches, 2 + 5);  // warm-up launches are not samples
  EXPECT_DOUBLE_EQ(m.stats.median, 1e-3);
  EXPECT_DOUBLE_EQ(m.stats.cv, 0);
}

TEST(Harness, MinTimeKeepsSampling) {
  FakeClock clock;
  FakeTimer timer(clock, {1e-3});
  HarnessOptions o = quiet_options();
  o.min_time = 0.02;  // 20 samples of 1 ms
  const Measurement m = measure(
      timer, [] {}, o, {}, clock);
  EXPECT_EQ(m.stop, StopReason::converged);
  EXPECT_EQ(m.samples.size(), 20u);
}

TEST(Harness, NoisySamplesStopAtMaxSamples) {
  FakeClock clock;
  FakeTimer timer(clock, {1e-3, 2e-3});  // CV ≈ 0.47, never below 1 %
  const Measurement m = measure(
      timer, [] {}, quiet_options(), {}, clock);
  EXPECT_EQ(m.stop, StopReason::max_samples);
  EXPECT_EQ(m.samples.size(), 50u);
  EXPECT_DOUBLE_EQ(m.stats.min, 1e-3);
  EXPECT_DOUBLE_EQ(m.stats.max, 2e-3);
}

TEST(Harness, NoisySamplesStopAtMaxTime) {
  FakeClock clock;
  FakeTimer timer(clock, {1.0, 2.0});
  HarnessOptions o = quiet_options();
  // Seconds of fake wall time: warm-up 1+2, then samples 1+2+1+2+1 = 10 after 5 samples.
  o.max_time = 10;
  const Measurement m = measure(
      timer, [] {}, o, {}, clock);
  EXPECT_EQ(m.stop, StopReason::max_time);
  EXPECT_EQ(m.samples.size(), 5u);
  EXPECT_DOUBLE_EQ(m.wall_seconds, 7.0);  // the sampling part
}

TEST(Harness, WarmUpStopsWhenTheBudgetIsSpent) {
  FakeClock clock;
  FakeTimer timer(clock, {1.0});
  HarnessOptions o = quiet_options();
  o.warmup = 10;
  o.max_time = 2.5;
  int launches = 0;
  const Measurement m = measure(
      timer, [&] { ++launches; }, o, {}, clock);
  // Warm-up launches start at 0, 1 and 2 s; at 3 s the budget is spent: one sample, then stop.
  EXPECT_EQ(launches, 3 + 1);
  EXPECT_EQ(m.samples.size(), 1u);
  EXPECT_EQ(m.stop, StopReason::max_time);
  EXPECT_DOUBLE_EQ(clock.t, 4.0);
}

TEST(Harness, AFixedBatchIsCutToWhatIsLeftOfTheBudget) {
  // nccl-tests' 20 ops per sample at 0.1 s per op would make one 2 s sample of a 0.5 s budget.
  FakeClock clock;
  FakeTimer timer(clock, {0.1});
  HarnessOptions o = quiet_options();
  o.warmup = 1;
  o.batch = 20;
  o.max_time = 0.5;
  const Measurement m = measure(
      timer, [] {}, o, {}, clock);
  EXPECT_EQ(m.batch, 4);  // 0.4 s left after the 0.1 s warm-up launch
  EXPECT_EQ(m.samples.size(), 1u);
  EXPECT_NEAR(clock.t, 0.5, 1e-12);
  // With room to spare the batch stays as asked.
  FakeClock roomy_clock;
  FakeTimer roomy(roomy_clock, {0.1});
  o.max_time = 100;
  EXPECT_EQ(measure(
                roomy, [] {}, o, {}, roomy_clock)
                .batch,
            20);
}

TEST(Harness, NoiseRuleUsesRelativeStddev) {
  FakeClock clock;
  // Alternating 1.00 / 1.01 ms: relative stddev ≈ 0.5 %, below a 1 % target.
  FakeTimer timer(clock, {1.00e-3, 1.01e-3});
  const Measurement m = measure(
      timer, [] {}, quiet_options(), {}, clock);
  EXPECT_EQ(m.stop, StopReason::converged);
  EXPECT_EQ(m.samples.size(), 5u);
  EXPECT_LT(m.stats.cv, 0.01);
}

TEST(Harness, AutoBatchReachesTargetSampleTime) {
  FakeClock clock;
  FakeTimer timer(clock, {1e-6});
  HarnessOptions o = quiet_options();
  o.batch = 0;
  o.target_sample_time = 1e-3;
  const Measurement m = measure(
      timer, [] {}, o, {}, clock);
  EXPECT_EQ(m.batch, 1000);
  EXPECT_DOUBLE_EQ(m.stats.median, 1e-6);  // per launch, not per batch
}

TEST(Harness, ColdModeFlushesBeforeEverySampleAndTimesSingleLaunches) {
  FakeClock clock;
  FakeTimer timer(clock, {1e-3});
  HarnessOptions o = quiet_options();
  o.cold = true;
  o.batch = 8;
  const Measurement m = measure(
      timer, [] {}, o, {}, clock);
  EXPECT_EQ(m.batch, 1);
  EXPECT_EQ(timer.flushes, 2 + 5);  // each warm-up and each sample
}

TEST(Harness, ProbeFlagsAndRegionHook) {
  FakeClock clock;
  FakeTimer timer(clock, {1e-3});
  int calls = 0;
  std::vector<bool> region;
  HarnessHooks hooks;
  hooks.probe = [&] { return ++calls == 3 ? uint64_t{0x8} : uint64_t{0}; };
  hooks.region = [&](bool entering) { region.push_back(entering); };
  const Measurement m = measure(
      timer, [] {}, quiet_options(), hooks, clock);
  ASSERT_EQ(m.sample_flags.size(), m.samples.size());
  EXPECT_EQ(m.sample_flags[2], 0x8u);
  EXPECT_EQ(region, (std::vector<bool>{true, false}));
}

TEST(Harness, SampleStartBracketsEverySampleWithTheProbe) {
  FakeClock clock;
  FakeTimer timer(clock, {1e-3});
  std::string order;
  HarnessHooks hooks;
  hooks.sample_start = [&] { order += '['; };
  hooks.probe = [&] {
    order += ']';
    return uint64_t{0};
  };
  const Measurement m = measure(
      timer, [] {}, quiet_options(), hooks, clock);
  ASSERT_EQ(m.samples.size(), 5u);
  EXPECT_EQ(order, "[][][][][]");  // one pair per sample; warm-ups are not bracketed
}

TEST(Harness, RejectsImpossibleOptions) {
  FakeClock clock;
  FakeTimer timer(clock, {1e-3});
  HarnessOptions o = quiet_options();
  o.max_samples = 2;  // below min_samples
  EXPECT_THROW(measure(
                   timer, [] {}, o, {}, clock),
               UsageError);
  o = quiet_options();
  o.noise = 0;
  EXPECT_THROW(measure(
                   timer, [] {}, o, {}, clock),
               UsageError);
}

// A timer whose latch times out on scripted calls of time_batch (warm-ups included, in order).
class LatchTimer final : public Timer {
 public:
  LatchTimer(FakeClock& clock, std::vector<bool> timeouts) : clock_(clock), timeouts_(std::move(timeouts)) {}
  std::string_view kind() const override { return "fake latch"; }
  void prime(const std::function<void()>& launch) override {
    primed_before_first_batch = calls == 0;
    ++primes;
    launch();
  }
  double time_batch(const std::function<void()>& launch, int batch) override {
    for (int i = 0; i < batch; ++i) launch();
    timed_out_ = calls < timeouts_.size() && timeouts_[calls];
    ++calls;
    // A timed-out sample is slow (enqueue time leaked in): 5 ms instead of 1 ms per launch.
    const double t = (timed_out_ ? 5e-3 : 1e-3) * batch;
    clock_.t += t;
    return t;
  }
  bool latch_timed_out() const override { return timed_out_; }
  size_t calls = 0;
  int primes = 0;
  bool primed_before_first_batch = false;

 private:
  FakeClock& clock_;
  std::vector<bool> timeouts_;
  bool timed_out_ = false;
};

TEST(Harness, PrimesTheTimerOnceBeforeWarmup) {
  FakeClock clock;
  LatchTimer timer(clock, {});
  int launches = 0;
  const Measurement m = measure(
      timer, [&] { ++launches; }, quiet_options(), {}, clock);
  EXPECT_EQ(timer.primes, 1);
  EXPECT_TRUE(timer.primed_before_first_batch);
  EXPECT_EQ(launches, 1 + 2 + 5);  // prime, warm-up, samples
  EXPECT_EQ(m.latch_retakes, 0);
  EXPECT_TRUE(m.latch_timeouts.empty());
}

TEST(Harness, SampleWhoseLatchTimedOutIsRetaken) {
  FakeClock clock;
  // Calls 0-1 are warm-ups (batch fixed at 1: not retaken), call 2 is sample 0: it times out once,
  // the retake (call 3) is clean.
  LatchTimer timer(clock, {false, false, true, false});
  const Measurement m = measure(
      timer, [] {}, quiet_options(), {}, clock);
  EXPECT_EQ(m.latch_retakes, 1);
  EXPECT_TRUE(m.latch_timeouts.empty());
  ASSERT_EQ(m.samples.size(), 5u);
  EXPECT_DOUBLE_EQ(m.samples[0], 1e-3);  // the retake, not the 5 ms timed-out batch
  EXPECT_EQ(m.stop, StopReason::converged);
  for (uint64_t f : m.sample_flags) EXPECT_EQ(f, 0u);  // not a throttle flag
}

TEST(Harness, PersistentLatchTimeoutIsKeptAndListed) {
  FakeClock clock;
  HarnessOptions o = quiet_options();
  o.latch_retries = 2;
  // Sample 1 (calls 3, 4, 5 with its two retakes) times out every time.
  LatchTimer timer(clock, {false, false, false, true, true, true});
  const Measurement m = measure(
      timer, [] {}, o, {}, clock);
  EXPECT_EQ(m.latch_retakes, 2);
  EXPECT_EQ(m.latch_timeouts, (std::vector<size_t>{1}));
  ASSERT_GE(m.samples.size(), 2u);
  EXPECT_DOUBLE_EQ(m.samples[1], 5e-3);
}

TEST(Harness, CalibrationIsRetakenAfterLatchTimeout) {
  FakeClock clock;
  HarnessOptions o = quiet_options();
  o.batch = 0;
  o.target_sample_time = 10e-3;
  // The calibrating warm-up (call 0) times out: calibrated on its 5 ms it would pick batch 2;
  // the retake's 1 ms gives 10.
  LatchTimer timer(clock, {true, false});
  const Measurement m = measure(
      timer, [] {}, o, {}, clock);
  EXPECT_EQ(m.batch, 10);
  EXPECT_EQ(m.latch_retakes, 1);
}

TEST(Harness, HostTimerMeasuresRealWork) {
  HostTimer timer;
  volatile double sink = 0;
  const double t = timer.time_batch(
      [&] {
        for (int i = 0; i < 100000; ++i) sink = sink + 1.0;
      },
      3);
  EXPECT_GT(t, 0);
  EXPECT_EQ(sink, 300000.0);
}

}  // namespace
}  // namespace gcb
