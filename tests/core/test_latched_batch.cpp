// The enqueue order of a latched GPU batch (core/latched_batch.hpp), recorded by fake steps: at
// most two launches behind the latch, the latch released on every path, exactly once.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "core/latched_batch.hpp"

namespace gcb {
namespace {

struct Recorder {
  std::string log;  // H hold, S start, L launch, R release, E stop
  LatchSteps steps(bool latched) {
    LatchSteps s;
    if (latched) {
      s.hold = [this] { log += 'H'; };
      s.release = [this] { log += 'R'; };
    }
    s.record_start = [this] { log += 'S'; };
    s.record_stop = [this] { log += 'E'; };
    return s;
  }
};

TEST(LatchedBatch, AtMostTwoLaunchesWaitBehindTheLatch) {
  Recorder r;
  int launches = 0;
  enqueue_latched_batch(
      r.steps(true),
      [&] {
        r.log += 'L';
        ++launches;
      },
      6);
  EXPECT_EQ(r.log, "HSLLRLLLLE");
  EXPECT_EQ(launches, 6);
}

TEST(LatchedBatch, SingleLaunchIsReleasedAfterIt) {
  Recorder r;
  enqueue_latched_batch(
      r.steps(true), [&] { r.log += 'L'; }, 1);
  EXPECT_EQ(r.log, "HSLRE");
}

TEST(LatchedBatch, LargeBatchNeverQueuesMoreThanTwoBehindTheLatch) {
  Recorder r;
  int before_release = 0;
  bool released = false;
  LatchSteps s = r.steps(true);
  s.release = [&] { released = true; };
  enqueue_latched_batch(
      s, [&] { before_release += released ? 0 : 1; }, 100000);
  EXPECT_TRUE(released);
  EXPECT_EQ(before_release, 2);
}

TEST(LatchedBatch, HostSynchronousWorkHasNoLatch) {
  Recorder r;
  enqueue_latched_batch(
      r.steps(false), [&] { r.log += 'L'; }, 3);
  EXPECT_EQ(r.log, "SLLLE");
}

TEST(LatchedBatch, ThrowingLaunchBehindTheLatchReleasesIt) {
  Recorder r;
  int n = 0;
  EXPECT_THROW(enqueue_latched_batch(
                   r.steps(true),
                   [&] {
                     if (++n == 2) throw std::runtime_error("launch failed");
                     r.log += 'L';
                   },
                   5),
               std::runtime_error);
  EXPECT_EQ(r.log, "HSLR");  // released once, on unwind; no stop event
}

TEST(LatchedBatch, ThrowingLaunchAfterReleaseDoesNotReleaseTwice) {
  Recorder r;
  int n = 0;
  EXPECT_THROW(enqueue_latched_batch(
                   r.steps(true),
                   [&] {
                     if (++n == 4) throw std::runtime_error("launch failed");
                     r.log += 'L';
                   },
                   5),
               std::runtime_error);
  EXPECT_EQ(r.log, "HSLLRL");
}

}  // namespace
}  // namespace gcb
