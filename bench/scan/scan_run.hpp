// One scan on one rank: the stages in order, each measured on every node at once through the
// existing families (mem, gemm, p2p, coll, train), its results gathered on rank 0, judged
// there (judge.hpp) and announced with a progress line; the budget split among the stages
// (rank 0 decides each stage's share and broadcasts it, so every rank times alike).
#pragma once

#include <fmt/format.h>

#include <optional>
#include <string>
#include <vector>

#include "bench/common/runner.hpp"
#include "bench/scan/budget.hpp"
#include "bench/scan/findings.hpp"
#include "bench/scan/layout.hpp"
#include "bench/scan/scan.hpp"
#include "collectives/world.hpp"
#include "reports/render.hpp"

namespace gcb::scan {

// A stage that did not run, as a result: key "scan/skipped", params {stage}, status WAIVED, reason
// "skipped: <why>".
inline constexpr std::string_view kSkippedKey = "scan/skipped";
Result skipped_result(const std::string& stage, const std::string& why);
// The text after "# scan verdict: ": all OK / NOT OK (exit 1), the stages that ran and those
// skipped with their reason, and whether anything between nodes was measured.
std::string verdict_line(int code, const std::vector<std::string>& ran,
                         const std::vector<std::pair<std::string, std::string>>& skipped, int nodes);

class ScanRun {
 public:
  // `runner` is used on rank 0 only.
  ScanRun(const ScanOptions& o, const HarnessOptions& harness, uint64_t seed, bool quiet, RankContext& ctx,
          bench::Runner* runner);
  // Every stage, then (rank 0) drift, culprits and verdict results. Returns 0 when every finding
  // is OK, else 1 — rank 0's answer on every rank.
  int run();

 private:
  bool leader() const { return ctx_.rank == 0; }
  // Announces the stage and returns its budget in seconds (rank 0's decision, on every rank);
  // decides too whether `cost` fits that share (budget.hpp), for skipped_for_budget().
  double begin_stage(const std::string& stage, const std::string& what, const StageCost& cost = {});
  // After begin_stage: true (and the stage recorded as skipped with reason "budget: …") when its
  // measurements do not fit its share or nothing is left.
  bool skipped_for_budget(const std::string& stage);
  // "" or "no NICs: …" (budget.hpp no_nics_reason): collective on the first call, cached.
  const std::string& no_nics();
  // Rank 0: records the stage's results and findings and prints the stage's verdict counts.
  void end_stage(const std::string& stage, std::vector<Result> results, std::vector<Finding> findings);
  // Records the stage as skipped with the reason (console, "scan/skipped" result, verdict line).
  void skip_stage(const std::string& stage, const std::string& why);
  // Every rank's results, on every rank (collective).
  std::vector<Result> gather(const std::vector<Result>& mine);
  // Harness settings for one measurement given its share of the budget.
  HarnessOptions harness_for(double seconds, int min_samples) const;
  // For transfers between ranks (pairs, collectives): one warm-up, three samples at least.
  HarnessOptions transfer_harness(double seconds) const;
  // A message size: `requested`, else 256 MiB on NCCL (device memory) and 8 MiB on host memory.
  uint64_t transfer_bytes(uint64_t requested) const;
  // Progress line on rank 0 (not with --quiet), wrapped at 100 columns (reports/render.hpp
  // wrap_lines: the rest of a line indented 4 more than its start).
  template <typename... Args>
  void say(fmt::format_string<Args...> f, Args&&... args) const {
    if (leader() && !quiet_) {
      fmt::print("{}", wrap_lines(fmt::format(f, std::forward<Args>(args)...)));
      std::fflush(stdout);
    }
  }
  const ScanRank& me() const { return layout_.ranks.at(static_cast<size_t>(ctx_.rank)); }
  double elapsed() const;
  // Every result a rank measured, tagged with the scan's params.
  static void tag(Result& r, const nlohmann::json& params);

  void inventory();
  void device();
  void links();
  void pairs();
  void coll();
  void reference();
  void drift();  // rank 0, after the stages

  const ScanOptions& o_;
  HarnessOptions harness_;
  uint64_t seed_;
  bool quiet_;
  RankContext& ctx_;
  bench::Runner* runner_;
  ScanLayout layout_;
  int gpu_ = -1;                     // the device this rank measures, -1 = the host
  std::vector<std::string> stages_;  // selected, in order
  size_t stage_index_ = 0;
  double start_ = 0;  // rank 0's clock at the start
  double stage_start_ = 0;
  double budget_s_ = 0;
  std::string budget_skip_;                                   // the current stage's "budget: …" reason, or ""
  std::optional<std::string> no_nics_;                        // no_nics(), once asked
  std::vector<Result> measured_;                              // rank 0: every measurement result so far
  std::vector<Finding> findings_;                             // rank 0
  bool stop_ = false;                                         // --fail-fast after a stage that found something
  std::vector<std::string> ran_;                              // rank 0: stages that measured and were judged, in order
  std::vector<std::pair<std::string, std::string>> skipped_;  // rank 0: (stage, why)
};

}  // namespace gcb::scan
