// Collectives timed through the one harness (rank_timer.hpp): RankTimer combines each batch's per-rank times
// (combine_rank_times, max by default), AgreedClock reads the latest of the ranks' clocks, rank_skew; the mode names.
#include "collectives/rank_timer.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <numeric>
#include <optional>

#include "core/error.hpp"
#include "core/stats.hpp"
#include "core/watchdog.hpp"

namespace gcb {

std::string_view timing_mode_name(TimingMode m) {
  switch (m) {
    case TimingMode::pipelined: return "pipelined";
    case TimingMode::isolated: return "isolated";
    case TimingMode::graph: return "graph";
  }
  return "?";
}

std::string_view timing_mode_description(TimingMode m) {
  switch (m) {
    case TimingMode::pipelined:
      return "back-to-back ops, host timer around each batch of -n ops (nccl-tests compatible)";
    case TimingMode::isolated: return "one op per sample: untimed barrier, op, synchronize";
    case TimingMode::graph: return "CUDA-graph replay of -n ops per launch (nccl-tests -G)";
  }
  return "?";
}

std::string_view rank_combine_name(RankCombine c) {
  switch (c) {
    case RankCombine::rank0: return "rank 0";
    case RankCombine::avg: return "avg";
    case RankCombine::min: return "min";
    case RankCombine::max: return "max";
  }
  return "?";
}

double combine_rank_times(const std::vector<double>& t, RankCombine how) {
  GCB_CHECK(!t.empty(), "no rank times to combine");
  switch (how) {
    case RankCombine::rank0: return t[0];
    case RankCombine::avg: return std::accumulate(t.begin(), t.end(), 0.0) / static_cast<double>(t.size());
    case RankCombine::min: return *std::min_element(t.begin(), t.end());
    case RankCombine::max: return *std::max_element(t.begin(), t.end());
  }
  return t[0];
}

RankTimer::RankTimer(Communicator& world_comm, Communicator& host_comm, TimingMode mode, RankCombine combine,
                     bool blocking, int ops_per_launch, const Clock& clock)
    : world_(world_comm),
      host_(host_comm),
      mode_(mode),
      combine_(combine),
      blocking_(blocking),
      ops_per_launch_(std::max(ops_per_launch, 1)),
      clock_(clock),
      kind_(fmt::format("{} host steady_clock, {} over {} ranks", timing_mode_name(mode), rank_combine_name(combine),
                        host_comm.size())) {}

double RankTimer::time_batch(const std::function<void()>& launch, int batch) {
  std::optional<WatchScope> watch;  // one scope per batch, not per op (use_bound)
  if (watch_ != nullptr) watch.emplace(watch_);
  double local = 0;
  if (mode_ == TimingMode::isolated) {
    for (int i = 0; i < batch; ++i) {
      host_.barrier();
      const double t0 = clock_.now();
      launch();
      world_.synchronize();
      local += clock_.now() - t0;
    }
  } else {
    host_.barrier();
    const double t0 = clock_.now();
    if (repeat_ && !blocking_) {
      repeat_(batch);
    } else {
      for (int i = 0; i < batch; ++i) {
        launch();
        if (blocking_) {  // nccl-tests -z 1: synchronize and barrier after every op, timed
          world_.synchronize();
          host_.barrier();
        }
      }
    }
    world_.synchronize();
    local = clock_.now() - t0;
  }
  local /= ops_per_launch_;
  std::vector<double> all(static_cast<size_t>(host_.size()));
  host_.all_gather(&local, all.data(), 1, DType::f64);
  std::vector<double> per_op(all);
  for (double& x : per_op) x /= batch;
  per_rank_.push_back(std::move(per_op));
  // Every rank combines the same gathered values: the harness sees identical samples everywhere.
  return combine_rank_times(all, combine_);
}

AgreedClock::AgreedClock(Communicator& host_comm, const Clock& local) : host_(host_comm), local_(local) {}

double AgreedClock::now() const {
  const double mine = local_.now();
  double agreed = 0;
  host_.all_reduce(&mine, &agreed, 1, DType::f64, ReduceOp::max);
  return agreed;
}

RankSkew rank_skew(const std::vector<std::vector<double>>& samples) {
  RankSkew s;
  if (samples.empty()) return s;
  std::vector<double> skews;
  std::map<int, int> slowest;
  for (const auto& ranks : samples) {
    if (ranks.empty()) continue;
    const auto [lo, hi] = std::minmax_element(ranks.begin(), ranks.end());
    skews.push_back(*hi > 0 ? (*hi - *lo) / *hi : 0.0);
    ++slowest[static_cast<int>(hi - ranks.begin())];
  }
  if (skews.empty()) return s;
  s.median_skew = percentile(skews, 0.5);
  int best = -1;
  for (const auto& [rank, n] : slowest)
    if (best < 0 || n > slowest[best]) best = rank;
  s.slowest_rank = best;
  s.slowest_share = static_cast<double>(slowest[best]) / static_cast<double>(skews.size());
  return s;
}

}  // namespace gcb
