// `plan --verify`'s judgement of the best layout: layouts whose measured rounds overlap the
// fastest layout's are tied with it (the measurement cannot order them).
#include <gtest/gtest.h>

#include "bench/plan/plan.hpp"

namespace gcb::bench {
namespace {

TEST(PlanVerifyTies, OverlappingRoundsTieWithTheFastest) {
  // Fastest by median: layout 1 (1.05, rounds 1.00–1.10). Layout 0's rounds start at 0.96, below
  // its top: tied. Layout 2 starts at 1.10 exactly: tied (touching ranges). Layout 3 starts above: not.
  const std::vector<std::vector<double>> rounds = {{0.96, 1.47}, {1.00, 1.10}, {1.10, 1.20}, {1.11, 1.12}};
  EXPECT_EQ(measured_ties(rounds), (std::vector<size_t>{0, 1, 2}));
}

TEST(PlanVerifyTies, SingleRoundsTieOnlyWhenEqual) {
  EXPECT_EQ(measured_ties({{2.0}, {1.0}, {1.0}, {1.5}}), (std::vector<size_t>{1, 2}));
  EXPECT_EQ(measured_ties({{3.0}}), (std::vector<size_t>{0}));
}

TEST(PlanVerifyTies, NoMeasurementsNoTies) {
  EXPECT_TRUE(measured_ties({}).empty());
  EXPECT_EQ(measured_ties({{}, {1.0, 2.0}}), (std::vector<size_t>{1}));  // a layout without rounds never ties
}

}  // namespace
}  // namespace gcb::bench
