// Every layout a cluster could train a model with: dp·tp·pp = GPUs, then ZeRO stage, sequence
// parallelism, recomputation, micro-batch size, pipeline schedule (and interleaving), overlap, CPU
// offload of the optimizer (ZeRO-Offload) and of the saved activations (GPU clusters only) —
// and, for each combination that cannot run, why: the tp group would leave the node, tp does not
// divide the heads or hidden size, pp exceeds the layers, the global batch does not split into
// dp × micro-batch, the engine's own checks (engine.hpp layout_error).
#pragma once

#include <string>
#include <vector>

#include "models/planner/predict.hpp"

namespace gcb::models::planner {

struct SearchSpace {
  std::vector<int> micro_batches{1, 2, 4, 8};
  std::vector<Recompute> recompute{Recompute::none, Recompute::selective, Recompute::full};
  std::vector<ZeroStage> zero{ZeroStage::none, ZeroStage::one, ZeroStage::two, ZeroStage::three};
  std::vector<PipeSchedule> schedules{PipeSchedule::one_f_one_b, PipeSchedule::gpipe};
  std::vector<bool> sp{false, true};
  std::vector<bool> overlap{false, true};
  std::vector<int> virtual_stages{1};
  // --offload (train_options.hpp Offload); a CPU cluster's host memory is its device memory, so
  // offload frees nothing there and is left out.
  std::vector<Offload> offload{Offload::none, Offload::optimizer, Offload::activations, Offload::optimizer_activations};
  // Full recomputation in blocks of K layers (train_options.hpp Recompute): K for every full
  // candidate, or 0: K = 1, and where that does not fit the smallest K that does (make_plan).
  int recompute_every = 0;
  bool tp_across_nodes = false;  // allow tp groups that span nodes
};

// A combination that cannot run; `variants` = how many candidates it stands for.
struct Rejection {
  std::string what;    // "dp8-tp16-pp8" or a candidate name
  std::string reason;  // one line
  long variants = 1;
};

// Why (dp, tp, pp) cannot train this model on this cluster, or "".
std::string layout_error(const GptConfig& model, const Cluster& cluster, int global_batch, int dp, int tp, int pp,
                         bool tp_across_nodes);
// Why the candidate cannot run (its layout, then its micro-batch, SP and interleaving), or "".
std::string candidate_error(const PlanModel& pm, const Candidate& c, bool tp_across_nodes);

// The candidates of the space that can run, in a fixed order; `rejected` gets the rest.
std::vector<Candidate> enumerate_candidates(const PlanModel& pm, const SearchSpace& space,
                                            std::vector<Rejection>& rejected);

}  // namespace gcb::models::planner
