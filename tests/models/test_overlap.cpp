// `train --overlap`: the CommLane (a second thread per rank that runs the dp bucket collectives
// while backward goes on) and the DP / ZeRO-1 engines using it. Overlap changes when a collective
// runs, never what it computes: results, losses and communicated bytes equal the blocking run bit
// for bit, with and without gradient accumulation.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <thread>
#include <vector>

#include "collectives/thread_communicator.hpp"
#include "core/error.hpp"
#include "core/phase_timer.hpp"
#include "models/comm_lane.hpp"
#include "models/cpu_backend.hpp"
#include "models/engine.hpp"

namespace gcb::models {
namespace {

TEST(CommLane, RunsOperationsInSubmissionOrderOffTheCallingThread) {
  CommLane lane;
  std::vector<int> order;
  std::atomic<bool> other_thread{true};
  const auto self = std::this_thread::get_id();
  for (int i = 0; i < 50; ++i) {
    lane.submit([&order, &other_thread, self, i] {
      if (std::this_thread::get_id() == self) other_thread = false;
      order.push_back(i);
    });
  }
  lane.wait();
  ASSERT_EQ(order.size(), 50u);
  for (int i = 0; i < 50; ++i) EXPECT_EQ(order[static_cast<size_t>(i)], i);
  EXPECT_TRUE(other_thread);
}

TEST(CommLane, OverlapsTheCallerAndCountsBusyTime) {
  CommLane lane;
  std::atomic<bool> release{false};
  std::atomic<bool> started{false};
  lane.submit([&] {
    started = true;
    while (!release) std::this_thread::yield();
  });
  // The caller goes on while the operation runs: it can release it from here.
  while (!started) std::this_thread::yield();
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  release = true;
  lane.wait();
  const double busy = lane.take_busy_seconds();
  EXPECT_GE(busy, 0.015);  // the operation ran ≥ 20 ms (sleep granularity margin)
  EXPECT_EQ(lane.take_busy_seconds(), 0.0);  // taken
}

TEST(CommLane, WaitRethrowsTheFirstFailureAndSkipsTheRest) {
  CommLane lane;
  int ran_after = 0;
  lane.submit([] { throw std::runtime_error("first"); });
  lane.submit([] { throw std::runtime_error("second"); });
  lane.submit([&ran_after] { ++ran_after; });
  try {
    lane.wait();
    ADD_FAILURE() << "wait() did not rethrow";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "first");
  }
  EXPECT_EQ(ran_after, 0);
  lane.submit([&ran_after] { ++ran_after; });  // the lane is usable again
  lane.wait();
  EXPECT_EQ(ran_after, 1);
}

struct Outcome {
  std::vector<float> losses, params;
  CommStats comm;
  double lane_busy = 0, bucket_wait = 0;
};

Outcome run_dp(int dp, ZeroStage z, int grad_accum, bool overlap) {
  TrainOptions o;
  o.model = named_config("tiny");
  o.zero = z;
  o.micro_batch = 1;
  o.grad_accum = grad_accum;
  o.adam.lr = 1e-2f;
  o.overlap_comm = overlap;
  Outcome out;
  run_ranks(dp, [&](Communicator& world) {
    RankContext ctx = make_rank_context(world, ParallelLayout{dp, 1, 1});
    CpuBackend be;
    PhaseTimer phases;
    auto engine = make_training_step(be, ctx, o);
    engine->set_phase_timer(&phases);
    std::vector<float> losses;
    for (int s = 0; s < 3; ++s) losses.push_back(engine->step());
    engine->set_phase_timer(nullptr);
    std::vector<float> params = engine->full_params();
    if (world.rank() == 0) {
      out.losses = losses;
      out.params = std::move(params);
      out.comm = engine->last_step_comm();
      const auto lane = phases.spans().find("comm_lane");
      out.lane_busy = lane == phases.spans().end() ? 0.0 : lane->second;
      const auto wait = phases.exclusive().find("comm:bucket_wait");
      out.bucket_wait = wait == phases.exclusive().end() ? 0.0 : wait->second;
    }
  });
  return out;
}

void expect_same_bytes(const CommStats& a, const CommStats& b, const char* what) {
  for (size_t k = 0; k < kCommKinds; ++k) {
    EXPECT_EQ(a.by_kind[k].calls, b.by_kind[k].calls) << what << " " << comm_kind_name(static_cast<CommKind>(k));
    EXPECT_EQ(a.by_kind[k].bytes, b.by_kind[k].bytes) << what << " " << comm_kind_name(static_cast<CommKind>(k));
  }
}

TEST(Overlap, DpAndZero1AreBitwiseEqualToBlockingRuns) {
  struct Case {
    const char* name;
    int dp;
    ZeroStage zero;
    int accum;
  };
  for (const Case& k : {Case{"dp2", 2, ZeroStage::none, 1}, Case{"dp4-accum2", 4, ZeroStage::none, 2},
                        Case{"zero1-dp2-accum2", 2, ZeroStage::one, 2}}) {
    const Outcome blocking = run_dp(k.dp, k.zero, k.accum, false);
    const Outcome overlapped = run_dp(k.dp, k.zero, k.accum, true);
    EXPECT_EQ(overlapped.losses, blocking.losses) << k.name;
    EXPECT_EQ(overlapped.params, blocking.params) << k.name;
    expect_same_bytes(overlapped.comm, blocking.comm, k.name);
    // The bucket collectives ran on the lane (busy > 0), and the blocking run has no lane.
    EXPECT_GT(overlapped.lane_busy, 0.0) << k.name;
    EXPECT_EQ(blocking.lane_busy, 0.0) << k.name;
    EXPECT_EQ(blocking.bucket_wait, 0.0) << k.name;
  }
}

TEST(Overlap, RefusedWhereNotImplemented) {
  TrainOptions o;
  o.model = named_config("tiny");
  o.overlap_comm = true;
  EXPECT_EQ(overlap_error(o, ParallelLayout{2, 1, 1}), "");
  o.zero = ZeroStage::two;
  EXPECT_NE(overlap_error(o, ParallelLayout{2, 1, 1}), "");
  o.zero = ZeroStage::none;
  EXPECT_NE(overlap_error(o, ParallelLayout{1, 2, 1}), "");
  EXPECT_NE(overlap_error(o, ParallelLayout{1, 1, 2}), "");
  o.sp = true;
  EXPECT_NE(overlap_error(o, ParallelLayout{2, 1, 1}), "");
  o.sp = false;
  o.overlap_comm = false;
  o.zero = ZeroStage::three;
  EXPECT_EQ(overlap_error(o, ParallelLayout{1, 2, 2}), "");  // nothing asked, nothing refused
  o.overlap_comm = true;
  EXPECT_THROW(run_ranks(2,
                         [&](Communicator& w) {
                           RankContext ctx = make_rank_context(w, ParallelLayout{2, 1, 1});
                           CpuBackend be;
                           make_training_step(be, ctx, o);
                         }),
               UsageError);
}

}  // namespace
}  // namespace gcb::models
