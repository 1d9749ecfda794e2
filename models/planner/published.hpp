// Published training runs checked against the planner: a table of runs (model shape, layout,
// GPUs, achieved teraFLOP/s per GPU — Narayanan et al. 2021 Table 1 is the fixture), their
// iteration time and FLOP rates recomputed with the paper's own FLOP formula (eq. 3), and the
// planner's step time for each run with the GPU's compute efficiency fitted leave-one-out: the
// efficiency that reproduces each other run, averaged, predicts this one.
#pragma once

#include <string>
#include <vector>

#include "models/planner/planner.hpp"

namespace gcb::models::planner {

struct PublishedRun {
  std::string model;
  double params_billion = 0;
  GptConfig config;
  int global_batch = 0, micro_batch = 1, tp = 1, pp = 1, dp = 1, gpus = 1, virtual_stages = 1;
  Recompute recompute = Recompute::full;
  double tflops_per_gpu = 0, percent_of_peak = 0, aggregate_pflops = 0;
};

// CSV with the header of tests/fixtures/planner/narayanan2021-table1.csv; gcb::UsageError naming
// the line for a missing column or a malformed number.
std::vector<PublishedRun> read_published_runs(const std::string& path);

struct PublishedCheck {
  PublishedRun run;
  double params_billion = 0;     // param_count() of our GPT-2 layout
  double flops = 0;              // per iteration, eq. (3) (with recomputation)
  double iteration_time = 0;     // F / (GPUs · teraFLOP/s per GPU)
  double hfu = 0;                // %: eq. (3) FLOPs / (time · GPUs · peak) — the paper's percentage
  double mfu = 0;                // %: the same without the recomputed forward (72… form of eq. 3)
  double fitted_efficiency = 0;  // that makes the predicted step equal iteration_time
  double loo_efficiency = 0;     // mean fitted efficiency of the other runs
  double predicted_time = 0;     // at loo_efficiency
  double error = 0;              // predicted_time / iteration_time − 1
  Prediction prediction;         // at loo_efficiency
};

// Every run on `spec` nodes of `gpus_per_node` (flash attention off, attention dropout on,
// Megatron's pipeline scatter/gather, no ZeRO, no overlap: the paper's setting; the paper's
// "percentage of peak" is taken of spec's dense 16-bit rate).
std::vector<PublishedCheck> check_published(const std::vector<PublishedRun>& runs, const GpuSpec& spec,
                                            int gpus_per_node);

// The planner's request for one published run at compute efficiency `e`.
PlanRequest published_request(const PublishedRun& run, const GpuSpec& spec, int gpus_per_node, double e);
Candidate published_candidate(const PublishedRun& run);

}  // namespace gcb::models::planner
