// Phase split of a timed region (for `gcbench train`: forward, backward, optimizer, each kind of
// communication), next to the harness and on the same timeline: the harness times the step; this
// only divides the step's time among named phases. Phases nest as a stack and are exclusive (a
// nested phase pauses its parent), so the phases of one step add up to the time spent inside
// them. Spans are inclusive tallies that do not touch the stack (e.g. "matmul" inside forward).
// Times come from a Timeline (core/timeline.hpp): host clock readings for the CPU oracle, events
// on the compute stream for a CUDA backend, so device phases measure device time, not the time
// the host took to enqueue them. Intervals are kept as pairs of marks and turned into seconds
// when exclusive() or spans() is read (which may wait for the device). Every phase is also an
// NVTX range of the gcbench domain, so `nsys` shows the same split.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/nvtx.hpp"
#include "core/timeline.hpp"

namespace gcb {

class PhaseTimer {
 public:
  // On the host clock.
  explicit PhaseTimer(const Clock& clock = steady_clock())
      : own_(std::make_unique<HostTimeline>(clock)), timeline_(*own_) {}
  // On `timeline` (it must outlive the timer).
  explicit PhaseTimer(Timeline& timeline) : timeline_(timeline) {}

  void push(std::string_view phase) {
    const size_t m = timeline_.mark();
    if (!stack_.empty()) pending_.push_back({stack_.back(), since_, m, true});
    stack_.emplace_back(phase);
    ranges_.push_back(std::make_unique<NvtxRange>(std::string(phase)));
    since_ = m;
  }
  void pop() {
    if (stack_.empty()) return;
    const size_t m = timeline_.mark();
    pending_.push_back({stack_.back(), since_, m, true});
    stack_.pop_back();
    ranges_.pop_back();
    since_ = m;
  }
  // An inclusive span between two marks of this timer's timeline (SpanScope), or of a known length.
  void add_span(std::string_view name, size_t from, size_t to) {
    pending_.push_back({std::string(name), from, to, false});
  }
  void add_span(std::string_view name, double seconds) { spans_[std::string(name)] += seconds; }
  size_t mark() { return timeline_.mark(); }
  std::string_view clock_kind() const { return timeline_.kind(); }

  const std::map<std::string, double>& exclusive() {
    resolve();
    return exclusive_;
  }
  const std::map<std::string, double>& spans() {
    resolve();
    return spans_;
  }
  void reset() {
    exclusive_.clear();
    spans_.clear();
    pending_.clear();
    if (stack_.empty()) timeline_.clear();
  }

 private:
  struct Interval {
    std::string name;
    size_t from, to;
    bool exclusive;
  };
  void resolve() {
    for (const Interval& i : pending_) (i.exclusive ? exclusive_ : spans_)[i.name] += timeline_.seconds(i.from, i.to);
    pending_.clear();
  }

  std::unique_ptr<Timeline> own_;
  Timeline& timeline_;
  std::vector<std::string> stack_;
  std::vector<std::unique_ptr<NvtxRange>> ranges_;
  size_t since_ = 0;
  std::vector<Interval> pending_;
  std::map<std::string, double> exclusive_, spans_;
};

// RAII phase; a null timer does nothing (the default when nobody asked for a split).
class PhaseScope {
 public:
  PhaseScope(PhaseTimer* t, std::string_view phase) : t_(t) {
    if (t_ != nullptr) t_->push(phase);
  }
  ~PhaseScope() {
    if (t_ != nullptr) t_->pop();
  }
  PhaseScope(const PhaseScope&) = delete;
  PhaseScope& operator=(const PhaseScope&) = delete;

 private:
  PhaseTimer* t_;
};

// RAII inclusive span (does not pause the enclosing phase).
class SpanScope {
 public:
  SpanScope(PhaseTimer* t, std::string_view name) : t_(t), name_(name) {
    if (t_ != nullptr) start_ = t_->mark();
  }
  ~SpanScope() {
    if (t_ != nullptr) t_->add_span(name_, start_, t_->mark());
  }
  SpanScope(const SpanScope&) = delete;
  SpanScope& operator=(const SpanScope&) = delete;

 private:
  PhaseTimer* t_;
  std::string_view name_;
  size_t start_ = 0;
};

}  // namespace gcb
