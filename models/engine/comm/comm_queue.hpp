// Where one communicator's collectives run relative to the rank's compute. Blocking (the default):
// each collective runs at once, ordered after the compute enqueued before it and before the compute
// enqueued after it. Overlapped (`train --overlap`): launch() returns at once and the compute goes
// on while the collective runs — a communicator with a stream only enqueues on it (the compute
// backend orders the two streams with events); a host communicator, whose calls block, gets a
// second thread (CommLane) that runs its collectives in submission order, what a stream gives a
// GPU. wait() makes later compute wait for everything launched. Collectives whose result the next
// compute needs use run(); when overlapped they join the same order (a lane stays the only thread
// calling the communicator) and are waited for.
#pragma once

#include <functional>
#include <memory>

#include "collectives/communicator.hpp"
#include "models/backend/backend.hpp"
#include "models/engine/comm/comm_lane.hpp"

namespace gcb::models {

class CommQueue {
 public:
  CommQueue(Backend& be, Communicator& comm, bool overlap);
  Communicator& comm() const { return comm_; }
  bool overlapped() const { return overlap_; }

  // Asynchronous when overlapped: the collective's buffers must stay untouched until wait().
  void launch(std::function<void()> collective);
  // Complete (in stream order) before it returns.
  void run(std::function<void()> collective);
  // Later compute waits for every launched collective; rethrows a lane's failure.
  void wait();
  // Seconds the lane spent running collectives since the last call (0 without a lane).
  double take_busy_seconds();

 private:
  Backend& be_;
  Communicator& comm_;
  bool overlap_;
  std::unique_ptr<CommLane> lane_;  // overlapped host communicator
};

}  // namespace gcb::models
