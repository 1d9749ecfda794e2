// Phase split of a timed region (for `gcbench train`: forward, backward, optimizer, each kind of
// communication), next to the harness and on its clock: the harness times the step; this only
// divides the step's wall time among named phases. Phases nest as a stack and are exclusive (a
// nested phase pauses its parent), so the phases of one step add up to the time spent inside
// them. Spans are inclusive tallies that do not touch the stack (e.g. "matmul" inside forward).
// Host timestamps: exact for backends that complete each op before returning (the CPU oracle);
// on an asynchronous (CUDA) backend they would time the enqueueing, not the work.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/harness.hpp"

namespace gcb {

class PhaseTimer {
 public:
  explicit PhaseTimer(const Clock& clock = steady_clock()) : clock_(clock) {}

  void push(std::string_view phase) {
    const double t = clock_.now();
    if (!stack_.empty()) exclusive_[stack_.back()] += t - since_;
    stack_.emplace_back(phase);
    since_ = t;
  }
  void pop() {
    const double t = clock_.now();
    if (stack_.empty()) return;
    exclusive_[stack_.back()] += t - since_;
    stack_.pop_back();
    since_ = t;
  }
  void add_span(std::string_view name, double seconds) { spans_[std::string(name)] += seconds; }
  double now() const { return clock_.now(); }

  const std::map<std::string, double>& exclusive() const { return exclusive_; }
  const std::map<std::string, double>& spans() const { return spans_; }
  void reset() {
    exclusive_.clear();
    spans_.clear();
  }

 private:
  const Clock& clock_;
  std::vector<std::string> stack_;
  double since_ = 0;
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
    if (t_ != nullptr) start_ = t_->now();
  }
  ~SpanScope() {
    if (t_ != nullptr) t_->add_span(name_, t_->now() - start_);
  }
  SpanScope(const SpanScope&) = delete;
  SpanScope& operator=(const SpanScope&) = delete;

 private:
  PhaseTimer* t_;
  std::string_view name_;
  double start_ = 0;
};

}  // namespace gcb
