// The order in which a GPU timer enqueues one timed batch, in plain C++ so it is tested without a
// device: hold the stream with a latch (a blocking kernel), record the start event, enqueue at
// most kLaunchesBehindLatch launches, release the latch, enqueue the rest, record the stop event.
// The latch keeps launch overhead out of the first launches; releasing it early keeps the host
// from filling the launch queue (about a thousand entries) while the GPU is held, which would
// block the host until the latch's timeout (NVIDIA/nvbench nvbench/detail/measure_hot.cuh: "Limit
// the number of kernel executions while blocked to prevent deadlocks").
#pragma once

#include <functional>

namespace gcb {

inline constexpr int kLaunchesBehindLatch = 2;

struct LatchSteps {
  std::function<void()> hold;     // enqueue the latch; empty = no latch (host-synchronous work)
  std::function<void()> release;  // let the latch go (host side); called exactly once after hold
  std::function<void()> record_start, record_stop;
};

// Enqueues `batch` launches in the order above. If a launch throws, the latch is released before
// the exception leaves (otherwise the stream would stay held until the latch's timeout) and the
// stop event is not recorded.
void enqueue_latched_batch(const LatchSteps& steps, const std::function<void()>& launch, int batch);

}  // namespace gcb
