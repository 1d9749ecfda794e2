// `gcbench train`: real training steps of a GPT model under one parallel layout or a sweep of
// layouts (dp × tp × pp, sp, ZeRO, pipeline schedule, recomputation) on the same model and global
// batch; step time through the harness, time split, memory and communication next to theory,
// MFU / HFU against the device peak (CPU: a measured sgemm peak). Engines: models/.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "bench/runner.hpp"
#include "models/config.hpp"
#include "models/engine.hpp"

namespace gcb::bench {

// One layout of a sweep (or the single layout given by --dp --tp --pp --sp --zero --schedule).
struct TrainLayout {
  std::string name;
  int dp = 1, tp = 1, pp = 1;
  bool sp = false;
  int zero = 0;
  models::PipeSchedule schedule = models::PipeSchedule::one_f_one_b;
  bool overlap = false;  // dp bucket collectives on a second thread (models/comm_lane.hpp)
};

struct TrainCliOptions {
  std::string model = "tiny";  // a named config or a JSON file (models/config.hpp)
  models::ConfigOverrides overrides;
  int dp = 1, tp = 1, pp = 1;
  bool sp = false;
  int zero = 0;
  bool overlap = false;
  std::string schedule = "1f1b";
  int micro_batch = 1;
  int global_batch = 0;  // sequences per step; 0 = ranks × micro-batch
  std::string recompute = "none";
  int steps = 5, warmup = 1;
  std::string backend = "cpu";
  int ranks = 0;  // 0 = dp·tp·pp (single layout) or the MPI world size
  uint64_t seed = 1234;
  std::string sweep;       // LAYOUTS: see parse_sweep
  double peak_flops = 0;   // FLOP/s; 0 = measure an sgemm of peak_size³
  int peak_size = 1024;
  std::string dump;        // write the final loss and every parameter (hex) to this file
  double timeout = 300;    // seconds one step (or a wait for another rank) may take; exit 3 past it
};

// Sweep grammar: layouts separated by ',', each a '-'-separated list of tokens:
//   dp | dpN   data parallel (dp alone, or omitted: every rank not used by tp·pp)
//   tpN  ppN   tensor / pipeline parallel degree
//   sp         sequence parallelism (with tp)
//   zeroK      ZeRO stage K on the dp dimension (0–3)
//   gpipe | 1f1b   pipeline schedule (default 1f1b)
// e.g. "dp,zero1,tp2,tp2-sp,pp4-1f1b" on --ranks 4 = dp4, dp4 zero1, dp2×tp2, dp2×tp2 sp,
// pp4 1F1B. gcb::UsageError on an unknown token or when tp·pp does not divide `ranks`.
std::vector<TrainLayout> parse_sweep(const std::string& text, int ranks);

// Checks everything that can be checked before any allocation (config, divisibility, layout,
// batch, backend built); throws gcb::UsageError with one line.
struct TrainPlan {
  models::GptConfig config;
  std::vector<TrainLayout> layouts;
  int ranks = 1;
};
TrainPlan plan_train(const TrainCliOptions& o);

// Host bytes one rank of `layout` holds at least (model states + activations, the analytic
// formulas of models/engine.hpp; bench/train_memory.cpp). plan_train refuses a plan whose ranks
// on this host need more than is available (core/host_memory.hpp).
uint64_t train_rank_host_bytes(const models::TrainOptions& t, const models::ParallelLayout& layout);
void check_train_host_memory(uint64_t rank_bytes, int world_ranks, const std::string& layout);

// CPU peak: FLOP/s of cblas_sgemm (or the naive loop) on n×n×n, best of the harness samples.
double measure_sgemm_peak(int n);

// Runs every layout of the plan (collective over the world when launched by mpirun) and adds
// one result "train/<layout>" per layout to the runner; prints the comparison table unless quiet.
void run_train(const TrainCliOptions& o, const TrainPlan& plan, Runner& runner, bool quiet);

// The quick suite: a sweep of dp2, zero1, tp2, tp2-sp, pp2-1f1b on `tiny` with 2 rank threads
// (a few seconds). Results go to `runner`.
void run_train_quick(Runner& runner);

void add_train_command(CLI::App& root, std::function<int()>& run, const std::vector<std::string>& argv);

}  // namespace gcb::bench
