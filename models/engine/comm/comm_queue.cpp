// CommQueue (comm_queue.hpp): launch() runs a collective blocking or overlapped (on the communicator's stream or a
// CommLane), run() runs one at once, wait() waits for the launched ones.
#include "models/engine/comm/comm_queue.hpp"

#include <utility>

namespace gcb::models {

CommQueue::CommQueue(Backend& be, Communicator& comm, bool overlap)
    : be_(be), comm_(comm), overlap_(overlap && comm.size() > 1) {
  if (overlap_ && comm.stream() == nullptr) lane_ = std::make_unique<CommLane>();
}

void CommQueue::launch(std::function<void()> collective) {
  if (!overlap_) {
    run(std::move(collective));
    return;
  }
  be_.comm_begin(comm_);  // the matching comm_end() comes with wait()
  if (lane_) {
    lane_->submit(std::move(collective));
  } else {
    collective();  // enqueues on the communicator's stream
  }
}

void CommQueue::run(std::function<void()> collective) {
  be_.comm_begin(comm_);
  if (lane_) {
    lane_->submit(std::move(collective));
    lane_->wait();
  } else {
    collective();
  }
  be_.comm_end(comm_);
}

void CommQueue::wait() {
  if (!overlap_) return;
  if (lane_) lane_->wait();
  be_.comm_end(comm_);
}

double CommQueue::take_busy_seconds() { return lane_ ? lane_->take_busy_seconds() : 0.0; }

}  // namespace gcb::models
