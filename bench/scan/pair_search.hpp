// The inter-node pair stage of `gcbench scan` as a pure state machine, as halving.hpp is for the
// collectives: rounds of disjoint node pairs (plan.hpp: the first `max_rounds` rounds of the
// round-robin, every node meeting that many partners), up to three confirmation passes that
// measure again the links that looked SLOW or failed, up to three probe passes that measure every
// node found SLOW with a node that is not (unless a confirmation or probe already did), the
// bisection (half against half, all at once) and one confirmation of the bisection's links that
// looked SLOW or failed. The caller measures next() — every pair at the same time — tags
// each result with tag() plus its nodes and rail, and record()s them; the verdicts are
// judge_pairs' (judge.hpp) on results(). The stage (stage_pairs.cpp) drives it over MPI/NCCL
// sub-worlds, the simulator (tests/bench/scan/scan_simulator.cpp) over a synthetic cluster.
#pragma once

#include <string>
#include <vector>

#include "bench/scan/findings.hpp"
#include "bench/scan/plan.hpp"
#include "bench/scan/robust.hpp"
#include "reports/result.hpp"

namespace gcb::scan {

// Rounds of the pair stage for `nodes` nodes: `requested` when > 0 (at most nodes − 1 or nodes
// for an odd count), else every round up to kDefaultPairRounds.
inline constexpr int kDefaultPairRounds = 32;
int pair_rounds_for(int nodes, int requested);

struct PairStep {
  std::string purpose;  // "round", "confirm", "probe", "bisection", "bisection confirm"
  Round pairs;
  int index = 0;  // among the steps of its purpose
  int total = 0;  // rounds planned (for "round")
};

// The bisection and its confirmation measure bidirectional bandwidth only (stage "bisection").
inline bool is_bisection(const PairStep& s) { return s.purpose == "bisection" || s.purpose == "bisection confirm"; }

class PairSearch {
 public:
  PairSearch(std::vector<std::string> nodes, const RobustRule& rule, int max_rounds);
  bool done() const { return steps_.empty(); }
  const PairStep& next() const { return steps_.front(); }
  // Adds the step's params to a result of next(): stage ("pairs" / "bisection"), round, and
  // confirm / probe for re-measurements.
  void tag(Result& r) const;
  // The tagged results of next(); advances.
  void record(std::vector<Result> results);
  const std::vector<Result>& results() const { return results_; }
  std::vector<Finding> findings() const;
  int rounds() const { return rounds_; }
  // Steps measured so far, by purpose.
  int measured(const std::string& purpose) const;

 private:
  void plan_after(const std::string& purpose);
  void plan_bisection();

  std::vector<std::string> nodes_;
  RobustRule rule_;
  int rounds_ = 0;
  int confirm_passes_ = 0;
  int probe_passes_ = 0;
  std::vector<PairStep> steps_;  // pending, in order
  std::vector<PairStep> done_;
  std::vector<NodePair> confirmed_;  // pairs measured again already
  std::vector<Result> results_;
};

}  // namespace gcb::scan
