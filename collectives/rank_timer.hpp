// Timing collectives through the one harness (core/harness.hpp): a Timer adapter that times a
// batch on every rank, gathers the per-rank times and hands the harness one combined value
// (max over ranks by default), and a Clock that all ranks agree on. With identical samples and
// an identical clock, every rank's harness makes the same stopping decision, so no rank is
// left waiting in a collective that the others never call.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "collectives/communicator.hpp"
#include "core/harness.hpp"

namespace gcb {

// How a sample is timed: pipelined (nccl-tests' default: -n ops back to back per host-timed
// batch), isolated (one op per sample between untimed barriers) or graph (a CUDA graph of -n ops
// replayed; nccl-tests -G).
enum class TimingMode : uint8_t { pipelined, isolated, graph };
std::string_view timing_mode_name(TimingMode m);
std::string_view timing_mode_description(TimingMode m);

// nccl-tests -a: how per-rank times are combined (0 rank 0, 1 avg, 2 min, 3 max).
enum class RankCombine : uint8_t { rank0 = 0, avg = 1, min = 2, max = 3 };
std::string_view rank_combine_name(RankCombine c);

// Combines one sample's per-rank times (nccl-tests -a semantics).
double combine_rank_times(const std::vector<double>& per_rank, RankCombine how);

class RankTimer final : public Timer {
 public:
  // world_comm runs the op (its synchronize() waits for it); host_comm carries the barrier and
  // the gathered times. `ops_per_launch` > 1 when one launch is a graph of that many ops
  // (the returned time is then per op).
  RankTimer(Communicator& world_comm, Communicator& host_comm, TimingMode mode, RankCombine combine, bool blocking,
            int ops_per_launch = 1, const Clock& clock = steady_clock());
  std::string_view kind() const override { return kind_; }
  // pipelined/graph: barrier (untimed), then the batch back to back, then synchronize; the
  // host clock spans the batch (nccl-tests BenchTime). isolated: per launch barrier (untimed),
  // launch, synchronize, summed. Blocking and collective over host_comm.
  double time_batch(const std::function<void()>& launch, int batch) override;
  // Times `bound` from now on; the launch time_batch() is given must be bound.launch. Pipelined
  // batches without -z run bound.repeat(batch) when it is set (one indirect call per batch, as a
  // bare loop of the library call), isolated and blocking ones call the launch; every batch, its
  // barrier included, runs inside a WatchScope named bound.watch when that is set.
  void use_bound(const BoundCall& bound) {
    repeat_ = bound.repeat;
    watch_ = bound.watch;
  }

  // Per call of time_batch (warm-up calls included, in order): each rank's seconds per op.
  const std::vector<std::vector<double>>& per_rank() const { return per_rank_; }

 private:
  Communicator& world_;
  Communicator& host_;
  TimingMode mode_;
  RankCombine combine_;
  bool blocking_;
  int ops_per_launch_;
  const Clock& clock_;
  std::string kind_;
  std::function<void(int)> repeat_;
  const char* watch_ = nullptr;
  std::vector<std::vector<double>> per_rank_;
};

// now() is the maximum of every rank's steady clock, so budget checks agree on every rank.
// Collective over host_comm: every rank must call now() equally often (the harness does, as
// long as the samples are identical).
class AgreedClock final : public Clock {
 public:
  explicit AgreedClock(Communicator& host_comm, const Clock& local = steady_clock());
  double now() const override;

 private:
  Communicator& host_;
  const Clock& local_;
};

// Per-rank skew of a measurement's samples: median over samples of (max − min) / max across
// ranks, and the rank that was slowest most often with the share of samples it was slowest in.
struct RankSkew {
  double median_skew = 0;
  int slowest_rank = 0;
  double slowest_share = 0;
};
RankSkew rank_skew(const std::vector<std::vector<double>>& per_rank_samples);

}  // namespace gcb
