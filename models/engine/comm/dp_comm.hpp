// ZeRO's dp-group collectives on one padded unit (Rajbhandari et al. 2019, arXiv:1910.02054),
// counted (comm_stats.hpp) and timed as comm:<kind> phases. A unit is padded to a multiple of dp
// and cut by ShardSpec (shard.hpp); rank r owns [r·shard, (r+1)·shard). Gradient reductions are
// launched on the dp CommQueue (asynchronous under --overlap); gathers are run (the next compute
// reads them). Nothing is communicated at dp = 1.
#pragma once

#include "core/phase_timer.hpp"
#include "models/backend/backend.hpp"
#include "models/engine/comm/comm_queue.hpp"
#include "models/model/comm_stats.hpp"
#include "models/model/shard.hpp"

namespace gcb::models {

class DpComm {
 public:
  DpComm(Backend& be, CommQueue& queue) : be_(be), queue_(queue) {}
  void set_phase_timer(PhaseTimer* t) { phases_ = t; }
  // Where calls are counted; null: not counted (collectives outside a step).
  void set_stats(CommStats* s) { stats_ = s; }
  int size() const { return queue_.comm().size(); }
  int rank() const { return queue_.comm().rank(); }
  bool overlapped() const { return queue_.overlapped(); }

  // Σ over dp of the padded unit `g`, in place.
  void all_reduce(View g, const ShardSpec& s);
  // Σ over dp of the padded unit `full`; this rank's shard of the sum lands at `own` (in place
  // when own = full + s.begin(r)). At dp = 1 the shard is copied when own ≠ full.
  void reduce_scatter(View full, View own, const ShardSpec& s);
  // Every rank's shard, at full + s.begin(r), assembled into the whole padded unit on every rank.
  void all_gather(View full, const ShardSpec& s);
  // ZeRO-3: a new buffer (category `cat`) holding the padded unit, gathered from every rank's `shard`.
  Buffer gather(View shard, const ShardSpec& s, MemCategory cat);
  // Waits for the launched gradient reductions: the exposed part is the phase comm:bucket_wait,
  // the lane's busy time the span comm_lane (overlapped = busy − wait).
  void wait();

 private:
  Backend& be_;
  CommQueue& queue_;
  PhaseTimer* phases_ = nullptr;
  CommStats* stats_ = nullptr;
};

}  // namespace gcb::models
