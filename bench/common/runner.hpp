// Runs cases through the one harness and turns each into a Result: NVTX range, WAIVED checks,
// NVML clocks before and after with per-sample throttle flags, verification, metrics; the row
// is printed and appended to the JSONL sink the moment the case ends.
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "bench/common/case.hpp"
#include "core/harness.hpp"
#include "reports/result.hpp"
#include "reports/writer.hpp"

namespace gcb::bench {

struct RunnerOptions {
  HarnessOptions harness;
  bool profile_range = false;  // cudaProfilerStart/Stop around each timed region
  bool quiet = false;          // no per-case progress lines
  // run_all stops before the next case once SIGINT/SIGTERM arrived (core/interrupt.hpp). Off for
  // runners inside a multi-rank world without a safe point agreed by every rank (scan's stages),
  // where ranks stopping at different cases would leave the others waiting.
  bool stop_on_signal = true;
};

// Under MIG a GPU instance has a fraction of the GPU's SMs and memory bandwidth, so the full-GPU
// peak does not apply: drops every metric's peak (and so its % of peak) and says why in
// extra.peak_waived.
void waive_peaks(std::vector<Metric>& metrics, nlohmann::json& extra, const std::string& why);

// A progress line: "[k, elapsed s]" padded to 14 columns (so the rows after [9, …] and [10, …]
// line up), then the case's console row.
std::string progress_line(size_t k, double elapsed_s, const std::string& row);
// The columns a progress line gets: the terminal's less one on a TTY (where it is redrawn in
// place), else COLUMNS where that is a number ≥ 40, else 100 — so a log reads at 100 columns too;
// the results table at the end has every parameter.
size_t progress_columns(bool tty, int fd);

class Runner {
 public:
  Runner(RunnerOptions options, JsonlSink* sink);
  // Runs one case; never throws for a case's own failure (that becomes ERROR with the reason).
  Result run(Case& c);
  void run_all(CaseList& cases);
  // Adds a result computed outside the harness (e.g. an α–β fit over earlier results).
  void add(Result r);
  const std::vector<Result>& results() const { return results_; }
  // Whether the run ends with the results as one table per family (Session::finish), printed once:
  // while it runs, each finished case is a progress line on stderr instead (progress()).
  bool prints_rows() const { return !options_.quiet; }
  // Clears a progress line drawn in place on a terminal, before the summary is printed.
  void clear_progress();

 private:
  void emit(Result r);
  // "[k, 12.3 s] key status value unit … params": one line per finished case on stderr, so a long
  // run says where it is, cut to progress_columns. On a terminal the line is redrawn in place; in a
  // log, one line each.
  void progress(const Result& r);
  RunnerOptions options_;
  JsonlSink* sink_;
  std::vector<Result> results_;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  bool drawn_ = false;  // a progress line is on the terminal, not yet cleared
};

}  // namespace gcb::bench
