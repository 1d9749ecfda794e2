// ZeRO's dp-dimension collectives on one padded unit (Rajbhandari et al. 2019, arXiv:1910.02054;
// ../shared/reference/training.md §3), shared by the dp-only engines (engine.cpp) and the Megatron
// engine (parallel_engine.cpp), so the two count and time them the same way. A unit is padded to
// a multiple of dp and cut by ShardSpec (shard.hpp); rank r owns [r·shard, (r+1)·shard).
#pragma once

#include <cstddef>
#include <functional>
#include <string_view>

#include "collectives/communicator.hpp"
#include "core/phase_timer.hpp"
#include "models/comm_lane.hpp"
#include "models/backend.hpp"
#include "models/engine.hpp"
#include "models/shard.hpp"

namespace gcb::models {

// Adds one call of `elements` floats (the logical buffer, CommStats' convention) under kind k.
// No-op when stats is null (collectives outside a step, e.g. full_params).
void record_comm(CommStats* stats, CommKind k, size_t elements);

// The dp group of one rank as the engines use it. Nothing is communicated at dp = 1.
struct DpUnitComm {
  Backend& be;
  Communicator& comm;          // the dp group
  PhaseTimer* phases;          // may be null
  CommStats* stats;            // may be null: not counted
  CommLane* lane = nullptr;    // `train --overlap`: the gradient reductions (all_reduce and
                               // reduce_scatter) are queued here, counted at submission, and the
                               // engine waits for the lane before the optimizer; gathers never are

  // Σ over dp of the padded unit `g`, in place.
  void all_reduce(float* g, const ShardSpec& s) const;
  // Σ over dp of the padded unit `full`; this rank's shard of the sum lands at `own` (in place
  // when own = full + s.begin(r)). At dp = 1 the shard is copied when own ≠ full.
  void reduce_scatter(const float* full, float* own, const ShardSpec& s) const;
  // Every rank's shard, at full + s.begin(r), assembled into the whole padded unit on every rank.
  void all_gather(float* full, const ShardSpec& s) const;
  // ZeRO-3: a new `params` buffer holding the padded unit, gathered from every rank's `shard`.
  Buffer gather(const float* shard, const ShardSpec& s) const;

 private:
  // Runs `op` now inside `phase`, or queues it on the lane; counted either way.
  void run(std::string_view phase, CommKind kind, size_t elements, std::function<void()> op) const;
};

}  // namespace gcb::models
