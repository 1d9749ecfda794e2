// The phase split on a timeline: exclusive nesting, inclusive spans, and marks that are only
// turned into seconds when the split is read (what lets a device timeline record events now and
// wait for them once, at the end). A fake timeline gives each mark a scripted time and counts
// the seconds() calls.
#include <gtest/gtest.h>

#include <vector>

#include "core/phase_timer.hpp"
#include "core/timeline.hpp"

namespace gcb {
namespace {

// Mark k happens at times[k]; seconds() is counted, as a device timeline would block there.
class ScriptedTimeline final : public Timeline {
 public:
  explicit ScriptedTimeline(std::vector<double> times) : times_(std::move(times)) {}
  std::string_view kind() const override { return "scripted"; }
  size_t mark() override { return next_++; }
  double seconds(size_t from, size_t to) override {
    ++reads;
    return times_.at(to) - times_.at(from);
  }
  void clear() override {
    next_ = 0;
    ++clears;
  }
  int reads = 0, clears = 0;

 private:
  std::vector<double> times_;
  size_t next_ = 0;
};

TEST(PhaseTimer, NestedPhasesAreExclusiveAndResolvedOnlyWhenRead) {
  // forward [0, 10) with comm [2, 5) inside it; backward [10, 16) with a matmul span [11, 14).
  ScriptedTimeline tl({0, 2, 5, 10, 10, 11, 14, 16});
  PhaseTimer t(tl);
  t.push("forward");   // mark 0 @ 0
  t.push("comm:x");    // mark 1 @ 2
  t.pop();             // mark 2 @ 5
  t.pop();             // mark 3 @ 10
  t.push("backward");  // mark 4 @ 10
  {
    const SpanScope s(&t, "matmul");  // marks 5 @ 11 and 6 @ 14
  }
  t.pop();                 // mark 7 @ 16
  EXPECT_EQ(tl.reads, 0);  // nothing waited for while the work was issued
  EXPECT_DOUBLE_EQ(t.exclusive().at("forward"), 2.0 + 5.0);
  EXPECT_DOUBLE_EQ(t.exclusive().at("comm:x"), 3.0);
  EXPECT_DOUBLE_EQ(t.exclusive().at("backward"), 6.0);
  EXPECT_DOUBLE_EQ(t.spans().at("matmul"), 3.0);
  EXPECT_EQ(t.exclusive().count("matmul"), 0u);
  EXPECT_EQ(t.clock_kind(), "scripted");
}

TEST(PhaseTimer, ResetForgetsPhasesAndRecyclesTheTimelineOutsideAnyPhase) {
  ScriptedTimeline tl({0, 1, 3, 4});
  PhaseTimer t(tl);
  t.push("optimizer");
  t.reset();  // inside a phase: the open phase's mark must survive
  EXPECT_EQ(tl.clears, 0);
  t.pop();
  EXPECT_DOUBLE_EQ(t.exclusive().at("optimizer"), 1.0);
  t.reset();
  EXPECT_EQ(tl.clears, 1);
  EXPECT_TRUE(t.exclusive().empty());
  t.add_span("comm_lane", 0.25);  // a duration measured elsewhere (the overlap lane)
  EXPECT_DOUBLE_EQ(t.spans().at("comm_lane"), 0.25);
}

TEST(PhaseTimer, HostClockDefaultKeepsTheOldBehaviour) {
  struct StepClock final : Clock {
    double now() const override { return t += 1.0; }
    mutable double t = 0;
  } clock;
  PhaseTimer t(clock);
  t.push("forward");  // 1
  t.pop();            // 2
  EXPECT_DOUBLE_EQ(t.exclusive().at("forward"), 1.0);
  EXPECT_EQ(t.clock_kind(), "host steady_clock");
}

TEST(TimelineTimer, TimesTheBatchBetweenTwoMarks) {
  ScriptedTimeline tl({5.0, 5.75});
  TimelineTimer timer(tl);
  int launches = 0;
  EXPECT_DOUBLE_EQ(timer.time_batch([&] { ++launches; }, 3), 0.75);
  EXPECT_EQ(launches, 3);
  EXPECT_EQ(timer.kind(), "scripted");
}

}  // namespace
}  // namespace gcb
