// The HTML and Markdown reports as pure functions of result documents, with the sections of the
// family table (bench/families.cpp) as `gcbench report` draws them: one chart per expected series
// group, no script, escaping, side-by-side ratios, environment diff, the Markdown budget.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include "bench/families.hpp"
#include "bench/mem/mem_report.hpp"
#include "reports/html.hpp"
#include "reports/markdown.hpp"
#include "reports/report_charts.hpp"
#include "reports/report_data.hpp"
#include "tests/reports/xml_check.hpp"

namespace gcb::report {
namespace {

// gtest's Test::Run would hide report::Run inside TEST bodies.
using Doc = gcb::report::Run;
using test::count_of;
using test::xml_check;

const char* const kFixture = "tests/fixtures/report/synthetic_gpu.json";

// The sections `gcbench report` draws: the views of the family table's rows.
std::span<const ReportSection> sections() {
  static const std::vector<ReportSection> kSections = bench::report_sections(bench::families());
  return kSections;
}
std::string html_of(const std::vector<Doc>& runs) { return render_html(runs, sections()); }
std::string markdown_of(const std::vector<Doc>& runs, const MarkdownOptions& options = {}) {
  return render_markdown(runs, sections(), options);
}

Doc fixture_run(const std::string& label = "base.json") { return {label, load_document(kFixture)}; }

Result bandwidth_result(const std::string& key, nlohmann::json params, double gbps, double model_bytes = 0) {
  Result r;
  r.key = key;
  r.params = std::move(params);
  r.metrics = {Metric{"bandwidth", gbps, "GB/s", true, {}, {}}};
  if (model_bytes > 0) r.model = {{"bytes", model_bytes}};
  return r;
}

// The contender: same results, GEMM 10 % faster, another driver and topology.
Doc contender() {
  Doc r = fixture_run("new.json");
  for (auto& res : r.doc.results)
    if (res.key == "gemm/bf16") *res.metrics.front().value *= 1.1;
  r.doc.context["nvml"]["driver_version"] = "575.51.03";
  r.doc.context["topology"]["fingerprint"] = "synthetic-4xh100-pcie";
  return r;
}

TEST(Report, SingleRunHtmlHasOneSvgPerExpectedChartAndNoScript) {
  const std::string html = html_of({fixture_run()});
  EXPECT_EQ(xml_check(html), "");
  // coll: algbw + busbw for all_reduce and all_gather (4); p2p: one heatmap; train: time and
  // memory stacks (2); roofline of the H100 (1).
  EXPECT_EQ(count_of(html, "<svg"), 8u);
  EXPECT_EQ(count_of(html, "<script"), 0u);
  EXPECT_EQ(count_of(html, "http://") + count_of(html, "https://"),
            count_of(html, "xmlns=\"http://www.w3.org/2000/svg\""));
  // Both α–β fits are drawn on both of their charts.
  EXPECT_EQ(count_of(html, "α–β fit of"), 4u);
  // The attn params hold < & ' " and must come out escaped.
  EXPECT_NE(html.find("causal&lt;mask&gt;&amp;&apos;&quot;"), std::string::npos);
  EXPECT_EQ(html.find("causal<mask>"), std::string::npos);
  EXPECT_NE(html.find("needs cuDNN &gt;= 9.1 &lt;and&gt; sm_90"), std::string::npos);  // the WAIVED reason
  for (const char* section :
       {"id=\"coll\"", "id=\"p2p\"", "id=\"train\"", "id=\"gemm\"", "id=\"attn\"", "id=\"roofline\""})
    EXPECT_NE(html.find(section), std::string::npos) << section;
  EXPECT_EQ(html.find("environments differ"), std::string::npos);
}

TEST(Report, MemoryChartsCoverBarsCopySweepsWithFitAndLatency) {
  Doc run{"mem.json", {}};
  auto& rs = run.doc.results;
  rs.push_back(bandwidth_result("mem/host/triad", {{"device", "cpu"}, {"dtype", "fp32"}}, 50));
  const nlohmann::json copy = {{"device", "gpu:0"}, {"engine", "ce"}};
  for (double n : {4096.0, 65536.0, 1048576.0}) {
    nlohmann::json p = copy;
    p["bytes"] = n;
    rs.push_back(bandwidth_result("mem/copy/d2d", p, 100 * n / (n + 65536), 2 * n));
  }
  Result fit;
  fit.key = "mem/copy/d2d/fit";
  fit.params = copy;
  fit.metrics = {Metric{"beta", 50.0, "GB/s", true, {}, {}}, Metric{"alpha", 1.3, "us", false, {}, {}}};
  rs.push_back(fit);
  for (double ws : {4096.0, 65536.0}) {
    Result lat;
    lat.key = "mem/host/latency";
    lat.params = {{"device", "cpu"}, {"working_set_bytes", ws}};
    lat.metrics = {Metric{"latency", ws / 4096, "ns", false, {}, {}}};
    rs.push_back(lat);
  }
  const auto charts = bench::mem_charts({run});
  ASSERT_EQ(charts.size(), 3u);  // bars, the d2d sweep, the latency curve
  for (const auto& c : charts) EXPECT_EQ(xml_check(c), "");
  // What every series shares goes to the title; legends name only what tells series apart.
  EXPECT_NE(charts[1].find("<title>mem/copy/d2d: bandwidth vs size (device=gpu:0 engine=ce)</title>"),
            std::string::npos)
      << charts[1];
  EXPECT_NE(charts[1].find("α–β fit of measured: α=1.30 us β=50.00 GB/s"), std::string::npos) << charts[1];
  // The summary table keeps only the largest size of the sweep, plus the fit and the others.
  const auto rows = section_rows({run}, "mem", find_section(sections(), "mem"));
  ASSERT_EQ(rows.size(), 5u);
  EXPECT_EQ(rows[1].params.at("bytes"), 1048576.0);
}

// Legends are name=value of the params that differ between a chart's series, never rows of bare
// values ("threads fp32 false pipelined 1 all_reduce 2 2 sum -1").
// The headline's statistic is named where it is shown: a bandwidth beside its median is the best
// sample (STREAM's convention), a latency beside its minimum the median; on the bar chart's axis
// and in the note above the table.
TEST(Report, HeadlinesNameTheirStatistic) {
  Result best = bandwidth_result("mem/host/triad", {{"device", "cpu"}}, 20.1);
  best.metrics.push_back(Metric{"bandwidth_median", 3.37, "GB/s", true, {}, {}});
  Result lat;
  lat.key = "mem/host/latency";
  lat.metrics = {Metric{"latency", 80.0, "ns", false, {}, {}}, Metric{"latency_min", 75.0, "ns", false, {}, {}}};
  const Result plain = bandwidth_result("mem/hbm/copy", {{"device", "gpu"}}, 3000);
  EXPECT_EQ(headline_label(&best), "bandwidth, best sample");
  EXPECT_EQ(headline_label(&lat), "latency, median");
  EXPECT_EQ(headline_label(&plain), "bandwidth");
  Doc run{"mem.json", {}};
  run.doc.results = {best, lat};
  const std::string html = html_of({run});
  EXPECT_EQ(xml_check(html), "");
  EXPECT_NE(html.find("Values: bandwidth, best sample (mem/host/triad); latency, median (mem/host/latency)."),
            std::string::npos)
      << html;
  EXPECT_NE(html.find("bandwidth, best sample (GB/s)"), std::string::npos) << html;  // the bar chart's axis
}

// Each family with a view of its own says so in its row of the family table: a run holding one
// result of that family gets the row's section title; any other family "Family NAME" and its
// side-by-side table — a family the table does not know too (from another build of gcbench).
TEST(Report, SectionsComeFromTheFamilyTable) {
  size_t with_view = 0;
  for (const bench::Family& f : bench::families()) {
    const ReportSection* section = find_section(sections(), f.name);
    ASSERT_EQ(section != nullptr, f.report_view != nullptr) << f.name;
    Doc run{"one.json", {}};
    run.doc.results = {bandwidth_result(std::string(f.name) + "/x", {{"device", "cpu"}}, 1.0)};
    const std::string html = html_of({run});
    EXPECT_EQ(xml_check(html), "") << f.name;
    const std::string title = section ? section->view->title : fmt::format("Family {}", f.name);
    EXPECT_NE(html.find(fmt::format("<h2 id=\"{}\">{}</h2>", f.name, title)), std::string::npos) << f.name;
    with_view += section != nullptr;
  }
  EXPECT_EQ(with_view, sections().size());
  ASSERT_FALSE(sections().empty());
  const std::string unknown = "unlisted";
  for (const bench::Family& f : bench::families()) ASSERT_NE(f.name, unknown);
  EXPECT_EQ(find_section(sections(), unknown), nullptr);
  Doc run{"unlisted.json", {}};
  run.doc.results = {bandwidth_result(unknown + "/read", {{"device", "cpu"}}, 2.5)};
  const std::string html = html_of({run});
  EXPECT_NE(html.find("<h2 id=\"unlisted\">Family unlisted</h2>"), std::string::npos) << html;
  EXPECT_NE(html.find("2.500 GB/s"), std::string::npos) << html;
}

TEST(Report, LegendsNameTheParamsThatDiffer) {
  Doc run{"coll.json", {}};
  for (bool inplace : {false, true})
    for (double n : {1024.0, 65536.0}) {
      Result r = bandwidth_result("mem/copy/h2d", {{"device", "gpu:0"}, {"engine", "ce"}, {"pinned", inplace}}, 10, n);
      r.params["bytes"] = n;
      run.doc.results.push_back(r);
    }
  const auto charts = bench::mem_charts({run});
  ASSERT_FALSE(charts.empty());
  const std::string& c = charts.back();
  EXPECT_NE(c.find(">pinned=false<"), std::string::npos) << c;
  EXPECT_NE(c.find(">pinned=true<"), std::string::npos) << c;
  EXPECT_NE(c.find("(device=gpu:0 engine=ce)</title>"), std::string::npos) << c;
  EXPECT_EQ(c.find(">gpu:0 ce false<"), std::string::npos) << c;
}

// A sweep whose values span more than 100x (latency-bound small messages, bandwidth-bound large
// ones) reads on a log y axis: decades as ticks; within 100x the axis stays linear.
TEST(Report, SizeChartsTakeALogAxisBeyond100x) {
  auto chart = [](double low) {
    Doc run{"copy.json", {}};
    for (double n : {1024.0, 1048576.0, 1073741824.0}) {
      Result r = bandwidth_result("mem/copy/d2d", {{"device", "gpu:0"}, {"bytes", n}}, n == 1024.0 ? low : 50.0);
      run.doc.results.push_back(r);
    }
    const auto charts = bench::mem_charts({run});
    return charts.empty() ? std::string() : charts.front();
  };
  const std::string wide = chart(0.01), narrow = chart(5.0);
  EXPECT_NE(wide.find("text-anchor=\"end\">0.01</text>"), std::string::npos) << wide;
  EXPECT_NE(wide.find("text-anchor=\"end\">10</text>"), std::string::npos) << wide;
  EXPECT_EQ(narrow.find("text-anchor=\"end\">0.01</text>"), std::string::npos) << narrow;
}

// plan --verify's rows are a table of their own, predicted against measured (they once sat in the
// layout table as a row of dashes: they have no step_time, tokens/s or MFU).
TEST(Report, PlanVerifyRowsShowPredictedAgainstMeasured) {
  Doc run{"plan.json", {}};
  Result layout;
  layout.key = "plan/dp2-zero2-mb2-none";
  layout.params = {{"layout", "dp2-zero2"}};
  layout.metrics = {Metric{"step_time", 0.001659, "s", false, {}, {}}};
  Result verify;
  verify.key = "plan/verify/dp2-zero2-mb2-none";
  verify.params = {{"layout", "dp2-zero2"}};
  verify.metrics = {Metric{"error", 119.1, "%", false, {}, {}},
                    Metric{"step_time_predicted", 0.001659, "s", false, {}, {}},
                    Metric{"step_time_measured", 0.000757, "s", false, {}, {}}};
  verify.status = Status::fail;
  Result nofit;
  nofit.key = "plan/dp1-mb2-none";
  nofit.params = {{"layout", "dp1"}};
  nofit.status = Status::waived;
  nofit.reason = "needs 90 GiB, more than the 80 GiB of a device";
  run.doc.results = {layout, verify, nofit};
  const std::string html = html_of({run});
  const size_t table = html.find("plan --verify: the predicted step time");
  ASSERT_NE(table, std::string::npos) << html;
  const std::string rest = html.substr(table);
  EXPECT_NE(rest.find("<td>dp2-zero2-mb2-none</td>"), std::string::npos) << rest;
  EXPECT_NE(rest.find("+119.1 %"), std::string::npos) << rest;
  EXPECT_NE(rest.find("<td>FAIL</td>"), std::string::npos) << rest;
  // A layout that does not fit is greyed with its reason, not a row of dashes like the others.
  EXPECT_NE(html.find("<tr class=\"nofit\"><td>dp1 — not run: needs 90 GiB, more than the 80 GiB"), std::string::npos)
      << html;
  const size_t layouts = html.find("Predicted, not measured");
  ASSERT_LT(layouts, table);
  EXPECT_EQ(html.substr(layouts, table - layouts).find("verify"), std::string::npos);  // not a layout row
}

TEST(Report, SideBySideRatiosAndEnvironmentDiff) {
  const std::vector<Doc> runs = {fixture_run(), contender()};
  const auto diff = environment_diff(runs);
  ASSERT_EQ(diff.size(), 2u);
  EXPECT_EQ(diff[0].name, "driver");
  EXPECT_EQ(diff[0].values, (std::vector<std::string>{"570.86.15", "575.51.03"}));
  EXPECT_EQ(diff[1].name, "topology fingerprint");

  const auto rows = family_rows(runs, "gemm");
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_NEAR(*ratio_to_baseline(rows[0], 1), 1.1, 1e-12);
  EXPECT_FALSE(ratio_to_baseline(rows[0], 2));  // no such run

  const std::string html = html_of(runs);
  EXPECT_EQ(xml_check(html), "");
  EXPECT_NE(html.find("environments differ"), std::string::npos);
  EXPECT_NE(html.find("<td>575.51.03</td>"), std::string::npos);
  EXPECT_EQ(count_of(html, "<td class=\"num better\">1.100×</td>"), 4u);  // the four GEMM sizes
  EXPECT_NE(html.find("<th>new.json / base.json</th>"), std::string::npos);
  // Two runs: p2p heatmaps and rooflines are per run (2 + 2), the rest hold both runs' series.
  EXPECT_EQ(count_of(html, "<svg"), 10u);

  const std::string md = markdown_of(runs);
  EXPECT_NE(md.find("- driver: base.json = `570.86.15`, new.json = `575.51.03`"), std::string::npos) << md;
  EXPECT_EQ(count_of(md, " 1.100× |"), 4u);
  EXPECT_NE(md.find("causal\\<mask\\>&'\""), std::string::npos);  // '<' and '>' escaped (reports/escape.hpp)
  EXPECT_EQ(md.find("rows shown"), std::string::npos);
}

TEST(Report, UnmatchedResultsShowDashesNotRatios) {
  Doc a{"a", {}}, b{"b", {}};
  a.doc.results.push_back(bandwidth_result("gemm/x", {{"n", 1}}, 4));
  b.doc.results.push_back(bandwidth_result("gemm/x", {{"n", 1}}, 2));
  b.doc.results.push_back(bandwidth_result("gemm/x", {{"n", 2}}, 2));
  const auto rows = match_rows({a, b}, [](const Result&) { return true; });
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_DOUBLE_EQ(*ratio_to_baseline(rows[0], 1), 0.5);
  EXPECT_FALSE(ratio_to_baseline(rows[1], 1));
  EXPECT_EQ(rows[1].per_run[0], nullptr);
  const std::string html = html_of({a, b});
  EXPECT_NE(html.find("<td class=\"num worse\">0.500×</td>"), std::string::npos);
}

TEST(Report, MarkdownStaysUnder64KBWithManyResults) {
  Doc big{"big.json", {}};
  for (int f = 0; f < 6; ++f)
    for (int i = 0; i < 3000; ++i)
      big.doc.results.push_back(bandwidth_result(fmt::format("fam{}/case{}", f, i % 7),
                                                 {{"i", i}, {"label", std::string(40, 'x')}}, 1.0 + i));
  const std::string md = markdown_of({big, big});
  EXPECT_LE(md.size(), 64000u);
  EXPECT_GT(md.size(), 1000u);
  EXPECT_EQ(md.rfind("# gcbench report", 0), 0u);
  EXPECT_EQ(count_of(md, "\n## fam"), 6u);  // every family keeps its heading
  EXPECT_NE(md.find("of 3000 rows shown"), std::string::npos);
  // A tiny budget still gives a valid prefix and says it was cut.
  const std::string tiny = markdown_of({big}, {"t", 300});
  EXPECT_LE(tiny.size(), 300u);
  EXPECT_NE(tiny.find("cut to fit"), std::string::npos);
}

}  // namespace
}  // namespace gcb::report
