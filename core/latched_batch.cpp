// enqueue_latched_batch (latched_batch.hpp): the enqueue order of one timed GPU batch behind a latch, in plain C++,
// with LatchGuard releasing the latch on every path, exceptions included.
#include "core/latched_batch.hpp"

#include <algorithm>

namespace gcb {

namespace {

// Releases a held latch once: on the normal path when release_now() is called, on unwind otherwise.
class LatchGuard {
 public:
  explicit LatchGuard(const std::function<void()>* release) : release_(release) {}
  ~LatchGuard() { release_now(); }
  LatchGuard(const LatchGuard&) = delete;
  LatchGuard& operator=(const LatchGuard&) = delete;
  void release_now() {
    if (held_ && release_) (*release_)();
    held_ = false;
  }

 private:
  const std::function<void()>* release_;  // null: nothing is held
  bool held_ = true;
};

}  // namespace

void enqueue_latched_batch(const LatchSteps& steps, const std::function<void()>& launch, int batch) {
  const bool latched = static_cast<bool>(steps.hold);
  if (latched) steps.hold();
  LatchGuard guard(latched ? &steps.release : nullptr);
  steps.record_start();
  const int behind = latched ? std::min(batch, kLaunchesBehindLatch) : 0;
  for (int i = 0; i < behind; ++i) launch();
  guard.release_now();
  for (int i = behind; i < batch; ++i) launch();
  steps.record_stop();
}

}  // namespace gcb
