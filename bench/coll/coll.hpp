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
#include "collectives/communicator.hpp"
#include "collectives/world.hpp"
#include "core/dtype.hpp"
#include "reports/result.hpp"

namespace gcb::bench {

enum class CollOp : uint8_t {
  all_reduce,
  all_gather,
  reduce_scatter,
  broadcast,
  reduce,
  alltoall,
  sendrecv,
  gather,
  scatter
};
std::string_view coll_op_name(CollOp op);
std::optional<CollOp> parse_coll_op(std::string_view name);
const std::vector<CollOp>& all_coll_ops();
bool coll_has_redop(CollOp op);
bool coll_has_root(CollOp op);
bool coll_supports_in_place(CollOp op);

// busbw = algbw × factor, nccl-tests v2.19.6 src/*.cu and doc/PERFORMANCE.md
// (NVIDIA/nccl-tests doc/PERFORMANCE.md); n = ranks.
double busbw_factor(CollOp op, int nranks);

// How a requested size becomes buffers, as nccl-tests' *GetCollByteCount: `bytes` is the size
// column and the algbw numerator; `count` is elements per rank's part (per peer for alltoall,
// per rank block for all_gather/reduce_scatter/gather/scatter); sharded per-rank counts are
// rounded down to a multiple of 16 B. count == 0 means the size is too small for this op.
struct CollShape {
  uint64_t bytes = 0;
  size_t count = 0;         // elements per rank (per block for sharded ops)
  size_t send_count = 0;    // elements in the send buffer
  size_t recv_count = 0;    // elements in the recv buffer
  size_t column_count = 0;  // the "count (elements)" column: bytes / type size
};
CollShape coll_shape(CollOp op, uint64_t requested_bytes, DType t, int nranks);

enum class TimingMode : uint8_t { pipelined, isolated, graph };
std::string_view timing_mode_name(TimingMode m);
std::string_view timing_mode_description(TimingMode m);

// nccl-tests -a: how per-rank times are combined (0 rank 0, 1 avg, 2 min, 3 max).
enum class RankCombine : uint8_t { rank0 = 0, avg = 1, min = 2, max = 3 };
std::string_view rank_combine_name(RankCombine c);

struct CollOptions {
  std::vector<CollOp> ops = {CollOp::all_reduce};
  std::vector<ReduceOp> redops = {ReduceOp::sum};
  std::vector<DType> dtypes = {DType::f32};
  uint64_t min_bytes = uint64_t{32} << 20, max_bytes = uint64_t{32} << 20;  // -b -e (nccl-tests: 32M)
  uint64_t step_bytes = uint64_t{1} << 20;                                  // -i
  uint64_t step_factor = 0;                                                 // -f (0 = off: additive -i steps)
  int iters = 20;                          // -n: ops per sample (pipelined) / samples at least (isolated)
  int warmup_iters = 1;                    // -w
  int check = 1;                           // -c: check iterations; 0 = off
  int root = 0;                            // -r; -1 = every root
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
// The backend a run gets when --backend is not given: nccl where GPUs exist, else mpi when
// started under mpirun/srun, else threads.
std::string default_coll_backend();

// The World of the rank-pair families (coll, p2p ranks): `backend` ("" = default_coll_backend()),
// `ranks` (0 = 4 rank threads for the threads backend, else the launcher's or one per GPU), the
// fault timeout and the argument hash. fn returns this rank's count of wrong elements; the exit
// code is kExitVerifyFailed when rank 0 saw any, else kExitOk.
// Host bytes one rank of `coll` needs at -e (buffers and the correctness check), the largest over
// the chosen ops and types; and the refusal (exit 2) when the ranks on this host need more than
// is available. No-op for the nccl backend (device memory).
double coll_host_bytes_per_rank(const CollOptions& o, int nranks);
void check_coll_host_memory(const CollOptions& o, int world_size);

// The number of ranks run_checked_world(backend, ranks, ...) would start, after every refusal the
// World would make (planned_world_size): for checks that must come before any output exists.
int checked_world_size(const std::string& backend, int ranks);
int run_checked_world(const std::string& backend, int ranks, double timeout_s, const std::vector<std::string>& args,
                      const std::function<uint64_t(RankContext&)>& fn);

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
int run_coll_quick(const HarnessOptions& harness, Runner& runner, bool quiet);

void add_coll_command(CLI::App& root, std::function<int()>& run, const std::vector<std::string>& argv);

}  // namespace gcb::bench
