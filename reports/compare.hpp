// Regression verdicts between two result documents (`gcbench compare BASE NEW`): results are
// paired by key + params, every shared metric gets a direction-aware verdict from a two-stage
// gate (significance and effect size, as nvbench_compare and asv gate), and the
// contexts are diffed so runs from different machines are never paired silently.
// Pure functions of the documents: no IO here (bench/compare/compare.cpp does the files).
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "reports/result.hpp"

namespace gcb {

// SAME: within the threshold (or a significant change smaller than the threshold).
// FASTER / SLOWER: significant and larger than the threshold, in the metric's own direction.
// NOISY: larger than the threshold, but the case's own spread is too wide to judge a change of
// that size: the U test is not significant, or the change is within 3 × the larger CV of the two
// sides. A verdict about the host, not the code: never a regression (compare exits 4 when it is
// the worst verdict).
// AMBIGUOUS: larger than the threshold, with no samples to tell it from noise (derived results:
// fits, ratios).
// SUSPECT: a side was measured while the GPU throttled; the verdict underneath is kept.
// NEW / MISSING: the result or metric exists only in NEW / only in BASE.
// SKIPPED: a side is WAIVED, ERROR or FAIL in BASE, or a value is null: nothing to compare.
// FAILED: NEW failed verification (status FAIL) where BASE did not: wrong answers gate like
// a regression.
enum class Verdict { same, faster, slower, noisy, ambiguous, suspect, added, missing, skipped, failed };
std::string_view verdict_name(Verdict v);  // "SAME", "FASTER", ..., "NEW", "MISSING", ...

struct CompareOptions {
  double threshold = 0.05;           // minimum relative change that matters (effect size)
  double alpha = 0.05;               // family-wise error rate of the U tests (Holm–Bonferroni)
  std::vector<std::string> metrics;  // restrict to these metric names; empty = the headline (see all_metrics)
  bool all_metrics = false;          // with no `metrics`: every shared metric, not only each result's first
  bool all_rows = false;             // renderers: SAME rows too (default: the rows that changed)
  size_t min_utest_samples = 9;      // Google Benchmark's UTEST_OPTIMAL_REPETITIONS
};

struct Comparison {
  std::string key;
  nlohmann::json params = nlohmann::json::object();
  std::string metric;
  std::string unit;
  bool higher_is_better = true;
  std::optional<double> base, contender;  // metric values
  std::optional<double> change;           // (new − base) / |base|, signed as measured
  std::optional<double> p_value;          // raw two-sided U-test p-value, when the test ran
  std::optional<double> p_adjusted;       // Holm-adjusted
  double noise = 0;                       // max CV of the two sides (fallback rule)
  double spread = 0;              // with the U test: the larger side's robust relative spread, 1.4826·MAD / median
  double shift = 0;               // with the U test: |ln(median NEW sample / median BASE sample)|
  std::vector<double> base_runs;  // the metric in each BASE run, when BASE pooled several (merge_runs)
  std::vector<double> base_run_medians;  // each BASE run's median time per launch (merge_runs), when all had samples
  std::optional<double> new_median;      // NEW's median time per launch, when it has samples
  double run_spread = 0;  // with base_runs: the family's run-to-run sd of ln(metric), 0 when not computed
  double run_margin = 0;  // with base_runs: the |ln| a change had to exceed to be SLOWER/FASTER
  size_t base_samples = 0, new_samples = 0;
  Verdict verdict = Verdict::same;
  Verdict underlying = Verdict::same;  // for SUSPECT: what the numbers alone say
  std::string reason;                  // one line: why this verdict
};

struct EnvironmentDifference {
  std::string field;  // "gpus", "driver", "cuda_runtime", "libraries.nccl", "cpu", "topology"
  std::string base, contender;
};

// One family's run-to-run spread in a pooled BASE (per family and metric): what a change of its
// cases had to exceed to count, so a report can say what this host can judge at all.
struct RunSpreadSummary {
  std::string family, metric;
  double sd = 0;  // pooled sd of ln(value) of the cases' baseline runs
  size_t cases = 0, df = 0;
  double factor = 1;  // exp(t · sd · √(1 + 1/K)) for K = CompareReport::base_runs
};

struct CompareReport {
  std::vector<Comparison> comparisons;
  size_t base_runs = 1;                       // how many runs BASE pooled (merge_runs)
  std::vector<RunSpreadSummary> run_spreads;  // with base_runs > 1: per family and metric, in key order
  std::vector<EnvironmentDifference> environment;
  bool topology_mismatch = false;  // both sides carry fingerprints and they differ
  std::vector<std::string> warnings;
  size_t count(Verdict v) const;
  bool regressed() const;  // anything SLOWER or FAILED
  size_t judged() const;   // SAME + FASTER + SLOWER: the comparisons the numbers could decide
};

// Two-sided Mann–Whitney U test, normal approximation with tie and continuity correction
// (scipy.stats.mannwhitneyu(method="asymptotic", use_continuity=True)). Returns p in [0, 1];
// 1 when every observation ties. Requires non-empty samples.
struct UTest {
  double u = 0;  // U statistic of the first sample
  double z = 0;  // continuity-corrected |z|
  double p = 1;
};
UTest mann_whitney_u(std::span<const double> x, std::span<const double> y);

// The fewest samples per side (n1 = n2 = n) with which mann_whitney_u can reach p ≤ α/cases at
// all — its p when every sample of one side lies beyond every sample of the other — so that a
// change in one case can survive Holm's correction over `cases` gated cases at level α.
int min_samples_for_u_test(double alpha, int cases);

// Holm–Bonferroni step-down adjusted p-values, in the input's order: reject H_i at level α
// exactly when adjusted[i] ≤ α (Holm 1979).
std::vector<double> holm_adjust(std::span<const double> p);

// Student's t with `df` degrees of freedom: the two-sided tail P(|T| > t), and its inverse, the
// t with P(|T| > t) = p (p = 0.05, df = 2: 4.303). Require df > 0 and, for the quantile, 0 < p < 1.
double student_t_two_sided_p(double t, double df);
double student_t_quantile(double p, double df);

// Relative change (new − base)/|base|; when base is 0, Google Benchmark compare.py's
// (new − base)/((base + new)/2); 0 when both are 0.
double relative_change(double base, double contender);

// The factor that turns a value in `from` into `to` (MB/s → GB/s: 1e-3), or nullopt when the
// units are of different kinds or unknown (reports/compare_units.cpp).
std::optional<double> unit_factor(std::string_view from, std::string_view to);

// Several runs of one suite as one BASE: each case's samples pooled, its metrics the median of
// the runs' values, and those values kept (extra.base_runs: metric name -> one value per run;
// extra.base_run_count in the context). Cases pair across runs as compare pairs them (key +
// params less extra.host_sized); only PASS runs of a case are pooled. With two runs or more,
// compare_documents asks a change to clear the runs themselves: a SLOWER or FASTER contender
// must lie beyond the baseline run furthest in that direction by more than the threshold, and
// outside the prediction interval of one more run: ln(NEW) against the mean of ln(the runs) ± t ·
// sd · √(1 + 1/K), sd the run-to-run spread pooled over the case's family and metric
// (Comparison::run_spread), t Student's at two-sided alpha / m over the m comparisons so judged —
// on each run's median time per launch (extra.base_run_medians) where every run and NEW have
// samples, else on the metric's values;
// else NOISY — whole-run shifts on a shared host move every sample of a run together, which no
// statistic of one run's samples can tell from a change, but the spread of several runs' values
// shows. One run is returned unchanged. Throws gcb::UsageError on an empty list.
ResultDocument merge_runs(std::span<const ResultDocument> runs);

// Pairs and judges. NEW's value is scaled into BASE's unit; units that cannot be converted give
// SKIPPED, as does a relative change that overflows. With one sample per side there is no noise
// estimate: a change beyond the threshold is AMBIGUOUS, never SLOWER (a warning says how many). Throws gcb::UsageError
// when nothing is comparable (no shared result and metric) or an option is out of range.
CompareReport compare_documents(const ResultDocument& base, const ResultDocument& contender,
                                const CompareOptions& options);
std::vector<EnvironmentDifference> diff_environment(const nlohmann::json& base, const nlohmann::json& contender);

// Renderers, pure functions of the report. The console: the verdict line first (and again
// last under 10 rows or more), environment differences and warnings, then one row per comparison
// that is not SAME (every row with o.all_rows) in columns as wide as their cells, its params in
// full and its reason under it, wrapped at 100 columns; with_table false leaves the rows out
// (`compare -q`). Markdown: the
// same, with each family's rows in a <details> block (open where something regressed).
std::string render_compare_console(const CompareReport& r, const CompareOptions& o, bool with_table = true);
// GitHub PR comments are limited to 65,536 characters (the REST API refuses a longer body with
// "Body is too long (maximum is 65536 characters)"): above `max_bytes` rows are cut, in severity
// order, with a line that says so.
inline constexpr size_t kMarkdownCommentLimit = 60000;
std::string render_compare_markdown(const CompareReport& r, const CompareOptions& o,
                                    size_t max_bytes = kMarkdownCommentLimit);
// One self-contained HTML page (inline CSS, no script): the verdict first, environment
// differences and warnings, the changed rows by severity, then SAME rows and rows with nothing to
// compare (WAIVED, ERROR, NEW, MISSING) folded in <details>.
std::string render_compare_html(const CompareReport& r, const CompareOptions& o,
                                const std::string& title = "gcbench compare");
// JUnit XML: one testcase per comparison; SLOWER and FAILED are failures, SKIPPED/NEW/MISSING
// are skipped.
std::string render_compare_junit(const CompareReport& r);
std::string compare_summary(const CompareReport& r);  // "3 SAME, 1 SLOWER, ..."

}  // namespace gcb
