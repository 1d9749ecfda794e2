// What measurements on the cluster itself say about it, read from gcbench result files: GEMM
// seconds per shape (`gemm`), attention seconds per shape and pass (`attn`), α–β fits per
// collective and group size (`coll/<op>/fit`), memory bandwidth (`mem` triad with its thread
// count) — and what a `scan` document holds of the same kinds: its per-node triad and GEMM
// (the same families' results), its pair stage's `p2p/latency` and `p2p/bandwidth` (an α–β of a
// two-rank send/recv) and its single-size `coll/<op>` points (an α–β: a least-squares line
// through several sizes, or one size with α = ring steps × the pair latency). The planner
// uses them in place of the spec table's peaks wherever they exist (compute_model.hpp,
// comm_model.hpp). Times are the mean of a result's samples: a step is a sum of many such calls,
// and a sum follows the mean, preemptions and all, where the median would hide them.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "reports/result.hpp"

namespace gcb::models::planner {

struct GemmPoint {
  int64_t m = 0, n = 0, k = 0;
  double seconds = 0;  // mean per call; flops = 2·m·n·k
};

struct AttnPoint {
  int batch = 0, heads = 0, seq = 0, head_dim = 0;
  bool causal = true, backward = false;
  double seconds = 0, flops = 0;  // flops in the FlashAttention convention (attention_shape.hpp)
};

struct CollFit {
  std::string op;  // all_reduce, reduce_scatter, all_gather, sendrecv
  int ranks = 0, nodes = 1;
  double alpha_s = 0, bytes_per_s = 0;  // t(n) = α + n/β, n = the logical buffer (nccl-tests' size)
  std::string backend;
};

struct TriadPoint {
  double bytes_per_s = 0;  // of all the result's threads together
  int threads = 1;         // params.threads (1 when absent: one device)
  double array_bytes = 0;  // params.array_bytes (0 when absent)
};

struct Calibration {
  std::vector<GemmPoint> gemm;
  std::vector<AttnPoint> attn;
  std::vector<CollFit> coll;
  std::optional<double> memory_bandwidth;  // B/s, mean of the triad results
  std::vector<TriadPoint> triad;
  // --offload optimizer (ZeRO-Offload): the host ↔ device link, the best unidirectional copy-engine
  // copy between pinned host memory and the device (`mem/copy/h2d`, `mem/copy/d2h`), and the host's
  // own bandwidth for the CPU AdamW, the best `mem/host/triad` of all its threads (read whatever the
  // filter: a GPU plan needs the host's rate too).
  std::optional<double> h2d_bytes_per_s, d2h_bytes_per_s, host_triad_bytes_per_s;
  std::vector<std::string> files;
  int results_read = 0;  // results that contributed
  bool empty() const {
    return gemm.empty() && attn.empty() && coll.empty() && !memory_bandwidth && !h2d_bytes_per_s && !d2h_bytes_per_s &&
           !host_triad_bytes_per_s;
  }
};

struct CalibrationFilter {
  bool cpu = true;             // host results (device "cpu", host communicators) or GPU ones
  std::string dtype = "fp32";  // gemm/attn element type of the training precision
};

// The bandwidth one of `ranks` ranks of `threads_per_rank` threads each streams while all stream
// at once: of the triad results, the one whose thread count k is closest to ranks × threads (the
// largest array among equals), scaled to the rank's threads: B_k · threads / k. A k below
// ranks × threads assumes bandwidth grows linearly with threads up to it (said in the source).
// nullopt without triad results.
struct RankBandwidth {
  double bytes_per_s = 0;
  std::string source;
};
std::optional<RankBandwidth> rank_bandwidth(const Calibration& cal, int ranks, int threads_per_rank);

// Adds what `doc` holds for the filter to `cal` (PASS results only; other families are ignored).
void add_calibration(Calibration& cal, const ResultDocument& doc, const CalibrationFilter& f);
// Loads each file (result document or JSONL), or every .json / .jsonl file of a directory;
// gcb::UsageError when one cannot be read.
Calibration read_calibration(const std::vector<std::string>& paths, const CalibrationFilter& f);

}  // namespace gcb::models::planner
