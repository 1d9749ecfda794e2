// device_fit.hpp: the LM head chunked just enough for a rank to fit a GPU's memory budget. The
// budgets are built from the theory's own bytes, so each case sits exactly at a boundary: the whole
// head fits a budget of its own bytes; one byte less needs chunks, and the chosen rows are the
// most that fit (one more row does not); a budget below the one-row bytes fits nothing.
#include <gtest/gtest.h>

#include "models/theory/device_fit.hpp"
#include "models/theory/theory.hpp"
#include "tests/models/engine/layout_runs.hpp"

namespace gcb::models {
namespace {

uint64_t bytes_with(TrainOptions o, const ParallelLayout& lay, int rows) {
  o.logit_rows = rows;
  return rank_bytes_lower_bound(o, lay);
}

TEST(DeviceFit, TheHeadIsChunkedJustEnoughToFit) {
  TrainOptions o = test::tiny_options(2, 4, 1);  // R = 4 · 16 = 64 rows
  o.model.vocab = 4096;                          // the logits dominate: 64 · 4096 fp32 = 1 MiB
  for (const ParallelLayout lay : {ParallelLayout{1, 1, 1}, ParallelLayout{1, 2, 1}, ParallelLayout{1, 1, 2}}) {
    const uint64_t whole = bytes_with(o, lay, 0), one = bytes_with(o, lay, 1);
    ASSERT_LT(one, whole);
    EXPECT_EQ(logit_rows_to_fit(o, lay, whole), 0);  // fits whole: nothing to chunk
    const std::optional<int> rows = logit_rows_to_fit(o, lay, whole - 1);
    ASSERT_TRUE(rows.has_value());
    EXPECT_GE(*rows, 1);
    EXPECT_LT(*rows, 64);
    EXPECT_LE(bytes_with(o, lay, *rows), whole - 1);
    EXPECT_GT(bytes_with(o, lay, *rows + 1), whole - 1);  // the most rows that fit
    const uint64_t at20 = bytes_with(o, lay, 20);
    EXPECT_EQ(logit_rows_to_fit(o, lay, at20), 20);
    EXPECT_FALSE(logit_rows_to_fit(o, lay, one - 1).has_value());  // not even one row at a time
  }
}

TEST(DeviceFit, ARequestedChunkIsKeptAndTheBoundIsTheLargestStage) {
  TrainOptions o = test::tiny_options(2, 2, 1);
  o.logit_rows = 7;
  EXPECT_EQ(logit_rows_to_fit(o, {1, 1, 1}, 1), 7);  // the user's rows, whatever the budget
  o.logit_rows = 0;
  const ParallelLayout pp2{1, 1, 2};
  const StepTheory th = step_theory(o, pp2);
  uint64_t most = 0;
  for (const StageTheory& s : th.stages) most = std::max<uint64_t>(most, s.states.total() + s.activation_bytes);
  EXPECT_EQ(rank_bytes_lower_bound(o, pp2), most);
  EXPECT_GT(rank_bytes_lower_bound(o, pp2), 0u);
}

}  // namespace
}  // namespace gcb::models
