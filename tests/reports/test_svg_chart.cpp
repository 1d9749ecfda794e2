// The SVG chart library: escaping, scale mapping, tick values and labels, and that every chart
// is well-formed XML with the marks it should have.
#include <gtest/gtest.h>

#include <set>

#include "reports/report_charts.hpp"
#include "reports/svg_chart.hpp"
#include "tests/reports/xml_check.hpp"

namespace gcb::svg {
namespace {

using test::count_of;
using test::xml_check;

std::vector<double> values(const std::vector<Tick>& ticks) {
  std::vector<double> v;
  for (const auto& t : ticks) v.push_back(t.value);
  return v;
}
std::vector<std::string> labels(const std::vector<Tick>& ticks) {
  std::vector<std::string> v;
  for (const auto& t : ticks) v.push_back(t.label);
  return v;
}

TEST(SvgChart, ScaleMapsLinearAndLog) {
  const ScaleMap log{1, 1000, Scale::log, 0, 300};
  EXPECT_NEAR(log(1), 0, 1e-9);
  EXPECT_NEAR(log(10), 100, 1e-9);  // one decade of three = a third of the pixels
  EXPECT_NEAR(log(1000), 300, 1e-9);
  const ScaleMap y{0, 10, Scale::linear, 100, 0};  // y axes run upwards
  EXPECT_NEAR(y(2.5), 75, 1e-12);
}

TEST(SvgChart, LinearTicksUseNiceSteps) {
  EXPECT_EQ(values(make_ticks(0, 100, Scale::linear, TickFormat::number)),
            (std::vector<double>{0, 20, 40, 60, 80, 100}));
  EXPECT_EQ(labels(make_ticks(0, 0.9, Scale::linear, TickFormat::number)),
            (std::vector<std::string>{"0", "0.2", "0.4", "0.6", "0.8", "1"}));
  EXPECT_EQ(labels(make_ticks(0, 3e9, Scale::linear, TickFormat::number)),
            (std::vector<std::string>{"0", "500M", "1G", "1.5G", "2G", "2.5G", "3G"}));
}

TEST(SvgChart, LinearByteTicksStepInBinaryUnits) {
  EXPECT_EQ(labels(make_ticks(0, 14.0 * (1 << 30), Scale::linear, TickFormat::bytes)),
            (std::vector<std::string>{"0", "5G", "10G", "15G"}));  // 14/6 → step 5
}

TEST(SvgChart, LogTicksForBytesArePowersOfTwo) {
  const auto t = make_ticks(4096, 1 << 20, Scale::log, TickFormat::bytes);
  EXPECT_EQ(labels(t), (std::vector<std::string>{"4K", "8K", "16K", "32K", "64K", "128K", "256K", "512K", "1M"}));
  // 1 KiB .. 1 GiB is 20 doublings: every 3rd power, ending at the first tick ≥ 1G.
  const auto wide = make_ticks(1024, 1 << 30, Scale::log, TickFormat::bytes);
  EXPECT_EQ(labels(wide), (std::vector<std::string>{"1K", "8K", "64K", "512K", "4M", "32M", "256M", "2G"}));
}

TEST(SvgChart, LogTicksForNumbersAreDecadesOr125) {
  EXPECT_EQ(labels(make_ticks(1, 1000, Scale::log, TickFormat::number)),
            (std::vector<std::string>{"1", "10", "100", "1k"}));
  EXPECT_EQ(values(make_ticks(3, 40, Scale::log, TickFormat::number)), (std::vector<double>{2, 5, 10, 20, 50}));
  EXPECT_EQ(labels(make_ticks(1e12, 1e15, Scale::log, TickFormat::number)),
            (std::vector<std::string>{"1T", "10T", "100T", "1P"}));
}

TEST(SvgChart, TickLabels) {
  EXPECT_EQ(tick_label(1.5e12, TickFormat::number), "1.5T");
  EXPECT_EQ(tick_label(0.25, TickFormat::number), "0.25");
  EXPECT_EQ(tick_label(1048576, TickFormat::bytes), "1M");
  EXPECT_EQ(tick_label(512, TickFormat::bytes), "512");
  EXPECT_EQ(tick_label(0, TickFormat::bytes), "0");
}

TEST(SvgChart, LineChartIsWellFormedAndPlacesPoints) {
  LineChart c;
  c.title = "bw <vs> size & more";
  c.x = {"size", "B", Scale::log, TickFormat::bytes};
  c.y = {"bandwidth", "GB/s", Scale::log, TickFormat::number};
  c.series.push_back({"a<b", {{1024, 1}, {1 << 20, 100}}});
  c.series.push_back({"fit", {{1024, 2}, {1 << 20, 90}}, true, false, true});
  const std::string s = render_line_chart(c);
  EXPECT_EQ(xml_check(s), "");
  EXPECT_EQ(count_of(s, "<svg"), 1u);
  EXPECT_EQ(count_of(s, "<polyline"), 2u);
  EXPECT_EQ(count_of(s, "<circle"), 2u);           // the fit has no markers
  EXPECT_EQ(count_of(s, "stroke-dasharray"), 2u);  // the fit's line and its legend swatch
  EXPECT_NE(s.find("a&lt;b"), std::string::npos);
  EXPECT_EQ(s.find("a<b"), std::string::npos);
  EXPECT_NE(s.find("bw &lt;vs&gt; size &amp; more"), std::string::npos);
  // x = 1K is the first tick (left edge, 72 px) and 1M the last (720 - 24 = 696 px); y = 1 and
  // 100 are the first and last decade ticks, at the plot's bottom (380 - 48) and top (34).
  EXPECT_NE(s.find("cx=\"72.0\" cy=\"332.0\""), std::string::npos) << s;
  EXPECT_NE(s.find("cx=\"696.0\" cy=\"34.0\""), std::string::npos) << s;
}

TEST(SvgChart, EmptyLineChartSaysNoData) {
  LineChart c;
  c.title = "empty";
  c.series.push_back({"only non-positive", {{0, 0}}});
  c.x.scale = Scale::log;
  const std::string s = render_line_chart(c);
  EXPECT_EQ(xml_check(s), "");
  EXPECT_NE(s.find("no data"), std::string::npos);
}

TEST(SvgChart, BarChartsGroupedAndStacked) {
  BarChart b;
  b.title = "bars";
  b.categories = {"x", "y", "z"};
  b.series = {{"r1", {1.0, 2.0, std::nullopt}}, {"r2", {3.0, 4.0, 5.0}}};
  for (bool stacked : {false, true}) {
    b.stacked = stacked;
    const std::string s = render_bar_chart(b);
    EXPECT_EQ(xml_check(s), "") << stacked;
    EXPECT_EQ(count_of(s, "</title></rect>"), 5u) << stacked;  // one bar per value present
  }
  b.stacked = false;
  EXPECT_NE(render_bar_chart(b).find(">4.00</text>"), std::string::npos);  // values over grouped bars
  // Below 1, two significant digits: 0.0089 and 0.011 once both read "0.01".
  b.series = {{"r1", {0.0089, 0.011, 0.5}}};
  const std::string small = render_bar_chart(b);
  EXPECT_NE(small.find(">0.0089</text>"), std::string::npos) << small;
  EXPECT_NE(small.find(">0.011</text>"), std::string::npos) << small;
  EXPECT_NE(small.find(">0.5</text>"), std::string::npos) << small;
}

// A title longer than the chart is wide is cut with "…" where it is drawn (720 px: 90
// characters), and kept whole in the SVG <title> (the tooltip).
TEST(SvgChart, LongTitlesAreCutWhereDrawnAndKeptInTheTooltip) {
  BarChart b;
  b.title = "all_reduce: busbw vs size (" + std::string(120, 'x') + ")";
  b.categories = {"x"};
  b.series = {{"r1", {1.0}}};
  const std::string s = render_bar_chart(b);
  EXPECT_NE(s.find("<title>" + b.title + "</title>"), std::string::npos);
  const size_t drawn = s.find("font-weight=\"bold\">");
  ASSERT_NE(drawn, std::string::npos);
  const size_t from = s.find(">", drawn) + 1;
  const std::string text = s.substr(from, s.find("</text>", from) - from);
  EXPECT_EQ(text, b.title.substr(0, 89) + "…") << text;
}

// Twenty series keep twenty colours (a training step's phases and communication kinds once
// repeated after ten: backward and comm:pp_embed both blue).
TEST(SvgChart, TwentySeriesTwentyColours) {
  std::set<std::string_view> colours;
  for (size_t i = 0; i < 20; ++i) colours.insert(series_color(i));
  EXPECT_EQ(colours.size(), 20u);
}

TEST(SvgChart, HeatmapHasOneCellPerEntry) {
  Heatmap h;
  h.title = "p2p";
  h.unit = "GB/s";
  h.rows = {"0", "1"};
  h.cols = {"0", "1"};
  h.values = {{std::nullopt, 370.4}, {25.0, std::nullopt}};
  const std::string s = render_heatmap(h);
  EXPECT_EQ(xml_check(s), "");
  EXPECT_EQ(count_of(s, "<rect"), 5u);                  // background + 4 cells
  EXPECT_EQ(count_of(s, "fill=\"#eeeeee\""), 2u);       // the empty diagonal
  EXPECT_NE(s.find(">370</text>"), std::string::npos);  // ≥ 100: no decimals
  EXPECT_NE(s.find(">25.0</text>"), std::string::npos);
  EXPECT_NE(s.find("fill=\"#08519c\""), std::string::npos);  // the maximum takes the darkest colour
}

TEST(SvgChart, FitCurveIsBandwidthOfAlphaBeta) {
  // α = 1 us, β = 10 GB/s: at n = 10 kB, t = 1 us + 1 us → 5 GB/s; at 100 MB, t ≈ 10.001 ms.
  const auto c = report::fit_bandwidth_curve(1e-6, 1e10, 1.0, 1e4, 1e8, 5);
  ASSERT_EQ(c.size(), 5u);
  EXPECT_DOUBLE_EQ(c[0].first, 1e4);
  EXPECT_NEAR(c[0].second, 5.0, 1e-12);
  EXPECT_NEAR(c[1].first, 1e5, 1e-6);
  EXPECT_NEAR(c[4].second, 1e8 / (1e-6 + 1e-2) / 1e9, 1e-12);
  // A copy counting read + written bytes doubles the curve.
  EXPECT_NEAR(report::fit_bandwidth_curve(1e-6, 1e10, 2.0, 1e4, 1e8, 5)[0].second, 10.0, 1e-12);
}

}  // namespace
}  // namespace gcb::svg
