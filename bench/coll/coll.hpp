// `gcbench coll`: collective bandwidth and latency with nccl-tests' flags, columns and bus
// bandwidth factors (NVIDIA/nccl-tests doc/PERFORMANCE.md), over the threads, MPI or NCCL backend, with
// exact #wrong checks, labelled timing modes, per-rank skew and an α–β fit per operation.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "bench/common/cli.hpp"
#include "collectives/coll_op.hpp"
#include "collectives/communicator.hpp"
#include "collectives/rank_timer.hpp"
#include "collectives/rank_world.hpp"
#include "collectives/world.hpp"
#include "core/dtype.hpp"
#include "reports/result.hpp"

namespace gcb::bench {

struct CollOptions {
  std::vector<CollOp> ops = {CollOp::all_reduce};
  std::vector<ReduceOp> redops = {ReduceOp::sum};
  std::vector<DType> dtypes = {DType::f32};
  uint64_t min_bytes = uint64_t{32} << 20, max_bytes = uint64_t{32} << 20;  // -b -e (nccl-tests: 32M)
  uint64_t step_bytes = uint64_t{1} << 20;                                  // -i
  uint64_t seed = 1;         // --seed: the seed of every rank's verifiable payload (collectives/verifiable_case)
  uint64_t step_factor = 0;  // -f (0 = off: additive -i steps)
  int iters = 20;            // -n: ops per sample (pipelined) / samples at least (isolated)
  int warmup_iters = 1;      // -w
  int check = 1;             // -c: check iterations; 0 = off
  int root = 0;              // -r; -1 = every root
  RankCombine average = RankCombine::max;  // -a (nccl-tests default is avg; ours is max)
  int blocking = 0;                        // -z: 1 = synchronize + barrier after each op
  int run_cycles = 1;                      // -N: 0 = forever
  int cudagraph = 0;                       // -G: graph launches per sample (implies --mode graph)
  TimingMode mode = TimingMode::pipelined;
  std::string backend;   // "" = default for this machine and launcher
  int ranks = 0;         // threads: rank threads (0 = 4 on CPU, one per GPU)
  double timeout = 300;  // seconds before a stuck rank aborts the run
  bool verbose = false;  // -v: samples, stop reason and wall time per size
  bool in_place = true;  // also measure the in-place placement where the op has one

  // Test hooks (hidden flags --test-corrupt RANK:INDEX, --test-fail-rank R).
  int corrupt_rank = -1;
  size_t corrupt_index = 0;
  int fail_rank = -1;
};

// Throws gcb::UsageError for impossible values.
void validate(const CollOptions& o);
// Host bytes one rank of `coll` needs at -e (buffers and the correctness check), the largest over
// the chosen ops and types; and the refusal (exit 2) when the ranks on this host need more than
// is available. No-op for the nccl backend (device memory).
double coll_host_bytes_per_rank(const CollOptions& o, int nranks);
void check_coll_host_memory(const CollOptions& o, int world_size);

// The α–β fit t(n) = α + n/β of one sweep (bytes = the size column, seconds per op) as the
// result "coll/<op>/fit": metrics alpha (us), beta (GB/s), n_half (B), max_rel_residual;
// per-point residuals in extra. WAIVED when fewer than two sizes or no physical fit.
Result coll_fit_result(CollOp op, const nlohmann::json& params, std::span<const double> bytes,
                       std::span<const double> seconds);

// Measures every op × dtype × redop × root × size × placement on the ranks of `ctx`. Rank 0 prints
// the tables (unless quiet) and adds results to `runner`; `runner` is ignored on other ranks.
// Returns the number of wrong elements summed over all checks and ranks.
uint64_t run_coll_on_rank(const CollOptions& o, const HarnessOptions& harness, RankContext& ctx, Runner* runner,
                          bool quiet);

// Starts the World for `o` and runs the family into `runner` (used on rank 0 only). `args` are
// the arguments every rank must share. Returns rank 0's verdict on every rank: 0, or 1 when a
// check found wrong elements.
int run_coll(const CollOptions& o, const HarnessOptions& harness, Runner& runner, bool quiet,
             const std::vector<std::string>& args);

// For `gcbench run --suite quick`: all ops, 4 rank threads (or the machine's GPUs / the launcher's
// ranks), 8 B to 1 MiB ×16, pipelined, into `runner`.
CollOptions quick_coll_options();
int run_coll_quick(const HarnessOptions& harness, Runner& runner, bool quiet, uint64_t seed);

void add_coll_command(CLI::App& root, std::function<int()>& run, const std::vector<std::string>& argv);

}  // namespace gcb::bench
