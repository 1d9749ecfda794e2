// A second thread per rank that runs communication while the rank's thread goes on computing:
// what a communication stream gives a GPU backend, for host communicators (comm_queue.hpp). The
// engine submits each gradient bucket's reduction as backward finishes the bucket (PyTorch DDP's
// bucketed all-reduce, Li et al. 2020) and waits once before the optimizer. Operations run one at
// a time in submission order, so every rank issues its collectives in the same order whatever the
// timing.
#pragma once

#include <condition_variable>
#include <deque>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>

namespace gcb::models {

class CommLane {
 public:
  CommLane();
  // Waits for the queue to drain (a failing peer makes a blocked collective throw, so this ends)
  // and joins the thread; errors not yet collected by wait() are dropped.
  ~CommLane();
  CommLane(const CommLane&) = delete;
  CommLane& operator=(const CommLane&) = delete;

  void submit(std::function<void()> op);
  // Blocks until every submitted operation has finished; rethrows the first one's exception
  // (later operations are skipped once one failed).
  void wait();
  // Wall seconds the lane spent inside operations since the last take_busy_seconds().
  double take_busy_seconds();

 private:
  void loop();

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> queue_;
  bool running_op_ = false, stop_ = false;
  std::exception_ptr error_;
  double busy_ = 0;
  std::thread thread_;  // last: starts after the members it uses exist
};

}  // namespace gcb::models
