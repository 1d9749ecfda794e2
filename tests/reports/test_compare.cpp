// compare: statistics against reference values, verdicts on the checked-in fixture pairs
// (tests/fixtures/compare/, written by make_fixtures.py there), renderers, and the exporters.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <sstream>

#include "core/error.hpp"
#include "core/stats.hpp"
#include "reports/compare.hpp"
#include "reports/export.hpp"
#include "reports/render.hpp"
#include "topology/xml.hpp"

namespace gcb {
namespace {

const std::string kDir = "tests/fixtures/compare/";

ResultDocument fixture(const std::string& name) { return load_document(kDir + name); }

const Comparison& find(const CompareReport& r, const std::string& key, const std::string& metric) {
  for (const auto& c : r.comparisons)
    if (c.key == key && c.metric == metric) return c;
  throw std::runtime_error("no comparison " + key + " " + metric);
}

// Reference values: scipy 1.17.1,
//   scipy.stats.mannwhitneyu(x, y, alternative="two-sided", method="asymptotic", use_continuity=True)
// run once on these vectors; U is scipy's statistic for x.
TEST(MannWhitney, MatchesScipyAsymptotic) {
  struct Case {
    std::vector<double> x, y;
    double u, p;
  };
  const std::vector<Case> cases = {
      {{1.1, 2.2, 3.3, 4.4, 5.5, 6.6, 7.7, 8.8, 9.9},
       {3.0, 4.5, 6.0, 7.5, 9.0, 10.5, 12.0, 13.5, 15.0},
       20.0,
       0.07738861114200664},
      // ties: the tie-corrected variance matters here
      {{1, 2, 2, 3, 3, 3, 4, 5, 6}, {2, 3, 4, 4, 5, 6, 6, 7, 8}, 19.0, 0.060552067813171816},
      // unequal sizes, 9 vs 12
      {{0.91, 0.95, 1.02, 1.04, 0.99, 1.01, 0.97, 1.03, 1.00},
       {1.05, 1.08, 1.10, 0.98, 1.12, 1.07, 1.09, 1.06, 1.11, 1.04, 1.13, 1.02},
       9.0,
       0.0015533212537348553},
      // complete separation: the smallest p 9 vs 9 samples can give
      {{1, 2, 3, 4, 5, 6, 7, 8, 9}, {10, 11, 12, 13, 14, 15, 16, 17, 18}, 0.0, 0.00041229480206169127},
  };
  for (const auto& c : cases) {
    const UTest t = mann_whitney_u(c.x, c.y);
    EXPECT_DOUBLE_EQ(t.u, c.u);
    EXPECT_NEAR(t.p, c.p, 1e-12 * c.p + 1e-15);  // same closed form; only rounding differs
    // Symmetric in its arguments (two-sided).
    EXPECT_NEAR(mann_whitney_u(c.y, c.x).p, c.p, 1e-12 * c.p + 1e-15);
  }
  const std::vector<double> flat(9, 1.0);
  EXPECT_EQ(mann_whitney_u(flat, flat).p, 1.0);  // all ties: no evidence at all
}

// Holm (1979) by hand: sorted p = 0.005, 0.01, 0.03, 0.04 (m = 4) → 4·0.005 = 0.02,
// 3·0.01 = 0.03, 2·0.03 = 0.06, max(1·0.04, 0.06) = 0.06; returned in input order.
TEST(Holm, KnownExample) {
  const std::vector<double> p = {0.01, 0.04, 0.03, 0.005};
  const std::vector<double> adj = holm_adjust(p);
  ASSERT_EQ(adj.size(), 4u);
  EXPECT_DOUBLE_EQ(adj[0], 0.03);
  EXPECT_DOUBLE_EQ(adj[1], 0.06);
  EXPECT_DOUBLE_EQ(adj[2], 0.06);
  EXPECT_DOUBLE_EQ(adj[3], 0.02);
  EXPECT_DOUBLE_EQ(holm_adjust(std::vector<double>{0.6, 0.7})[0], 1.0);  // capped at 1
  EXPECT_TRUE(holm_adjust(std::vector<double>{}).empty());
}

// The best-case p of n vs n completely separated samples (normal approximation with continuity
// correction, as scipy's asymptotic method): n = 3 gives 0.081, 4 gives 0.030 (≤ 0.05, one case);
// 8 gives 9.4e-4 and 9 gives 4.1e-4 (≤ 0.05/100); 9 gives 4.1e-4 > 0.05/250 = 2e-4, 10 gives
// 1.8e-4.
TEST(MannWhitney, FewestSamplesThatCanPassHolm) {
  EXPECT_EQ(min_samples_for_u_test(0.05, 1), 4);
  EXPECT_EQ(min_samples_for_u_test(0.05, 100), 9);
  EXPECT_EQ(min_samples_for_u_test(0.05, 250), 10);
  EXPECT_GT(min_samples_for_u_test(0.01, 1000), 10);
}

// Student's t against its closed forms: one degree of freedom is Cauchy, P(|T| > t) =
// 1 − (2/π)·atan(t); two are P(|T| > t) = 1 − t/√(2 + t²); many approach the normal, erfc(t/√2).
// Quantiles: the textbook 97.5 % points (4.303 at 2 df, 2.228 at 10).
TEST(StudentT, ClosedFormsAndTableQuantiles) {
  const double pi = std::acos(-1.0);
  for (double t : {0.1, 1.0, 3.0, 30.0}) {
    EXPECT_NEAR(student_t_two_sided_p(t, 1), 1 - 2 / pi * std::atan(t), 1e-12) << t;
    EXPECT_NEAR(student_t_two_sided_p(t, 2), 1 - t / std::sqrt(2 + t * t), 1e-12) << t;
    EXPECT_NEAR(student_t_two_sided_p(t, 1e6), std::erfc(t / std::sqrt(2.0)), 1e-5) << t;
  }
  EXPECT_DOUBLE_EQ(student_t_two_sided_p(0, 5), 1.0);
  EXPECT_NEAR(student_t_quantile(0.05, 1), 12.706205, 1e-5);
  EXPECT_NEAR(student_t_quantile(0.05, 2), 4.302653, 1e-5);
  EXPECT_NEAR(student_t_quantile(0.05, 10), 2.228139, 1e-5);
  EXPECT_NEAR(student_t_quantile(0.01, 5), 4.032143, 1e-5);
  // Inverse of each other far into the tail (Bonferroni over hundreds of cases).
  EXPECT_NEAR(student_t_two_sided_p(student_t_quantile(1e-5, 20), 20), 1e-5, 1e-9);
  EXPECT_THROW(student_t_quantile(0, 3), std::exception);
  EXPECT_THROW(student_t_two_sided_p(1, 0), std::exception);
}

TEST(RelativeChange, DirectionAndZeroBase) {
  EXPECT_DOUBLE_EQ(relative_change(100, 80), -0.2);
  EXPECT_DOUBLE_EQ(relative_change(-10, -5), 0.5);
  EXPECT_DOUBLE_EQ(relative_change(0, 2), 2.0);  // compare.py: (2 − 0)/((0 + 2)/2)
  EXPECT_DOUBLE_EQ(relative_change(0, 0), 0.0);
}

TEST(Compare, IdenticalIsAllSame) {
  // By default each result's headline (its first metric); --all-metrics every shared one.
  EXPECT_EQ(compare_documents(fixture("base.json"), fixture("new_identical.json"), {}).comparisons.size(), 3u);
  CompareOptions all;
  all.all_metrics = true;
  const CompareReport r = compare_documents(fixture("base.json"), fixture("new_identical.json"), all);
  ASSERT_EQ(r.comparisons.size(), 5u);  // triad ×2, host copy ×2, latency
  for (const auto& c : r.comparisons)
    EXPECT_EQ(c.verdict, Verdict::same) << c.key << " " << c.metric << ": " << c.reason;
  EXPECT_FALSE(r.regressed());
  EXPECT_TRUE(r.environment.empty());
  EXPECT_FALSE(r.topology_mismatch);
}

TEST(Compare, RealRegressionIsSlower) {
  CompareOptions all;
  all.all_metrics = true;
  const CompareReport r = compare_documents(fixture("base.json"), fixture("new_regression.json"), all);
  for (const char* metric : {"bandwidth", "bandwidth_median"}) {
    const Comparison& c = find(r, "mem/hbm/triad", metric);
    EXPECT_EQ(c.verdict, Verdict::slower) << c.reason;
    EXPECT_NEAR(*c.change, -0.2, 1e-9);  // samples ×1.25 → bandwidth ×0.8
    ASSERT_TRUE(c.p_value && c.p_adjusted);
    EXPECT_NEAR(*c.p_value, 3.658e-05, 0.001e-05);  // scipy on the fixture's 12 vs 12 samples
    // Holm over the run's 2 U tests (triad, host copy; the chase has 5 samples: no test).
    EXPECT_NEAR(*c.p_adjusted, 2 * *c.p_value, 1e-15);
  }
  EXPECT_EQ(find(r, "mem/host/copy", "bandwidth").verdict, Verdict::same);
  EXPECT_EQ(find(r, "mem/latency/chase", "latency").verdict, Verdict::same);
  EXPECT_TRUE(r.regressed());
}

// The console table at a terminal's width: each row's params in full under it (a column of them
// was cut at 36 characters: "array_bytes=134217728 device=cpu dt~"), columns as wide as their
// cells, the reason wrapped at 100 columns, and the verdict line once above a short table.
TEST(Compare, ConsoleRowsFit100ColumnsWithTheirParamsInFull) {
  const CompareReport r = compare_documents(fixture("base.json"), fixture("new_regression.json"), {});
  const std::string out = render_compare_console(r, {});
  EXPECT_NE(out.find("\nSLOWER    mem/hbm/triad "), std::string::npos) << out;
  const Comparison& c = find(r, "mem/hbm/triad", "bandwidth");
  ASSERT_FALSE(c.params.empty());
  EXPECT_NE(out.find("\n          " + params_summary(c.params) + "\n"), std::string::npos) << out;
  EXPECT_EQ(out.find('~'), std::string::npos) << out;
  size_t verdicts = 0;
  for (size_t at = out.find("compare: "); at != std::string::npos; at = out.find("compare: ", at + 1)) ++verdicts;
  EXPECT_EQ(verdicts, 1u) << out;
  std::istringstream lines(out);
  for (std::string line; std::getline(lines, line);) {
    size_t cols = 0;  // characters, not bytes
    for (const char ch : line) cols += (static_cast<unsigned char>(ch) & 0xC0) != 0x80;
    EXPECT_LE(cols, 100u) << line;
  }
}

TEST(Compare, NoiseOnlyIsNotARegression) {
  CompareOptions all;
  all.all_metrics = true;
  const CompareReport r = compare_documents(fixture("base.json"), fixture("new_noise.json"), all);
  EXPECT_FALSE(r.regressed());
  const Comparison& c = find(r, "mem/host/copy", "bandwidth_median");
  EXPECT_EQ(c.verdict, Verdict::same) << c.reason;  // −4.15 % is inside the 5 % threshold
  // With a 1 % threshold the change matters, but the U test (p = 0.40) cannot tell it from
  // noise: NOISY, never SLOWER.
  CompareOptions tight = all;
  tight.threshold = 0.01;
  const CompareReport r1 = compare_documents(fixture("base.json"), fixture("new_noise.json"), tight);
  EXPECT_EQ(find(r1, "mem/host/copy", "bandwidth_median").verdict, Verdict::noisy);
  EXPECT_NEAR(*find(r1, "mem/host/copy", "bandwidth_median").p_value, 0.4025, 0.0001);
  EXPECT_FALSE(r1.regressed());
}

TEST(Compare, ThrottledIsSuspectAndEnvironmentDiffers) {
  const CompareReport r = compare_documents(fixture("base.json"), fixture("new_throttled.json"), {});
  const Comparison& c = find(r, "mem/hbm/triad", "bandwidth");
  EXPECT_EQ(c.verdict, Verdict::suspect);
  EXPECT_EQ(c.underlying, Verdict::slower);
  EXPECT_NE(c.reason.find("throttled"), std::string::npos);
  EXPECT_FALSE(r.regressed());  // SUSPECT never gates; it is printed loudly instead
  ASSERT_EQ(r.environment.size(), 1u);
  EXPECT_EQ(r.environment[0].field, "driver");
  EXPECT_EQ(r.environment[0].base, "580.65.06");
  EXPECT_EQ(r.environment[0].contender, "575.57.08");
}

TEST(Compare, TopologyMismatchWarnsLoudly) {
  ResultDocument b = fixture("base.json"), n = fixture("new_identical.json");
  n.context["topology"]["fingerprint"] = "topo-bbbb";
  const CompareReport r = compare_documents(b, n, {});
  EXPECT_TRUE(r.topology_mismatch);
  ASSERT_FALSE(r.warnings.empty());
  EXPECT_NE(r.warnings[0].find("different topologies"), std::string::npos);
  EXPECT_NE(render_compare_console(r, {}).find("WARNING: topology fingerprints differ"), std::string::npos);
  EXPECT_NE(render_compare_markdown(r, {}).find("[!WARNING]"), std::string::npos);
}

TEST(Compare, BadInputIsUsageError) {
  EXPECT_THROW(fixture("other_schema.json"), UsageError);
  EXPECT_THROW(compare_documents(fixture("base.json"), fixture("nothing_in_common.json"), {}), UsageError);
  CompareOptions unknown_metric;
  unknown_metric.metrics = {"tflops"};
  EXPECT_THROW(compare_documents(fixture("base.json"), fixture("base.json"), unknown_metric), UsageError);
  CompareOptions bad_alpha;
  bad_alpha.alpha = 1.5;
  EXPECT_THROW(compare_documents(fixture("base.json"), fixture("base.json"), bad_alpha), UsageError);
}

TEST(Compare, MetricFilter) {
  CompareOptions o;
  o.metrics = {"latency"};
  const CompareReport r = compare_documents(fixture("base.json"), fixture("new_regression.json"), o);
  ASSERT_EQ(r.comparisons.size(), 1u);  // the triad regression is filtered out
  EXPECT_EQ(r.comparisons[0].metric, "latency");
  EXPECT_FALSE(r.regressed());
}

Result make(const std::string& key, double value, std::vector<double> samples, bool higher_is_better = true) {
  Result r;
  r.key = key;
  r.samples = std::move(samples);
  if (!r.samples.empty()) r.stats = summarize(r.samples);
  r.metrics.push_back({"m", value, "GB/s", higher_is_better, std::nullopt, ""});
  return r;
}

// Fewer than 9 samples: SLOWER/FASTER only beyond the threshold and with |ln(new / base)| beyond
// 3 × noise.
TEST(Compare, FallbackRuleUsesThreeTimesNoise) {
  // CV of {0.9, 1.0, 1.1} = 0.1: a 20 % drop (ln 0.22) is inside 3 × 10 % → NOISY; 40 % (ln 0.51)
  // is beyond, and so is its reverse, +67 %.
  ResultDocument b, n20, n40;
  b.results.push_back(make("x/a", 100, {0.9, 1.0, 1.1}));
  n20.results.push_back(make("x/a", 80, {0.9, 1.0, 1.1}));
  n40.results.push_back(make("x/a", 60, {0.9, 1.0, 1.1}));
  EXPECT_EQ(compare_documents(b, n20, {}).comparisons[0].verdict, Verdict::noisy);
  EXPECT_EQ(compare_documents(b, n40, {}).comparisons[0].verdict, Verdict::slower);
  EXPECT_EQ(compare_documents(n40, b, {}).comparisons[0].verdict, Verdict::faster);
  // Lower is better: the same numbers read the other way round.
  ResultDocument lb, ln;
  lb.results.push_back(make("x/lat", 100, {0.9, 1.0, 1.1}, false));
  ln.results.push_back(make("x/lat", 60, {0.9, 1.0, 1.1}, false));
  EXPECT_EQ(compare_documents(lb, ln, {}).comparisons[0].verdict, Verdict::faster);
  // No samples at all (a derived result): beyond the threshold is AMBIGUOUS, within is SAME.
  ResultDocument db, dn, ds;
  db.results.push_back(make("x/fit", 100, {}));
  dn.results.push_back(make("x/fit", 60, {}));
  ds.results.push_back(make("x/fit", 98, {}));
  EXPECT_EQ(compare_documents(db, dn, {}).comparisons[0].verdict, Verdict::ambiguous);
  EXPECT_EQ(compare_documents(db, ds, {}).comparisons[0].verdict, Verdict::same);
  // A noisy host, CV of {0.4, 1.0, 1.6} = 0.6: a 100× slowdown is −99 %, less than 3 × 60 % on the
  // linear scale but ln 100 = 4.6 > 1.8, so SLOWER, as the same factor up is FASTER; a 3× slowdown
  // (ln 3 = 1.1) is NOISY either way.
  ResultDocument wb, w100, w3;
  wb.results.push_back(make("x/w", 100, {0.4, 1.0, 1.6}));
  w100.results.push_back(make("x/w", 1, {40, 100, 160}));
  w3.results.push_back(make("x/w", 100.0 / 3, {1.2, 3.0, 4.8}));
  const auto slow = compare_documents(wb, w100, {}).comparisons[0];
  EXPECT_EQ(slow.verdict, Verdict::slower) << slow.reason;
  EXPECT_NE(slow.reason.find("shift 4.61 in ln > 3 x noise (CV 60.00%)"), std::string::npos) << slow.reason;
  EXPECT_EQ(compare_documents(w100, wb, {}).comparisons[0].verdict, Verdict::faster);
  EXPECT_EQ(compare_documents(wb, w3, {}).comparisons[0].verdict, Verdict::noisy);
  EXPECT_EQ(compare_documents(w3, wb, {}).comparisons[0].verdict, Verdict::noisy);
}

// With the U test, SLOWER needs the change beyond 3 × the robust spread (1.4826·MAD/median):
// a few samples slowed by another process inflate the CV, not the MAD; a steady but wide
// spread makes a significant 12 % change NOISY.
TEST(Compare, SpreadDecidesNoisyRobustly) {
  auto samples = [](double scale, std::vector<double> rel) {
    for (double& x : rel) x *= scale;
    return rel;
  };
  // Ten steady samples and two 5x outliers: CV ≈ 0.93, MAD/median ≈ 1 %.
  const std::vector<double> spiky = {1.00, 1.01, 0.99, 1.00, 1.02, 0.98, 1.00, 1.01, 0.99, 1.00, 5.0, 5.0};
  ResultDocument b, n;
  b.results.push_back(make("x/spiky", 100, spiky));
  n.results.push_back(make("x/spiky", 25, samples(4, spiky)));  // 4x slower
  const Comparison c = compare_documents(b, n, {}).comparisons[0];
  EXPECT_GT(c.noise, 0.9);  // 3 x this CV would have called a 4x slowdown noise
  EXPECT_LT(c.spread, 0.03);
  EXPECT_EQ(c.verdict, Verdict::slower) << c.reason;
  // A wide steady spread (±8 %): 12 % slower is significant but inside 3 × spread.
  const std::vector<double> wide = {0.90, 1.10, 0.92, 1.08, 0.94, 1.06, 0.96, 1.04, 0.98, 1.02, 0.91, 1.09};
  ResultDocument wb, wn;
  wb.results.push_back(make("x/wide", 100, wide));
  wn.results.push_back(make("x/wide", 100 / 1.12, samples(1.12, wide)));
  const Comparison w = compare_documents(wb, wn, {}).comparisons[0];
  EXPECT_EQ(w.verdict, Verdict::noisy) << w.reason;
  EXPECT_NE(w.reason.find("too noisy to judge a change of 5.00%"), std::string::npos) << w.reason;
}

// Several BASE runs (merge_runs): samples pooled, the metric the median of the runs' values, each
// run's value kept; a case missing or failed in one run is pooled from the others.
TEST(CompareRuns, MergePoolsSamplesAndKeepsEachRunsValue) {
  ResultDocument r1, r2, r3;
  r1.results.push_back(make("x/a", 100, {1.0, 1.0, 1.0}));
  r2.results.push_back(make("x/a", 80, {1.25, 1.25}));
  r3.results.push_back(make("x/a", 90, {1.1}));
  r1.results.push_back(make("x/only1", 5, {2.0}));
  r3.results.push_back(make("x/only1", 7, {2.0}));
  r3.results.back().status = Status::error;  // not pooled
  const std::vector<ResultDocument> runs = {r1, r2, r3};
  const ResultDocument m = merge_runs(runs);
  EXPECT_EQ(m.context.value("base_run_count", 0), 3);
  ASSERT_EQ(m.results.size(), 2u);
  const Result& a = m.results[0];
  EXPECT_EQ(a.samples.size(), 6u);
  ASSERT_TRUE(a.metrics[0].value);
  EXPECT_DOUBLE_EQ(*a.metrics[0].value, 90);  // median of 100, 80, 90
  EXPECT_EQ(a.extra.at("base_runs").at("m"), nlohmann::json({100.0, 80.0, 90.0}));
  ASSERT_TRUE(a.stats);
  EXPECT_EQ(a.stats->count, 6u);
  const Result& only = m.results[1];
  EXPECT_EQ(only.extra.at("base_runs").at("m"), nlohmann::json({5.0}));
  EXPECT_THROW(merge_runs(std::vector<ResultDocument>{}), Fault);
  EXPECT_EQ(merge_runs(std::vector<ResultDocument>{r1}).results.size(), 2u);  // one run: unchanged
}

// With several BASE runs, SLOWER must clear the slowest run by the threshold. Five runs, four
// alike and one 30 % slower (a whole-run shift): the pooled samples are tight (the MAD ignores one
// run in five), so a NEW run as slow as that one is significant and beyond 3 x spread — but it
// is no slower than a baseline run already was: NOISY. Twice as slow clears every run: SLOWER.
TEST(CompareRuns, ASlowdownMustClearTheSlowestBaselineRun) {
  auto run = [](double scale) {
    ResultDocument d;
    std::vector<double> s = {1.00, 1.01, 0.99, 1.00, 1.02, 0.98, 1.00, 1.01, 0.99, 1.00};
    for (double& x : s) x *= scale;
    d.results.push_back(make("x/a", 100 / scale, s));
    return d;
  };
  const std::vector<ResultDocument> runs = {run(1.0), run(1.0), run(1.01), run(0.99), run(1.3)};
  const ResultDocument base = merge_runs(runs);
  const CompareReport shifted = compare_documents(base, run(1.32), {});
  ASSERT_EQ(shifted.comparisons.size(), 1u);
  const Comparison& c = shifted.comparisons[0];
  EXPECT_EQ(shifted.base_runs, 5u);
  EXPECT_EQ(c.base_runs.size(), 5u);
  EXPECT_EQ(c.verdict, Verdict::noisy) << c.reason;
  EXPECT_NE(c.reason.find("slowest run"), std::string::npos) << c.reason;
  // The same NEW against the first run alone: a regression, as before.
  EXPECT_EQ(compare_documents(runs[0], run(1.32), {}).comparisons[0].verdict, Verdict::slower);
  const Comparison slow = compare_documents(base, run(2.0), {}).comparisons[0];
  EXPECT_EQ(slow.verdict, Verdict::slower) << slow.reason;
  // FASTER likewise must clear the fastest run; lower-is-better metrics read the other way.
  EXPECT_EQ(compare_documents(base, run(0.5), {}).comparisons[0].verdict, Verdict::faster);
  EXPECT_NE(render_compare_console(shifted, {}).find("BASE pools 5 runs"), std::string::npos);
}

// With several BASE runs, a change must also lie outside the prediction interval of one more run
// of its family: ln(NEW) against the runs' mean ± t · sd · √(1 + 1/K), sd pooled over the family's
// cases. In family "wide" one run of three took 0.8 of the others' time in every case (each run's
// own samples tight, so the pooled samples' MAD sees two runs alike), in family "tight" the runs
// differ by 1 %. NEW 45 % slower on one case of each: beyond every baseline run (the rule above
// passes it), significant, beyond 3 × the samples' spread — but for "wide" inside its run-to-run
// interval (sd 0.129 in ln, t at 0.05/20 with 20 df ≈ 3.5: ≈ 0.52 in ln, a factor 1.7): NOISY,
// naming the spread; for "tight" SLOWER. Four times slower clears "wide"'s interval.
TEST(CompareRuns, AChangeMustClearTheFamilysRunToRunSpread) {
  const std::vector<double> tight = {1.00, 1.01, 0.99, 1.00, 1.02, 0.98, 1.00, 1.01, 0.99, 1.00};
  auto run = [&](double wide_scale, double tight_scale, double wide0 = 1, double tight0 = 1) {
    ResultDocument d;
    for (int i = 0; i < 10; ++i)
      for (const auto& [family, scale] : {std::pair{"wide", wide_scale}, std::pair{"tight", tight_scale}}) {
        const double s = scale * (i == 0 ? (family == std::string("wide") ? wide0 : tight0) : 1.0);
        std::vector<double> x = tight;
        for (double& v : x) v *= s * (1 + i);
        d.results.push_back(make(fmt::format("{}/c{}", family, i), 100 / (s * (1 + i)), x));
      }
    return d;
  };
  const std::vector<ResultDocument> runs = {run(0.8, 0.99), run(1.0, 1.0), run(1.0, 1.01)};
  const ResultDocument base = merge_runs(runs);
  const CompareReport r = compare_documents(base, run(1.0, 1.0, 1.45, 1.45), {});
  const Comparison& wide = find(r, "wide/c0", "m");
  EXPECT_EQ(wide.verdict, Verdict::noisy) << wide.reason;
  EXPECT_NE(wide.reason.find("wide's runs differ from one process to the next"), std::string::npos) << wide.reason;
  // ln 0.8 = −0.223, 0, 0 about their mean: sd = √(0.0332 / 2) in every case.
  EXPECT_NEAR(wide.run_spread, 0.1288, 0.001);
  const double t = student_t_quantile(0.05 / 20, 20);
  EXPECT_NEAR(wide.run_margin, t * 0.1288 * std::sqrt(1 + 1 / 3.0), 0.01);
  const Comparison& narrow = find(r, "tight/c0", "m");
  EXPECT_EQ(narrow.verdict, Verdict::slower) << narrow.reason;
  EXPECT_LT(narrow.run_margin, 0.05);
  EXPECT_TRUE(r.regressed());
  // The report says per family what a change had to exceed.
  ASSERT_EQ(r.run_spreads.size(), 2u);
  const RunSpreadSummary& ws = r.run_spreads[1];
  EXPECT_EQ(ws.family, "wide");
  EXPECT_EQ(ws.metric, "m");
  EXPECT_EQ(ws.cases, 10u);
  EXPECT_EQ(ws.df, 20u);
  EXPECT_NEAR(ws.factor, std::exp(wide.run_margin), 1e-9);
  EXPECT_LT(r.run_spreads[0].factor, 1.05);  // tight
  const std::string console = render_compare_console(r, {});
  EXPECT_NE(console.find(fmt::format("wide m x{:.3g} (sd 0.13 in ln over 10 cases)", ws.factor)), std::string::npos)
      << console;
  // The rest of "wide" moved with its runs: SAME.
  EXPECT_EQ(find(r, "wide/c5", "m").verdict, Verdict::same);
  const Comparison four = find(compare_documents(base, run(1.0, 1.0, 4.0, 1.0), {}), "wide/c0", "m");
  EXPECT_EQ(four.verdict, Verdict::slower) << four.reason;
  // The rule reads each run's median time per launch, not the metric: NEW's samples 45 % slower
  // but its metric tenfold lower (as a mean with one sample stuck for a time slice reads) is NOISY;
  // read from the metric it would clear the interval.
  ResultDocument stuck = run(1.0, 1.0, 1.45, 1.0);
  for (Result& x : stuck.results)
    if (x.key == "wide/c0") x.metrics[0].value = 100 / 10.0;
  const Comparison median = find(compare_documents(base, stuck, {}), "wide/c0", "m");
  EXPECT_EQ(median.verdict, Verdict::noisy) << median.reason;
  EXPECT_NE(median.reason.find("the median time per launch moved"), std::string::npos) << median.reason;
  EXPECT_EQ(base.results[0].extra.at("base_run_medians").size(), 3u);
  // One baseline run: no run-to-run spread to judge by, the rule does not apply.
  const Comparison single = find(compare_documents(runs[1], run(1.0, 1.0, 1.45, 1.0), {}), "wide/c0", "m");
  EXPECT_EQ(single.verdict, Verdict::slower) << single.reason;
  EXPECT_EQ(single.run_margin, 0.0);
}

// Params the measuring host chose itself (extra.host_sized) do not split a case: another runner's
// array size from its own cache still pairs; a size the user chose does not.
TEST(Compare, HostSizedParamsPairAcrossRunners) {
  const std::vector<double> s = {1.0, 1.01, 0.99, 1.0, 1.02, 0.98, 1.0, 1.01, 0.99, 1.0};
  ResultDocument b, n;
  b.results.push_back(make("mem/host/triad", 100, s));
  n.results.push_back(make("mem/host/triad", 100, s));
  b.results[0].params = {{"array_bytes", 1073741824}, {"threads", 2}, {"dtype", "fp32"}};
  n.results[0].params = {{"array_bytes", 134217728}, {"threads", 64}, {"dtype", "fp32"}};
  EXPECT_THROW(compare_documents(b, n, {}), UsageError);  // unmarked: nothing in common
  for (auto* d : {&b, &n}) d->results[0].extra["host_sized"] = {"array_bytes", "threads"};
  const CompareReport r = compare_documents(b, n, {});
  ASSERT_EQ(r.comparisons.size(), 1u);
  EXPECT_EQ(r.comparisons[0].verdict, Verdict::same);
  n.results[0].params["dtype"] = "fp64";  // a param the user chose still tells cases apart
  EXPECT_THROW(compare_documents(b, n, {}), UsageError);
}

TEST(Compare, StatusesNewAndMissing) {
  ResultDocument b, n;
  b.results.push_back(make("x/both", 100, {1.0, 1.0}));
  b.results.push_back(make("x/gone", 100, {1.0}));
  b.results.push_back(make("x/waived", 100, {1.0}));
  b.results.push_back(make("x/broken", 100, {1.0}));
  n.results.push_back(make("x/both", 100, {1.0, 1.0}));
  n.results.push_back(make("x/added", 100, {1.0}));
  Result waived = make("x/waived", 100, {});
  waived.status = Status::waived;
  waived.reason = "needs 2 GPUs";
  n.results.push_back(waived);
  Result failed = make("x/broken", 100, {1.0});
  failed.status = Status::fail;
  n.results.push_back(failed);
  const CompareReport r = compare_documents(b, n, {});
  EXPECT_EQ(find(r, "x/both", "m").verdict, Verdict::same);
  EXPECT_EQ(find(r, "x/gone", "m").verdict, Verdict::missing);
  EXPECT_EQ(find(r, "x/added", "m").verdict, Verdict::added);
  EXPECT_EQ(find(r, "x/waived", "m").verdict, Verdict::skipped);
  EXPECT_NE(find(r, "x/waived", "m").reason.find("needs 2 GPUs"), std::string::npos);
  EXPECT_EQ(find(r, "x/broken", "m").verdict, Verdict::failed);
  EXPECT_TRUE(r.regressed());  // a NEW verification failure gates like a regression
  // Params are part of the identity: the same key with other params is a different result.
  ResultDocument p1, p2;
  p1.results.push_back(make("x/p", 1, {1.0}));
  p1.results[0].params = {{"size", 1024}};
  p2.results.push_back(make("x/p", 1, {1.0}));
  p2.results[0].params = {{"size", 2048}};
  EXPECT_THROW(compare_documents(p1, p2, {}), UsageError);
}

TEST(CompareRender, JunitIsWellFormedXml) {
  CompareOptions all;
  all.all_metrics = true;
  const CompareReport r = compare_documents(fixture("base.json"), fixture("new_regression.json"), all);
  const std::string xml = render_compare_junit(r);
  const topo::xml::Element root = topo::xml::parse(xml, "junit");
  EXPECT_EQ(root.name, "testsuites");
  EXPECT_EQ(root.get("tests"), "5");
  EXPECT_EQ(root.get("failures"), "2");
  ASSERT_EQ(root.children.size(), 1u);
  const auto& suite = root.children[0];
  size_t testcases = 0, failures = 0;
  for (const auto& tc : suite.children) {
    if (tc.name != "testcase") continue;
    ++testcases;
    for (const auto& child : tc.children) failures += child.name == "failure" ? 1 : 0;
  }
  EXPECT_EQ(testcases, 5u);
  EXPECT_EQ(failures, 2u);
  // Characters that need escaping survive as well-formed XML.
  ResultDocument b, n;
  b.results.push_back(make("x/<a&b>", 1, {1.0}));
  b.results[0].params = {{"q", "\"it's\""}};
  n.results = b.results;
  EXPECT_NO_THROW(topo::xml::parse(render_compare_junit(compare_documents(b, n, {})), "junit"));
}

TEST(CompareRender, MarkdownStaysUnderTheCommentLimit) {
  // 3000 results, every one SLOWER: the full table is far beyond 64 KB.
  ResultDocument b, n;
  for (int i = 0; i < 3000; ++i) {
    const std::string key = "mem/case_" + std::to_string(i);
    b.results.push_back(make(key, 100, {1.0, 1.01, 0.99}));
    n.results.push_back(make(key, 50, {2.0, 2.02, 1.98}));
  }
  const CompareReport r = compare_documents(b, n, {});
  ASSERT_EQ(r.count(Verdict::slower), 3000u);
  const std::string md = render_compare_markdown(r, {});
  EXPECT_LE(md.size(), kMarkdownCommentLimit);
  EXPECT_LT(md.size(), 65536u);
  EXPECT_NE(md.find("REGRESSION"), std::string::npos);
  EXPECT_NE(md.find("more rows (not SAME) are not shown"), std::string::npos);
  // A small report is complete.
  const std::string small =
      render_compare_markdown(compare_documents(fixture("base.json"), fixture("new_regression.json"), {}), {});
  EXPECT_EQ(std::count(small.begin(), small.end(), '\n') > 5, true);
  EXPECT_NE(small.find("| **SLOWER** | mem/hbm/triad |"), std::string::npos) << small;
  EXPECT_EQ(small.find("not shown"), std::string::npos);
}

TEST(Export, GoogleBenchmarkJson) {
  const ResultDocument doc = fixture("base.json");
  const auto j = export_gbench(doc, "us");
  ASSERT_TRUE(j.contains("context") && j.contains("benchmarks"));
  EXPECT_EQ(j["context"]["host_name"], "fixture-host");
  EXPECT_EQ(j["context"]["gpu"], "NVIDIA H100 80GB HBM3");
  EXPECT_TRUE(j["context"]["caches"].is_array());
  ASSERT_EQ(j["benchmarks"].size(), 3u);
  const auto& b = j["benchmarks"][0];
  EXPECT_EQ(b["name"], "mem/hbm/triad/dtype:fp32/size:1073741824");
  EXPECT_EQ(b["run_name"], b["name"]);
  EXPECT_EQ(b["run_type"], "iteration");
  EXPECT_EQ(b["time_unit"], "us");
  EXPECT_EQ(b["iterations"], 12);
  EXPECT_DOUBLE_EQ(b["real_time"].get<double>(), doc.results[0].stats->median * 1e6);
  EXPECT_DOUBLE_EQ(b["bandwidth"].get<double>(), *doc.results[0].metrics[0].value);
  // Never NaN/Inf: a strict parser reads the text back.
  const auto reparsed = nlohmann::json::parse(export_text(doc, ExportFormat::gbench));
  EXPECT_EQ(reparsed.at("benchmarks").size(), 3u);
  EXPECT_THROW(export_gbench(doc, "fortnights"), UsageError);
}

TEST(Export, BencherMetricFormatAndCsv) {
  ResultDocument doc = fixture("base.json");
  doc.results[1].metrics[0].value = std::nullopt;  // a null value is left out, never NaN
  const auto j = export_bmf(doc);
  const auto& triad = j.at("mem/hbm/triad/dtype:fp32/size:1073741824");
  EXPECT_DOUBLE_EQ(triad.at("bandwidth").at("value").get<double>(), *doc.results[0].metrics[0].value);
  EXPECT_DOUBLE_EQ(triad.at("latency").at("value").get<double>(), doc.results[0].stats->median * 1e9);
  EXPECT_DOUBLE_EQ(triad.at("latency").at("lower_value").get<double>(), doc.results[0].stats->p5 * 1e9);
  EXPECT_DOUBLE_EQ(triad.at("latency").at("upper_value").get<double>(), doc.results[0].stats->p95 * 1e9);
  EXPECT_FALSE(j.at("mem/host/copy/dtype:fp32/size:67108864").contains("bandwidth"));
  // The chase has its own "latency" metric (ns per load); seconds per launch step aside.
  const auto& chase = j.at("mem/latency/chase/working_set:16777216");
  EXPECT_DOUBLE_EQ(chase.at("latency").at("value").get<double>(), *doc.results[2].metrics[0].value);
  EXPECT_TRUE(chase.contains("launch_latency"));
  EXPECT_EQ(parse_export_format("csv"), ExportFormat::csv);
  EXPECT_THROW(parse_export_format("xml"), UsageError);
  EXPECT_EQ(export_text(doc, ExportFormat::csv).rfind("key,", 0), 0u);
}

// One result with one metric and `samples` (seconds per launch) around 1 ms.
ResultDocument one_metric(double value, const std::string& unit, size_t samples) {
  Result r;
  r.key = "mem/host/copy";
  r.metrics = {Metric{"bandwidth", value, unit, true, std::nullopt, ""}};
  for (size_t i = 0; i < samples; ++i) r.samples.push_back(1e-3 * (1 + 0.001 * static_cast<double>(i)));
  if (samples > 0) r.stats = summarize(r.samples);
  return ResultDocument{{}, {r}};
}

TEST(CompareUnits, ConvertibleUnitsAreScaledOthersAreSkipped) {
  // 1 GB/s against 1000 MB/s is no change (it read as +99,900 %).
  CompareReport r = compare_documents(one_metric(1.0, "GB/s", 20), one_metric(1000.0, "MB/s", 20), {});
  const Comparison& same = find(r, "mem/host/copy", "bandwidth");
  EXPECT_EQ(same.verdict, Verdict::same);
  EXPECT_NEAR(*same.change, 0.0, 1e-12);
  EXPECT_EQ(same.unit, "GB/s");
  EXPECT_DOUBLE_EQ(*unit_factor("ms", "us"), 1000.0);
  EXPECT_DOUBLE_EQ(*unit_factor("GiB/s", "GB/s"), 1.073741824);
  EXPECT_FALSE(unit_factor("GB/s", "us"));
  EXPECT_FALSE(unit_factor("GB/s", "furlongs"));
  r = compare_documents(one_metric(1.0, "GB/s", 20), one_metric(1.0, "us", 20), {});
  EXPECT_EQ(find(r, "mem/host/copy", "bandwidth").verdict, Verdict::skipped);
  EXPECT_NE(find(r, "mem/host/copy", "bandwidth").reason.find("units differ"), std::string::npos);
}

TEST(CompareUnits, AnOverflowingChangeIsSkippedAndNoInfinityIsWritten) {
  const CompareReport r = compare_documents(one_metric(1e-310, "GB/s", 20), one_metric(1e308, "GB/s", 20), {});
  const Comparison& c = find(r, "mem/host/copy", "bandwidth");
  EXPECT_EQ(c.verdict, Verdict::skipped);
  EXPECT_FALSE(c.change);
  for (const std::string& text :
       {render_compare_markdown(r, {}), render_compare_junit(r), render_compare_console(r, {})})
    EXPECT_EQ(text.find("inf"), std::string::npos) << text;
}

TEST(CompareUnits, OneSamplePerSideNeverGatesAndSaysSo) {
  // Half the bandwidth, one sample each: no noise estimate, so AMBIGUOUS (documented), with a warning.
  const CompareReport r = compare_documents(one_metric(10.0, "GB/s", 1), one_metric(5.0, "GB/s", 1), {});
  EXPECT_EQ(find(r, "mem/host/copy", "bandwidth").verdict, Verdict::ambiguous);
  EXPECT_FALSE(r.regressed());
  ASSERT_EQ(r.warnings.size(), 1u);
  EXPECT_NE(r.warnings[0].find("one sample per side"), std::string::npos) << r.warnings[0];
}

}  // namespace
}  // namespace gcb
