// The order of a step's work per pipeline stage: no pipeline alternates forward and backward;
// GPipe runs every forward first; 1F1B warms up with p − s − 1 forwards and pairs the steady
// state's sends and receives; every schedule runs each micro-batch's forward before its
// backward and the backwards in order 0…m−1 (which is why schedules agree bitwise).
#include <gtest/gtest.h>

#include "models/engine/pipeline_schedule.hpp"

namespace gcb::models {
namespace {

std::string computes(const std::vector<PipeAction>& actions) {
  std::vector<PipeAction> only;
  for (const PipeAction& a : actions)
    if (a.kind != PipeAction::Kind::exchange) only.push_back(a);
  return describe(only);
}

TEST(PipelineSchedule, WithoutAPipelineEachBackwardFollowsItsForward) {
  for (PipeSchedule s : {PipeSchedule::gpipe, PipeSchedule::one_f_one_b}) {
    EXPECT_EQ(computes(pipeline_actions(s, 1, 0, 3)), "F0 B0 F1 B1 F2 B2");
  }
}

TEST(PipelineSchedule, GpipeRunsAllForwardsThenAllBackwards) {
  EXPECT_EQ(computes(pipeline_actions(PipeSchedule::gpipe, 2, 0, 3)), "F0 F1 F2 B0 B1 B2");
  EXPECT_EQ(describe(pipeline_actions(PipeSchedule::gpipe, 2, 1, 1)),
            "x(-1,-1,-1,0) F0 x(0,-1,-1,-1) x(-1,0,-1,-1) B0 x(-1,-1,0,-1)");
}

TEST(PipelineSchedule, OneFOneBWarmsUpThenAlternates) {
  // 4 stages, 6 micro-batches: stage s warms up with 3 − s forwards.
  EXPECT_EQ(computes(pipeline_actions(PipeSchedule::one_f_one_b, 4, 0, 6)), "F0 F1 F2 F3 B0 F4 B1 F5 B2 B3 B4 B5");
  EXPECT_EQ(computes(pipeline_actions(PipeSchedule::one_f_one_b, 4, 3, 6)), "F0 B0 F1 B1 F2 B2 F3 B3 F4 B4 F5 B5");
  // Fewer micro-batches than stages: all forwards are warm-up.
  EXPECT_EQ(computes(pipeline_actions(PipeSchedule::one_f_one_b, 4, 0, 2)), "F0 F1 B0 B1");
  // The steady state sends an output and receives an output gradient in one exchange.
  EXPECT_EQ(describe(pipeline_actions(PipeSchedule::one_f_one_b, 2, 0, 2)),
            "x(-1,-1,-1,0) F0 x(0,-1,-1,-1) x(-1,-1,-1,1) F1 x(1,0,-1,-1) B0 x(-1,-1,0,-1) x(-1,1,-1,-1) B1 "
            "x(-1,-1,1,-1)");
}

TEST(PipelineSchedule, EveryScheduleRunsBackwardsInOrderAfterTheirForwards) {
  for (PipeSchedule s : {PipeSchedule::gpipe, PipeSchedule::one_f_one_b}) {
    for (int p : {1, 2, 4}) {
      for (int stage = 0; stage < p; ++stage) {
        for (int m : {1, 3, 8}) {
          std::vector<int> forwards, backwards;
          for (const PipeAction& a : pipeline_actions(s, p, stage, m)) {
            if (a.kind == PipeAction::Kind::forward) forwards.push_back(a.micro_batch);
            if (a.kind == PipeAction::Kind::backward) {
              EXPECT_GT(std::count(forwards.begin(), forwards.end(), a.micro_batch), 0);
              backwards.push_back(a.micro_batch);
            }
          }
          std::vector<int> order(static_cast<size_t>(m));
          for (int j = 0; j < m; ++j) order[static_cast<size_t>(j)] = j;
          EXPECT_EQ(forwards, order);
          EXPECT_EQ(backwards, order);
        }
      }
    }
  }
}

}  // namespace
}  // namespace gcb::models
