// The planner: every candidate layout of a model on a cluster (layout_space.hpp) predicted
// (predict.hpp), the ones that fit the memory limit ranked by step time, the others explained;
// and each prediction as a result of the suite's schema ("plan/<candidate>").
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "models/planner/layout_space.hpp"
#include "models/planner/predict.hpp"
#include "reports/result.hpp"

namespace gcb::models::planner {

struct PlanRequest {
  GptConfig model;
  int global_batch = 0;
  Precision precision = Precision::bf16;
  AttentionCostModel attention;
  bool pp_scatter_gather = false;
  Cluster cluster;
  Calibration calibration;
  double efficiency = 0;   // of uncalibrated GEMM / attention calls (compute_model.hpp)
  SharedHostRates shared;  // cpu: what ranks sharing the host's cores see (compute_model.hpp)
  SearchSpace space;
  std::vector<Candidate> only;  // non-empty: predict just these (`--layout`)
};

struct PlanOutcome {
  std::vector<Prediction> fits;  // fastest first
  std::vector<Prediction> oom;   // smallest overshoot first
  std::vector<Rejection> invalid;
  size_t candidates = 0;        // predicted (fits + oom + offload_left_out)
  size_t offload_left_out = 0;  // offloaded predictions dropped (make_plan)
};

// The models a prediction needs, from the request (the calibration replaces the cluster's
// memory bandwidth where it measured one: on a cpu cluster the share of one rank of a triad
// measured with about as many threads as all ranks run, calibration.hpp rank_bandwidth).
PlanModel plan_model(const PlanRequest& r);
// Full recomputation in blocks of K layers (Chen et al. 2016 §3–4): for a candidate with plain
// full recomputation (K = 1), the smallest K ≥ 2 whose memory fits the device, if any. The
// smallest is the fastest: every K reruns one forward of every layer, but ZeRO-3 gathers the
// layers of each block but its last once more (theory.cpp comm_bytes).
std::optional<int> smallest_fitting_block(const PlanModel& pm, const Candidate& c);
// gcb::UsageError for a global batch < 1 or, with `only`, a candidate that cannot run. When the
// space searches both offload none and optimizer, an offloaded row stays only where it fits and its
// twin without offload does not, or is slower. With
// space.recompute_every = 0, a full-recomputation candidate that does not fit gets a second row
// with the smallest block size K that fits (smallest_fitting_block), where there is one.
PlanOutcome make_plan(const PlanRequest& r);

// "plan/<candidate>": params (layout, dp, tp, pp, sp, zero, schedule, overlap, virtual_stages,
// micro_batch, recompute, global_batch, gpus, device, rank), metrics step_time (s), tokens_per_s,
// mfu, hfu (%), memory (B, its limit as the peak), extra: the time breakdown, memory per category,
// the stage they belong to and the sources of every rate. No samples: nothing was timed.
Result prediction_result(const Prediction& p, const PlanModel& pm, int rank);

}  // namespace gcb::models::planner
