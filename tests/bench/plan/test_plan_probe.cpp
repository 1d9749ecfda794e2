// `gcbench plan`'s host probe times its rank threads through the one harness and the multi-rank
// timer (RankTimer): these pin what a probe figure is — every rank's call timed at once, the
// sample the slowest rank's time, the figure the mean over samples — with sleeps, whose durations
// are lower bounds on any machine (a sleep never returns early), so the checks hold under load.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "bench/plan/plan.hpp"

namespace gcb::bench {
namespace {

HarnessOptions few_samples() {
  HarnessOptions h = probe_harness_options();
  h.target_sample_time = 4e-3;
  h.min_samples = h.max_samples = 4;  // a fixed count: the test's length does not depend on noise
  h.min_time = 0;
  h.max_time = 10;
  return h;
}

void sleep_ms(double ms) { std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(ms)); }

TEST(PlanProbe, AFigureIsTheSlowestRanksTimeAndEveryRankIsTimed) {
  // Rank 1 sleeps 2 ms per call, rank 0 0.25 ms: the figure is rank 1's (≥ 2 ms); the median over
  // ranks that the probe used before would lie between the two.
  std::atomic<int> made{0};
  const RanksAtOnce t = time_ranks_at_once(
      2,
      [&](int rank) {
        ++made;
        const double ms = rank == 1 ? 2.0 : 0.25;
        return std::function<void()>([ms] { sleep_ms(ms); });
      },
      few_samples());
  EXPECT_EQ(made.load(), 2);  // each rank built its own call, on its own thread
  EXPECT_GE(t.seconds, 2e-3);
  ASSERT_EQ(t.samples, 4u);
  ASSERT_EQ(t.per_rank.size(), 4u);  // the samples only: warm-up and calibration batches dropped
  for (const auto& ranks : t.per_rank) {
    ASSERT_EQ(ranks.size(), 2u);
    EXPECT_GE(ranks[1], 2e-3);
    EXPECT_GE(ranks[0], 0.25e-3);
  }
  // Rank 1 is the slow one in every sample unless rank 0's 0.25 ms sleep overslept by 1.75 ms on
  // average over a whole batch: the skew names it.
  EXPECT_EQ(t.skew.slowest_rank, 1);
  EXPECT_GT(t.skew.median_skew, 0.0);
}

TEST(PlanProbe, OneRankIsTimedAlone) {
  const RanksAtOnce t = time_ranks_at_once(
      1, [](int) { return std::function<void()>([] { sleep_ms(1.0); }); }, few_samples());
  EXPECT_GE(t.seconds, 1e-3);
  for (const auto& ranks : t.per_rank) EXPECT_EQ(ranks.size(), 1u);
  EXPECT_EQ(t.skew.median_skew, 0.0);
}

}  // namespace
}  // namespace gcb::bench
