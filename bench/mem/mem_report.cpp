// mem's view in the reports (mem_report.hpp): its charts from the generic chart machinery
// (reports/report_charts.hpp) and its side-by-side table.
#include "bench/mem/mem_report.hpp"

#include <algorithm>
#include <cmath>

#include "reports/report_charts.hpp"
#include "reports/svg_chart.hpp"

namespace gcb::bench {

using namespace report;

namespace {

// A copy sweeps params "bytes": the table shows its largest size, the charts every size.
std::vector<Row> mem_rows(const std::vector<Run>& runs, const std::string& family) {
  return family_rows(runs, family, [](const Result& r) { return r.key.starts_with("mem/copy/"); });
}

std::string mem_html(const std::vector<Run>& runs, const std::string& family) {
  return charts_block(mem_charts(runs)) + compare_table(runs, mem_rows(runs, family), true);
}

}  // namespace

std::vector<std::string> mem_charts(const std::vector<Run>& runs) {
  std::vector<std::string> out;
  const auto rows = match_rows(runs, [](const Result& r) {
    const Metric* m = headline(&r);
    return r.family() == "mem" && m && m->unit == "GB/s" && !r.key.starts_with("mem/copy/");
  });
  if (!rows.empty()) {
    svg::BarChart b;
    b.title = "Memory bandwidth per kernel";
    // The axis names the statistic (the best sample, STREAM's convention), as the table's note does.
    b.y = {headline_label(rows.front().first()), "GB/s", svg::Scale::linear, svg::TickFormat::number};
    std::vector<nlohmann::json> params;
    for (const auto& row : rows) params.push_back(row.params);
    std::vector<std::string> apart = differing_keys(params);
    // Params the measuring host chose (extra.host_sized: STREAM's array size, its thread count)
    // differ between machines, not between kernels: not in the category names.
    std::vector<std::string> host_sized;
    for (const auto& row : rows)
      if (const Result* r = row.first(); r && r->extra.contains("host_sized") && r->extra.at("host_sized").is_array())
        for (const auto& k : r->extra.at("host_sized"))
          if (k.is_string()) host_sized.push_back(k.get<std::string>());
    std::erase_if(apart, [&](const std::string& k) {
      return std::find(host_sized.begin(), host_sized.end(), k) != host_sized.end();
    });
    for (const auto& row : rows) {
      const std::string tail = named(row.params, apart);
      b.categories.push_back(row.key.substr(4) + (tail.empty() ? "" : " " + tail));
    }
    for (size_t i = 0; i < runs.size(); ++i) {
      svg::BarSeries s{runs[i].label, {}};
      for (const auto& row : rows) {
        const Metric* m = headline(row.per_run[i]);
        s.values.push_back(m ? m->value : std::nullopt);
      }
      b.series.push_back(std::move(s));
    }
    out.push_back(svg::render_bar_chart(b));
  }
  const auto is_copy = [](const Result& r) { return r.key.starts_with("mem/copy/") && !r.key.ends_with("/fit"); };
  for (const auto& key : keys_of(runs, is_copy)) {
    // The fit is over the swept bytes n; the metric counts model.bytes per launch (both
    // directions, or read + written), so the curve is scaled by model.bytes / n.
    const auto scale = [](const Result& r) {
      const double counted = number_at(r.model, "bytes"), n = number_at(r.params, "bytes");
      return std::isfinite(counted) && n > 0 && counted > 0 ? counted / n : 1.0;
    };
    auto chart = size_chart(
        runs, key + ": bandwidth vs size", "bandwidth", [&](const Result& r) { return r.key == key; }, {"bytes"}, "",
        scale);
    if (!chart.empty()) out.push_back(std::move(chart));
  }
  for (const auto& key :
       keys_of(runs, [](const Result& r) { return r.family() == "mem" && r.key.ends_with("/latency"); })) {
    svg::LineChart c;
    c.title = key + ": latency vs working set";
    c.x = {"working set", "B", svg::Scale::log, svg::TickFormat::bytes};
    c.y = {"latency per load", "", svg::Scale::log, svg::TickFormat::number};
    std::vector<std::vector<Sweep>> per_run;
    std::vector<nlohmann::json> rests;
    for (const auto& run : runs) {
      per_run.push_back(sweeps(
          run, [&](const Result& r) { return r.key == key; }, "working_set_bytes", {"working_set_bytes"}, ""));
      for (const auto& s : per_run.back()) rests.push_back(s.rest);
    }
    const std::vector<std::string> apart = differing_keys(rests);
    c.title += shared_text(rests, apart);
    for (size_t i = 0; i < runs.size(); ++i)
      for (const auto& s : per_run[i]) {
        c.y.unit = metric_unit(*s.sample, "");
        c.series.push_back({with_run(runs, i, named(s.rest, apart)), s.points});
      }
    if (!c.series.empty()) out.push_back(svg::render_line_chart(c));
  }
  return out;
}

const ReportView kMemReportView = {"Memory (mem)", mem_html, nullptr, mem_rows, nullptr, nullptr};

}  // namespace gcb::bench
