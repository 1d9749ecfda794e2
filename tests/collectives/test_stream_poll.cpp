// The NCCL communicator's wait (collectives/stream_poll.hpp) against a fake stream and a fake
// clock: it yields instead of sleeping, asks for the asynchronous error and the time only every
// kPollsPerCheck polls, and reports an error or a timeout with its reason.
#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "collectives/stream_poll.hpp"
#include "tests/core/fake_clock.hpp"

namespace gcb {
namespace {

using test_support::FakeClock;

struct FakeStream {
  long done_after = 0;  // polls until the stream reports done (< 0: never)
  long polls = 0, yields = 0, error_checks = 0;
  long error_at = -1;  // poll from which the async error is set (< 0: never)
  FakeClock* clock = nullptr;
  double seconds_per_yield = 0;
  StreamPoll poll() {
    StreamPoll p;
    p.done = [this] { return ++polls > done_after && done_after >= 0; };
    p.async_error = [this]() -> std::string {
      ++error_checks;
      return error_at >= 0 && polls >= error_at ? "remote process exited" : "";
    };
    p.yield = [this] {
      ++yields;
      if (clock) clock->t += seconds_per_yield;
    };
    return p;
  }
};

TEST(StreamPoll, FinishedStreamReturnsAtOnce) {
  FakeStream s;
  EXPECT_EQ(poll_stream(s.poll(), std::chrono::seconds(1)), "");
  EXPECT_EQ(s.polls, 1);
  EXPECT_EQ(s.yields, 0);
  EXPECT_EQ(s.error_checks, 0);
}

TEST(StreamPoll, YieldsBetweenPollsAndChecksEveryNth) {
  FakeStream s;
  s.done_after = 1000;
  FakeClock clock;
  EXPECT_EQ(poll_stream(s.poll(), std::chrono::seconds(1), clock), "");
  EXPECT_EQ(s.polls, 1001);
  EXPECT_EQ(s.yields, 1000);
  EXPECT_EQ(s.error_checks, 1000 / kPollsPerCheck);  // 15: not one per poll
}

TEST(StreamPoll, AsyncErrorEndsTheWaitAtTheNextCheck) {
  FakeStream s;
  s.done_after = -1;
  s.error_at = 100;
  const std::string why = poll_stream(s.poll(), std::chrono::seconds(1));
  EXPECT_EQ(why, "asynchronous error: remote process exited");
  EXPECT_EQ(s.polls, 2 * kPollsPerCheck);  // first check at or after poll 100
}

TEST(StreamPoll, TimeoutIsMeasuredOnTheClock) {
  FakeStream s;
  s.done_after = -1;
  FakeClock clock;
  s.clock = &clock;
  s.seconds_per_yield = 1e-3;
  const std::string why = poll_stream(s.poll(), std::chrono::milliseconds(500), clock);
  EXPECT_EQ(why, "stream not done after 0.5 s");
  EXPECT_EQ(s.polls, 8 * kPollsPerCheck);  // 512 polls: the first check past 0.5 s of yields
}

}  // namespace
}  // namespace gcb
