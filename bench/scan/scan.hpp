// `gcbench scan`: is every node, GPU and link as fast as its peers and as its hardware promises,
// and if not, which one is it? Gated stages, each on every node in parallel — inventory, per
// device, intra-node links, inter-node pairs (round-robin rounds + bisection), collectives with
// recursive halving, and an optional reference training step — then verdicts (findings.hpp) by
// the rule of robust.hpp, a ranked culprit list, and exit code 1 when anything is not OK.
// Docs: docs/readme-scan.md.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "bench/common/cli.hpp"
#include "bench/scan/robust.hpp"

namespace gcb::scan {

inline const std::vector<std::string> kStageNames = {"inventory", "device", "links", "pairs", "coll", "reference"};

struct ScanOptions {
  std::vector<std::string> stages = {"inventory", "device", "links", "pairs", "coll"};  // reference: opt-in
  double budget_s = 0;  // whole scan, seconds; 0 = default_budget_s(nodes, rehearse)
  RobustRule rule;
  bool fail_fast = false;  // stop after the first stage with a verdict other than OK
  // Per device.
  uint64_t device_size = 0;  // STREAM array bytes; 0 = mem's default (4 × LLC / L2, ≥ 64 MiB)
  int gemm_size = 0;         // square GEMM; 0 = 1024 on the host, 8192 on GPUs
  double burn = 0;           // GPU GEMM burn seconds (harness min time); 0 = the stage's share
  // Intra-node links (GPU pairs inside a node).
  uint64_t link_size = uint64_t{256} << 20;
  // Inter-node pairs.
  uint64_t pair_size = 0;  // 0 = 8 MiB on host memory, 256 MiB with NCCL
  int pair_rounds = 0;     // round-robin rounds; 0 = all up to kDefaultPairRounds (pair_search.hpp)
  // Collectives.
  std::vector<std::string> coll_ops = {"all_reduce"};  // the first one drives the halving search
  uint64_t coll_size = 0;                              // 0 = 8 MiB on host memory, 256 MiB with NCCL
  int coll_iters = 5;                                  // ops per sample
  // Reference step.
  std::string reference_model = "tiny";
  int reference_steps = 3;
  // World.
  std::string backend;   // threads | mpi | nccl; "" = nccl with GPUs, mpi under a launcher, else threads
  int ranks = 0;         // threads backend: rank threads (default 1)
  double timeout = 600;  // seconds a rank may wait before the run aborts
  // Drift and offline inventory.
  std::string baseline;                     // a previous scan's JSON: each node against its own past
  std::vector<std::string> inventory_from;  // [NAME=]FILE topology dumps: compare them, measure nothing
  // Rehearsal on one host (--rehearse): every rank is its own node "<host>-r<rank>" (rank threads
  // or MPI ranks), so every stage between nodes runs; measures the host's own memory and loopback.
  bool rehearse = false;
  bool tolerance_given = false;  // --tolerance was on the command line
  // Set by rehearsal_rule where it raised the tolerance: what the header says about it.
  std::string rule_note;
};

void validate(const ScanOptions& o);

// A rehearsal whose ranks outnumber the host's CPUs times its ranks against each other's
// scheduling: on 2 vCPUs four rank-thread nodes gave a host sgemm, a pair or a half 18–54 % short
// of the others in quiet runs, each a false SLOW at the default 10 %. There, unless --tolerance
// was given, a shortfall must pass kSharedCpuTolerance to be SLOW, and rule_note says so; else `o`
// unchanged. Every rank of one host computes the same (online CPUs, ranks on the host).
inline constexpr double kSharedCpuTolerance = 0.6;
ScanOptions rehearsal_rule(const ScanOptions& o, int ranks_on_host, long host_cpus);
bool has_stage(const ScanOptions& o, const std::string& stage);
// Default budget in seconds for a job of `nodes` nodes: 120 + 30 × nodes; a rehearsal (rank
// threads of one host as nodes) 30 + 4 × nodes — it proves the stages and the verdict, and its
// "nodes" share one host's cores, so a longer run measures nothing more about a cluster.
double default_budget_s(int nodes, bool rehearse = false);
// --budget's value: seconds, or with a suffix s (seconds) or m (minutes): "600", "600s", "10m",
// "0.5m". UsageError for anything else or a negative number.
double parse_budget_s(std::string_view text);

// Runs the scan into `runner` (rank 0's; ignored elsewhere) and returns rank 0's verdict on every
// rank: 0 when everything is OK, 1 otherwise.
int run_scan(const ScanOptions& o, const bench::CommonOptions& common, bench::Runner& runner,
             const std::vector<std::string>& args);
// --inventory-from: judges saved topology dumps into `runner`; returns 0 or 1 likewise.
int run_inventory_files(const ScanOptions& o, bench::Runner& runner, bool quiet);

void add_scan_command(CLI::App& root, std::function<int()>& run, const std::vector<std::string>& argv);

}  // namespace gcb::scan
