#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "core/stats.hpp"

namespace gcb {
namespace {

TEST(Stats, SummaryMatchesHandComputedValues) {
  const std::vector<double> x = {4, 1, 3, 2, 5};
  const Statistics s = summarize(x);
  EXPECT_EQ(s.count, 5u);
  EXPECT_DOUBLE_EQ(s.min, 1);
  EXPECT_DOUBLE_EQ(s.max, 5);
  EXPECT_DOUBLE_EQ(s.mean, 3);
  EXPECT_DOUBLE_EQ(s.median, 3);
  EXPECT_DOUBLE_EQ(s.p5, 1.2);  // NumPy linear: 1 + 0.05·4·(2 − 1)
  EXPECT_DOUBLE_EQ(s.p95, 4.8);
  EXPECT_DOUBLE_EQ(s.stddev, std::sqrt(2.5));
  EXPECT_DOUBLE_EQ(s.cv, std::sqrt(2.5) / 3);
}

TEST(Stats, EdgeCases) {
  EXPECT_EQ(summarize(std::vector<double>{}).count, 0u);
  const Statistics one = summarize(std::vector<double>{7});
  EXPECT_DOUBLE_EQ(one.median, 7);
  EXPECT_DOUBLE_EQ(one.stddev, 0);
  EXPECT_DOUBLE_EQ(percentile(std::vector<double>{1, 2, 3, 4}, 0.5), 2.5);
  EXPECT_DOUBLE_EQ(relative_stddev(std::vector<double>{2, 2, 2}), 0);
}

}  // namespace
}  // namespace gcb
