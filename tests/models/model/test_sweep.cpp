// The layout grammar of `train --sweep`: degrees, flags, defaults (dp takes the ranks tp·pp leave),
// canonical names, and usage errors for what cannot run.
#include <gtest/gtest.h>

#include "core/error.hpp"
#include "models/model/sweep.hpp"

namespace gcb::models {
namespace {

TEST(Sweep, GrammarAndCanonicalNames) {
  const auto l = parse_sweep("dp,zero1,tp2,tp2-sp,pp4-gpipe,dp2-tp2,zero3-overlap", 4);
  ASSERT_EQ(l.size(), 7u);
  EXPECT_EQ(l[0].dp, 4);
  EXPECT_EQ(l[1].zero, ZeroStage::one);
  EXPECT_EQ(l[1].dp, 4);
  EXPECT_EQ(l[2].tp, 2);
  EXPECT_EQ(l[2].dp, 2);
  EXPECT_TRUE(l[3].sp);
  EXPECT_EQ(l[4].pp, 4);
  EXPECT_EQ(l[4].dp, 1);
  EXPECT_EQ(l[4].schedule, PipeSchedule::gpipe);
  EXPECT_EQ(l[4].name, "dp1-pp4-gpipe");
  EXPECT_EQ(l[5].name, "dp2-tp2");
  EXPECT_TRUE(l[6].overlap);
  EXPECT_EQ(l[6].name, "dp4-zero3-overlap");
  const TrainOptions o = apply_layout(TrainOptions{}, l[6]);
  EXPECT_EQ(o.zero, ZeroStage::three);
  EXPECT_TRUE(o.overlap_comm);
}

TEST(Sweep, DefaultRanksFitEveryLayout) {
  EXPECT_EQ(sweep_ranks("dp,zero1,zero2,zero3,tp2,tp2-sp,pp2-1f1b,dp2-tp2-pp2"), 8);
  EXPECT_EQ(sweep_ranks("tp2,pp3"), 6);
  EXPECT_EQ(sweep_ranks("dp"), 1);
  for (const LayoutSpec& l : parse_sweep("dp,tp2,pp2-1f1b,dp2-tp2-pp2", 8)) EXPECT_EQ(l.dp * l.tp * l.pp, 8) << l.name;
}

TEST(Sweep, WhatCannotRunIsAUsageError) {
  EXPECT_THROW(parse_sweep("tp3", 4), UsageError);
  EXPECT_THROW(parse_sweep("", 4), UsageError);
  EXPECT_THROW(parse_sweep("dp,,tp2", 4), UsageError);
  EXPECT_THROW(parse_sweep("zero4", 4), UsageError);
  EXPECT_THROW(parse_sweep("tp2-bogus", 4), UsageError);
}

}  // namespace
}  // namespace gcb::models
