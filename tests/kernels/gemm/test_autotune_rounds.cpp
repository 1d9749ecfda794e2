// The autotune's order (kernels/gemm/autotune_rounds.hpp) against a fake device whose every call
// is slower than the last (linear drift): alternating rounds rank the truly faster candidate
// first where timing each candidate once, in order, does not.
#include <gtest/gtest.h>

#include <cmath>
#include <utility>
#include <vector>

#include "kernels/gemm/autotune_rounds.hpp"

namespace gcb::kernels {
namespace {

// Candidate c takes base[c] seconds plus drift × (calls so far).
struct DriftingDevice {
  DriftingDevice(std::vector<double> b, double d) : base(std::move(b)), drift(d) {}
  std::vector<double> base;
  double drift;
  int calls = 0;
  std::vector<int> order;
  double time(int c) {
    order.push_back(c);
    return base[static_cast<size_t>(c)] + drift * calls++;
  }
};

TEST(AutotuneRounds, AlternatingRoundsCancelLinearDrift) {
  // Candidate 1 is 2 % faster, but each call is 5 % of a run slower than the one before.
  DriftingDevice once{{1.00, 0.98, 1.10}, 0.05};
  const auto single = time_round_robin(3, 1, [&](int c) { return once.time(c); });
  EXPECT_EQ(single.best, 0);  // one pass in order: the drift hands the win to the first candidate

  DriftingDevice dev{{1.00, 0.98, 1.10}, 0.05};
  const auto r = time_round_robin(3, 4, [&](int c) { return dev.time(c); });
  EXPECT_EQ(r.best, 1);
  EXPECT_EQ(dev.order, (std::vector<int>{0, 1, 2, 2, 1, 0, 0, 1, 2, 2, 1, 0}));
  // Every candidate's positions sum to 22 over the 4 rounds: the drift adds 22 × 0.05 / 4 to each.
  EXPECT_NEAR(r.mean_seconds[0], 1.00 + 0.275, 1e-12);
  EXPECT_NEAR(r.mean_seconds[1], 0.98 + 0.275, 1e-12);
  EXPECT_NEAR(r.mean_seconds[2], 1.10 + 0.275, 1e-12);
}

TEST(AutotuneRounds, FailedCandidateIsNotTimedAgain) {
  int calls_to_failed = 0;
  const auto r = time_round_robin(3, 4, [&](int c) {
    if (c == 0) {
      ++calls_to_failed;
      return std::nan("");
    }
    return c == 1 ? 2.0 : 1.0;
  });
  EXPECT_EQ(calls_to_failed, 1);
  EXPECT_TRUE(std::isnan(r.mean_seconds[0]));
  EXPECT_DOUBLE_EQ(r.mean_seconds[1], 2.0);
  EXPECT_EQ(r.best, 2);
}

TEST(AutotuneRounds, AllFailedHasNoBest) {
  const auto r = time_round_robin(2, 2, [](int) { return std::nan(""); });
  EXPECT_EQ(r.best, -1);
}

}  // namespace
}  // namespace gcb::kernels
