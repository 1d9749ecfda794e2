// `gcbench p2p`: point-to-point bandwidth and latency as src × dst matrices, between GPUs of
// this process (copy engines and SM copies, peer access on and off, flag ping-pong and
// per-copy-call latency), between ranks over a Communicator (send/recv: NVLink/PCIe through
// NCCL, InfiniBand between nodes, host paths under MPI, memcpy with threads), and all GPUs
// to/from the host at once. Each number is given as % of the link it crossed where that link is
// known. Methods: NVIDIA/cuda-samples p2pBandwidthLatencyTest, NVIDIA/nvbandwidth.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "bench/common/case.hpp"
#include "bench/common/cli.hpp"
#include "collectives/world.hpp"
#include "reports/result.hpp"

namespace gcb::bench {

struct P2pOptions {
  std::vector<std::string> modes = {"device", "rank", "host"};  // "all" expands to these
  uint64_t size = uint64_t{256} << 20;                          // bytes per copy / message (bandwidth)
  uint64_t latency_size = 8;                                    // bytes per latency message (rank ping-pong)
  int iters = 1000;      // round trips per launch (flag ping-pong, rank ping-pong)
  std::string backend;   // rank mode: threads | mpi | nccl; "" = machine default
  int ranks = 0;         // threads backend: rank threads (0 = 4 on CPU, one per GPU)
  double timeout = 300;  // seconds a rank may wait before the run aborts
  // Rank mode, for callers that need less than the full matrices (gcbench scan): which measures
  // run, and whether the symmetric ones (bidirectional bandwidth, ping-pong latency) are taken
  // once per unordered pair (src < dst) instead of for both orders.
  std::vector<std::string> rank_measures = {"bandwidth", "bidir_bandwidth", "latency"};
  bool symmetric_once = false;
};

// Throws gcb::UsageError for an unknown mode, a zero size, iters < 1, …
void validate(const P2pOptions& o);
bool has_mode(const P2pOptions& o, const std::string& mode);

// ---- expected link rates (NVIDIA H100 datasheet; NVLink 4: 25 GB/s per link per direction); all per direction, GB/s.

struct LinkRate {
  std::optional<double> gbps;  // per direction; nullopt = the link is not known
  std::string source;          // "nvlink:18x25GB/s", "pcie:gen5 x16", "ib:mlx5_0 400Gb/s"
};
// NVLink: bonded links × per-link rate per direction (v2–v4 25 GB/s, v5 50 GB/s).
LinkRate nvlink_rate(int links, double per_link_gbps);
// PCIe: specs.hpp pcie_gbps(gen, width); the slower end of a path bounds it.
LinkRate pcie_rate(int gen, int width);
LinkRate slower(const LinkRate& a, const LinkRate& b);
// InfiniBand (or Ethernet) port rate in Gb/s (1e9 bit/s) → GB/s = rate / 8.
LinkRate network_rate(double port_gbit, const std::string& name);
// measured / expected × 100, when expected is known and positive.
std::optional<double> percent_of_expected(double measured_gbps, const LinkRate& expected);
// "" or a warning that a measured value exceeds its link's rate (a wrong link guess, caching,
// or a broken timer — never a fast link).
std::string exceeds_link_warning(double measured_gbps, const LinkRate& expected);

// The result's extra fields for a bandwidth against its link: expected_gbps, expected_source,
// percent_of_expected and, when exceeded, "warning". Empty object when the link is unknown.
nlohmann::json link_extra(double measured_gbps, const LinkRate& expected);

// ---- matrices.

// Every p2p result with integer src/dst params, grouped by key and the other params (engine,
// peer_access, scope, backend, bytes), rendered as src × dst matrices of the headline metric
// (rows = src, columns = dst, as p2pBandwidthLatencyTest prints them); "-" = not measured
// (the diagonal), "W" = waived, "E"/"F" = error / failed.
std::string render_p2p_matrices(const std::vector<Result>& results);
// What `gcbench p2p` prints, once: the matrices, then the generic table (reports/render.hpp) of
// only the results no matrix shows that ran (the host aggregate), then the cases waived as a whole
// (device cases on a host without GPUs): their names under each reason, once.
std::string render_p2p_view(const std::vector<Result>& results);

// ---- cases and runs.

// Device pairs among `gpus` (WAIVED "needs two GPUs" with fewer than two) and the all-to-host /
// host-to-all aggregate over all of them. Built without CUDA, or without GPUs: WAIVED cases.
CaseList p2p_device_cases(const P2pOptions& o, const std::vector<int>& gpus, const std::string& no_gpu_reason,
                          uint64_t seed);
CaseList p2p_host_cases(const P2pOptions& o, const std::vector<int>& gpus, const std::string& no_gpu_reason);

// The rank-pair matrices on the ranks of `ctx`: every ordered pair in turn (the other ranks wait
// at the barrier), per-sample times maxed over ranks. Rank 0 adds results to `runner`
// (ignored elsewhere). Returns the number of wrongly received bytes summed over all ranks.
uint64_t run_p2p_ranks_on_rank(const P2pOptions& o, const HarnessOptions& harness, RankContext& ctx, Runner* runner,
                               uint64_t seed);
// Refuses (exit 2) rank mode when the ranks on this host need more host memory than is available.
void check_p2p_rank_memory(const P2pOptions& o, int world_size);
// Starts the World for rank mode; returns rank 0's verdict (0, or 1 when bytes arrived wrong).
int run_p2p_ranks(const P2pOptions& o, const HarnessOptions& harness, Runner& runner, uint64_t seed,
                  const std::vector<std::string>& args);

// For `gcbench run --suite quick`: device pairs and the host aggregate of the selected GPUs at
// 64 MiB (WAIVED where they cannot run), rank pairs at 1 MiB over the default backend (2 rank
// threads on a CPU-only box; the GPUs or the launcher's ranks elsewhere). Returns 1 when bytes
// arrived wrong (the results say FAIL too). Device pairs use `runner`'s harness, rank pairs
// `rank_harness` (a microsecond family's: see microsecond_family_harness).
P2pOptions quick_p2p_options();
int run_p2p_quick(const DeviceSelection& sel, const HarnessOptions& rank_harness, Runner& runner, uint64_t seed);

void add_p2p_command(CLI::App& root, std::function<int()>& run, const std::vector<std::string>& argv);

}  // namespace gcb::bench
