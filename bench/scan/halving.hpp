// The collective stage's search for a slow subset (`gcbench scan`, stage 5): measure the whole
// job; when it falls short (or no expected value is known), measure its two halves at the same
// time and keep the slower when it is clearly slower — its bus bandwidth (of its median sample)
// below (1 − tolerance) × the faster's AND even its best sample below the faster's median (one
// measurement per group gives no spread to test against; a stall only ever slows samples, so the
// faster group's median and the slower group's best sample are what a stall cannot fake); repeat
// inside it. Once the suspect set has two or three nodes, each suspect is measured with a node
// from a half that was fast ("probes"), so a slow probe names one node; when no probe is slow the
// suspect subset is measured once more ("subset again") and named only when it is still clearly
// slower than the best probe (a stall during the halves step is no slow subset). A pure state machine: the
// caller measures next_groups() (disjoint, concurrently) and record()s the bus bandwidths in the
// same order.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace gcb::scan {

// One group's bus bandwidth (GB/s): of its median sample and of its best (fastest) sample.
struct GroupBusbw {
  double busbw = 0, best = 0;
};

struct HalvingStep {
  std::string purpose;                   // "whole job", "halves", "probes", "subset again"
  std::vector<std::vector<int>> groups;  // node indices per group
  std::vector<double> busbw;             // GB/s per group, as recorded
};

struct HalvingOutcome {
  bool job_short = false;  // whole job below (1 − tolerance) × expected (when known)
  std::optional<double> whole_busbw;
  std::vector<int> culprits;     // nodes whose probe was slow
  std::vector<int> slow_subset;  // smallest subset found slow when no single node was named
  std::vector<int> cleared;      // nodes that were in a fast half or a fast probe
  std::string note;              // how the search ended
  std::vector<HalvingStep> steps;
};

class HalvingSearch {
 public:
  // `expected_busbw` (GB/s): the bus bandwidth the slowest link allows, when known.
  HalvingSearch(int nodes, double tolerance, std::optional<double> expected_busbw);
  bool done() const { return state_ == State::done; }
  // Disjoint node groups to measure now (each with ≥ 2 nodes). Empty when done.
  const std::vector<std::vector<int>>& next_groups() const { return pending_; }
  // Bus bandwidth of each group of next_groups(), in order.
  void record(const std::vector<GroupBusbw>& measured);
  const HalvingOutcome& outcome() const { return out_; }

 private:
  enum class State { whole, halves, probes, recheck, done };
  void plan_halves();
  void plan_probes();
  // The next probe round: the probes left whose good partner is still free in it.
  void pack_probe_round();
  void finish(std::string note);
  bool clearly_slower(const GroupBusbw& x, const GroupBusbw& reference) const {
    return x.busbw < (1 - tolerance_) * reference.busbw && x.best < reference.busbw;
  }

  int nodes_;
  double tolerance_;
  std::optional<double> expected_;
  State state_ = State::whole;
  std::vector<int> suspects_, good_;
  std::vector<std::vector<int>> pending_;
  // Probe bookkeeping: probes not yet measured, and per suspect its measured busbw.
  std::vector<std::pair<int, int>> probes_left_;  // (suspect, good partner)
  std::vector<std::pair<int, GroupBusbw>> probe_values_;
  GroupBusbw recheck_reference_;  // the best probe, against which the subset is measured again
  HalvingOutcome out_;
};

}  // namespace gcb::scan
