// CommLane (comm_lane.hpp): a rank's communication thread — submit() queues an operation, wait() returns when all have
// run, take_busy_seconds() reports its time spent communicating.
#include "models/engine/comm/comm_lane.hpp"

#include <chrono>
#include <utility>

namespace gcb::models {

CommLane::CommLane() : thread_([this] { loop(); }) {}

CommLane::~CommLane() {
  {
    std::unique_lock lock(mu_);
    cv_.wait(lock, [this] { return queue_.empty() && !running_op_; });
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void CommLane::submit(std::function<void()> op) {
  {
    const std::lock_guard lock(mu_);
    queue_.push_back(std::move(op));
  }
  cv_.notify_all();
}

void CommLane::wait() {
  std::unique_lock lock(mu_);
  cv_.wait(lock, [this] { return queue_.empty() && !running_op_; });
  if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
}

double CommLane::take_busy_seconds() {
  const std::lock_guard lock(mu_);
  return std::exchange(busy_, 0.0);
}

void CommLane::loop() {
  std::unique_lock lock(mu_);
  for (;;) {
    cv_.wait(lock, [this] { return stop_ || !queue_.empty(); });
    if (queue_.empty()) return;  // stop_ and drained
    std::function<void()> op = std::move(queue_.front());
    queue_.pop_front();
    if (error_) {  // an earlier operation failed: skip the rest, wait() reports it
      cv_.notify_all();
      continue;
    }
    running_op_ = true;
    lock.unlock();
    const auto t0 = std::chrono::steady_clock::now();
    std::exception_ptr failed;
    try {
      op();
    } catch (...) {
      failed = std::current_exception();
    }
    const std::chrono::duration<double> took = std::chrono::steady_clock::now() - t0;
    lock.lock();
    running_op_ = false;
    busy_ += took.count();
    if (failed && !error_) error_ = failed;
    cv_.notify_all();
  }
}

}  // namespace gcb::models
