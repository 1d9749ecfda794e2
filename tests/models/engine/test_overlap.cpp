// `train --overlap`: the CommLane (a second thread per rank that runs the dp collectives while
// backward goes on) and the engine using it for every ZeRO stage and beside tp, sp and pp. Overlap
// changes when a collective runs, never what it computes: results, losses and communicated bytes
// equal the blocking run bit for bit, with and without gradient accumulation.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "collectives/thread_communicator.hpp"
#include "core/error.hpp"
#include "core/phase_timer.hpp"
#include "models/engine/comm/comm_lane.hpp"
#include "models/engine/engine.hpp"
#include "tests/models/engine/layout_runs.hpp"

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
  EXPECT_GE(busy, 0.015);                    // the operation ran ≥ 20 ms (sleep granularity margin)
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

TrainOptions overlap_options(ZeroStage z, int grad_accum, bool sp, bool overlap) {
  TrainOptions o;
  o.model = named_config("tiny");
  o.zero = z;
  o.micro_batch = 1;
  o.grad_accum = grad_accum;
  o.sp = sp;
  o.schedule = PipeSchedule::one_f_one_b;
  o.optim.adam.lr = 1e-2f;
  o.overlap_comm = overlap;
  return o;
}

void expect_same_bytes(const CommStats& a, const CommStats& b, const std::string& what) {
  for (size_t k = 0; k < kCommKinds; ++k) {
    EXPECT_EQ(a.by_kind[k].calls, b.by_kind[k].calls) << what << " " << comm_kind_name(static_cast<CommKind>(k));
    EXPECT_EQ(a.by_kind[k].bytes, b.by_kind[k].bytes) << what << " " << comm_kind_name(static_cast<CommKind>(k));
  }
}

// Every ZeRO stage, with and without accumulation, and with tp, sp and pp beside dp: the same
// bits, the same bytes, and the dp reductions ran on the lane.
TEST(Overlap, EveryZeroStageAndLayoutIsBitwiseEqualToBlockingRuns) {
  struct Case {
    const char* name;
    ParallelLayout lay;
    ZeroStage zero;
    int accum;
    bool sp;
  };
  for (const Case& k :
       {Case{"dp2", {2, 1, 1}, ZeroStage::none, 1, false}, Case{"dp4-accum2", {4, 1, 1}, ZeroStage::none, 2, false},
        Case{"zero1-dp2-accum2", {2, 1, 1}, ZeroStage::one, 2, false},
        Case{"zero2-dp2-accum2", {2, 1, 1}, ZeroStage::two, 2, false},
        Case{"zero3-dp2", {2, 1, 1}, ZeroStage::three, 1, false},
        Case{"zero3-dp2-accum2", {2, 1, 1}, ZeroStage::three, 2, false},
        Case{"dp2-tp2-sp-zero2", {2, 2, 1}, ZeroStage::two, 2, true},
        Case{"dp2-pp2-zero1-1f1b", {2, 1, 2}, ZeroStage::one, 3, false},
        Case{"dp2-tp2-pp2-zero3", {2, 2, 2}, ZeroStage::three, 2, false}}) {
    const auto blocking = test::run_layout(k.lay, overlap_options(k.zero, k.accum, k.sp, false));
    const auto overlapped = test::run_layout(k.lay, overlap_options(k.zero, k.accum, k.sp, true));
    EXPECT_EQ(overlapped[0].losses, blocking[0].losses) << k.name;
    EXPECT_EQ(overlapped[0].params, blocking[0].params) << k.name;
    for (size_t r = 0; r < blocking.size(); ++r) expect_same_bytes(overlapped[r].comm, blocking[r].comm, k.name);
    // The bucket collectives ran on the lane (busy > 0), and the blocking run has no lane.
    EXPECT_GT(overlapped[0].lane_busy, 0.0) << k.name;
    EXPECT_EQ(blocking[0].lane_busy, 0.0) << k.name;
    EXPECT_EQ(blocking[0].bucket_wait, 0.0) << k.name;
  }
}

// A communicator that only allows the thread that made it (MPI_THREAD_SINGLE): --overlap is
// refused with a reason; with tp or pp beside dp the lane needs concurrent use of communicators.
class SingleThreadComm final : public Communicator {
 public:
  SingleThreadComm(int size, ThreadSupport support) : size_(size), support_(support) {}
  int rank() const override { return 0; }
  int size() const override { return size_; }
  std::string_view backend() const override { return "fake"; }
  MemorySpace memory() const override { return MemorySpace::host; }
  ThreadSupport thread_support() const override { return support_; }
  void all_reduce(const void*, void*, size_t, DType, ReduceOp) override {}
  void all_gather(const void*, void*, size_t, DType) override {}
  void reduce_scatter(const void*, void*, size_t, DType, ReduceOp) override {}
  void broadcast(const void*, void*, size_t, DType, int) override {}
  void reduce(const void*, void*, size_t, DType, ReduceOp, int) override {}
  void all_to_all(const void*, void*, size_t, DType) override {}
  void group_start() override {}
  void group_end() override {}
  void send(const void*, size_t, DType, int) override {}
  void recv(void*, size_t, DType, int) override {}
  void barrier() override {}
  void synchronize() override {}
  std::unique_ptr<Communicator> split(int, int) override { return nullptr; }

 private:
  int size_;
  ThreadSupport support_;
};

TEST(Overlap, RefusedWhereTheCommunicatorForbidsASecondThread) {
  TrainOptions o = overlap_options(ZeroStage::three, 1, false, true);
  const SingleThreadComm single(2, ThreadSupport::creating_thread), serialized(2, ThreadSupport::serialized),
      concurrent(2, ThreadSupport::concurrent);
  EXPECT_NE(overlap_error(o, {2, 1, 1}, &single).find("MPI_THREAD_SERIALIZED"), std::string::npos);
  EXPECT_EQ(overlap_error(o, {2, 1, 1}, &serialized), "");
  EXPECT_NE(overlap_error(o, {2, 2, 1}, &serialized).find("MPI_THREAD_MULTIPLE"), std::string::npos);
  EXPECT_EQ(overlap_error(o, {2, 2, 2}, &concurrent), "");
  o.overlap_comm = false;
  EXPECT_EQ(overlap_error(o, {2, 1, 1}, &single), "");  // nothing asked, nothing refused
}

}  // namespace
}  // namespace gcb::models
