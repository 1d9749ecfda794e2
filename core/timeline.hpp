// Where a phase split and a training step read their time: a Timeline hands out marks — points in
// the work issued so far — and later says how many seconds lay between two of them. On the host a
// mark is the clock's reading, taken at once. On a device it is an event recorded on the compute
// stream: it "happens" when the stream reaches it, so the seconds between two marks are the
// device's, not the time the host took to enqueue the work between them (the CUDA backend's
// timeline, models/backend/device/device_timeline.hpp). Reading seconds() may wait until both marks happened.
#pragma once

#include <cstddef>
#include <functional>
#include <string_view>
#include <vector>

#include "core/harness.hpp"

namespace gcb {

class Timeline {
 public:
  virtual ~Timeline() = default;
  // "host steady_clock", "cuda events on the compute stream", … (recorded beside results).
  virtual std::string_view kind() const = 0;
  // A point in the work issued so far; the ids count up from 0 after clear().
  virtual size_t mark() = 0;
  // Seconds from mark `from` to mark `to`; blocks until `to` has happened.
  virtual double seconds(size_t from, size_t to) = 0;
  // Forgets every mark, so their storage can be reused; earlier ids are invalid afterwards.
  virtual void clear() = 0;
};

// The host clock as a timeline (marks are readings of `clock`).
class HostTimeline final : public Timeline {
 public:
  explicit HostTimeline(const Clock& clock = steady_clock()) : clock_(clock) {}
  std::string_view kind() const override { return "host steady_clock"; }
  size_t mark() override {
    times_.push_back(clock_.now());
    return times_.size() - 1;
  }
  double seconds(size_t from, size_t to) override { return times_.at(to) - times_.at(from); }
  void clear() override { times_.clear(); }

 private:
  const Clock& clock_;
  std::vector<double> times_;
};

// A harness Timer reading a Timeline: mark, the batch, mark, then the seconds between the two
// (which waits for the batch's work on a device timeline). Never flushes caches.
class TimelineTimer final : public Timer {
 public:
  explicit TimelineTimer(Timeline& timeline) : timeline_(timeline) {}
  std::string_view kind() const override { return timeline_.kind(); }
  double time_batch(const std::function<void()>& launch, int batch) override {
    const size_t start = timeline_.mark();
    for (int i = 0; i < batch; ++i) launch();
    const size_t end = timeline_.mark();
    return timeline_.seconds(start, end);
  }

 private:
  Timeline& timeline_;
};

}  // namespace gcb
