// `gcbench plan`: which parallel layout of a model trains fastest on a cluster and fits in its
// memory. Flags → a models::planner::PlanRequest → make_plan → a ranked, explained table, results
// in the suite's schema, and optionally the top layouts run through the training library
// (--verify) or a table of published runs checked row by row (--published). docs/readme-plan.md.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "collectives/rank_timer.hpp"
#include "core/harness.hpp"
#include "models/model/config.hpp"
#include "models/planner/planner.hpp"
#include "models/planner/published.hpp"
#include "models/model/train_option_names.hpp"
#include "models/model/train_options.hpp"
#include "models/planner/layout_space.hpp"
#include "models/planner/step_work.hpp"
#include "reports/specs.hpp"

namespace gcb::bench {

// `gcbench plan`'s own exit code: every candidate layout is out of memory (or none can run), so
// there is nothing to train with; the last line of the output says so. (0-4: core/error.hpp.)
inline constexpr int kExitNoLayoutFits = 5;

// --attention: which attention cost the planner prices (step_work.hpp AttentionCostModel).
enum class AttentionScores : uint8_t { flash, materialized, materialized_dropout };
models::NameTable<AttentionScores> attention_scores_names();
models::planner::AttentionCostModel attention_cost_model(AttentionScores a);

struct PlanCliOptions {
  std::string model = "tiny";  // named config or JSON file
  models::ConfigOverrides overrides;
  // --gpu, resolved when parsed: cpu (rank threads of this host; the default), a spec-table row,
  // or neither for `--gpu ""` (the GPU of --topo's topology).
  struct Gpu {
    bool cpu = true;
    std::optional<GpuSpec> spec;
  } gpu;
  int gpus = 0, gpus_per_node = 0, nodes = 0;  // 0 = derived (see docs)
  double intra_gbps = 0, inter_gbps = 0;
  std::string topo;                      // topology file
  std::vector<std::string> calibration;  // result files
  double efficiency = 0.68;              // see docs/readme-plan.md
  uint64_t memory_limit = 0;             // --memory-limit in bytes (given as e.g. 80G); 0 = the spec's
  std::optional<uint64_t> host_memory;   // --host-memory: bytes per node for offload (e.g. 2T); none = not checked
  // --precision; not given: bf16 on GPUs, fp32 on cpu
  std::optional<models::Precision> precision;
  int global_batch = 0;
  // The layouts to consider, as CLI11 converted the list flags (--micro-batch, --recompute,
  // --zero, --schedule, --sp, --overlap, --virtual-stages, --offload, --recompute-every with auto
  // as 0, --allow-tp-across-nodes); the defaults are SearchSpace's.
  models::planner::SearchSpace space;
  AttentionScores attention = AttentionScores::flash;
  bool pp_scatter_gather = false;
  std::string layout;  // --layout: only these
  int top = 10, rejected = 5;
  int verify = 0, verify_repeats = 1, steps = 3, warmup = 1;
  double verify_tolerance = 0.25;  // |predicted / measured − 1| above it fails; 0 = not judged
  std::string published;           // a CSV of published runs
  bool shapes = false;             // print the GEMM / attention shapes of the shown layouts
  bool host_probe = true;          // --gpu cpu: measure the shared host (plan_probe.cpp)
};

// One figure of the host probe: `ranks` rank threads running their calls at once, timed by the
// one harness through the multi-rank timer (collectives/rank_timer.hpp: a barrier before every
// sample, the per-rank times gathered). The rank statistic is the slowest rank's time (max,
// nccl-tests -a 3): a training step ends at collectives that wait for every rank of the layout,
// so what the shared host costs a step is what it costs its slowest rank, not the typical one.
// The figure is the median over samples of that max: a sample lasts milliseconds, so one
// preemption by another process (itself milliseconds) would dominate a mean, and the probe's
// figures are ratios and ceilings of the layout's own ranks, not of the host's other tenants.
struct RanksAtOnce {
  double seconds = 0;  // median over samples of the slowest rank's s per call
  size_t samples = 0;
  int batch = 1;                              // calls per sample (the harness's choice, or the options')
  std::vector<std::vector<double>> per_rank;  // per sample, each rank's s per call
  RankSkew skew;                              // how far the ranks drifted apart (rank_skew)
};
HarnessOptions probe_harness_options();
// make_call(rank) runs on that rank's thread (its buffers are allocated there, first touch) and
// returns the call to time.
RanksAtOnce time_ranks_at_once(int ranks, const std::function<std::function<void()>(int rank)>& make_call,
                               const HarnessOptions& options = probe_harness_options());

// What the ranks of a CPU layout see when they all run at once on this host (plan_probe.cpp).
struct HostProbe {
  models::planner::SharedHostRates rates;        // element-wise ceilings, GEMM contention
  double bandwidth = 0;                          // B/s of one rank's triad while all run one (0: not measured)
  double gemm_alone_s = 0, gemm_together_s = 0;  // the slowest rank's (time_ranks_at_once)
  RankSkew gemm_together_skew;                   // the ranks' spread in the together figure
  std::string gemm_shape;
  // The rank threads' all_reduce (the threads communicator training runs on, every rank at once;
  // 0: not measured): a 4-byte call's time (the latency α) and one of `all_reduce_bytes` (a
  // layer's fp32 gradient, as the dp reduction sends it), from which the bus bandwidth
  // 2(n−1)/n · bytes / (time − α) (nccl-tests' busbw) costs every collective of the plan.
  double all_reduce_alpha_s = 0, all_reduce_large_s = 0, all_reduce_busbw = 0;
  size_t all_reduce_bytes = 0;
  int ranks = 1, threads_per_rank = 1, cores = 1;
  double seconds = 0;  // the probe's own run time
};
HostProbe probe_shared_host(const models::GptConfig& model, int ranks, bool measure_bandwidth, bool measure_all_reduce);

// Flags to the planner's request; gcb::UsageError with one line for anything invalid.
models::planner::PlanRequest plan_request(const PlanCliOptions& o);

// `--layout` items (the --sweep grammar plus vN, interleaved 1F1B model chunks) on `gpus` GPUs,
// each with the given micro-batch and recomputation (full: in blocks of `recompute_every` layers).
std::vector<models::planner::Candidate> parse_plan_layouts(const std::string& text, int gpus, int micro_batch,
                                                           models::Recompute recompute, int recompute_every = 1);

// Printing (plan_print.cpp).
void print_plan(const models::planner::PlanRequest& req, const models::planner::PlanModel& pm,
                const models::planner::PlanOutcome& out, int top, int rejected);
// The plan tables' memory figures: GiB from 1 GiB up, MiB or KiB below ("512.0 MiB", never
// "0.00 GiB"), bytes below 1 KiB.
std::string memory_text(double bytes);
void print_shapes(const models::planner::PlanModel& pm, const std::vector<models::planner::Prediction>& shown);
void print_published(const std::vector<models::planner::PublishedCheck>& checks, const std::string& gpu);

// --verify (plan_verify.cpp): the first `n` predictions that this machine can run, each run
// `repeats` times through models::run_training (rounds interleaved); prints predicted against
// measured (median over rounds) and returns the measurements and a comparison result per layout:
// FAIL when a memory category differs (activations: by more than 10 %) or, with tolerance > 0,
// when the step time is off by more than that fraction. `data_seed` seeds the synthetic tokens (--seed).
std::vector<Result> verify_plan(const models::planner::PlanModel& pm,
                                const std::vector<models::planner::Prediction>& fits, int n, int repeats, int steps,
                                int warmup, double tolerance, uint64_t data_seed);

// Which layouts the measurement cannot tell apart from the fastest: given each layout's step
// times over the rounds, the indices whose range [min, max] overlaps that of the layout with the
// lowest median (it included), in input order. One round each: only exact equals tie.
std::vector<size_t> measured_ties(const std::vector<std::vector<double>>& rounds);

void add_plan_command(CLI::App& root, std::function<int()>& run, const std::vector<std::string>& argv);

}  // namespace gcb::bench
