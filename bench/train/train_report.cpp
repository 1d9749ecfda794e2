// train's view in the reports (train_report.hpp): the layout table (reports/html.hpp) and its
// stacked bars (reports/svg_chart.hpp).
#include "bench/train/train_report.hpp"

#include <algorithm>
#include <cmath>

#include "reports/report_charts.hpp"
#include "reports/svg_chart.hpp"

namespace gcb::bench {

using namespace report;

namespace {

std::string train_html(const std::vector<Run>& runs, const std::string& family) {
  return layout_table(runs, family_rows(runs, family)) + charts_block(train_charts(runs));
}

}  // namespace

std::vector<std::string> train_charts(const std::vector<Run>& runs) {
  std::vector<std::string> out;
  svg::BarChart time{"Training step time per phase",
                     {},
                     {},
                     true,
                     {"time per step", "s", svg::Scale::linear, svg::TickFormat::number}};
  svg::BarChart memory{"Training memory per category (measured vs analytic)",
                       {},
                       {},
                       true,
                       {"memory per rank", "B", svg::Scale::linear, svg::TickFormat::bytes}};
  // Adds one stacked bar: `parts` maps a segment name to its value.
  auto add_bar = [](svg::BarChart& c, const std::string& category,
                    const std::vector<std::pair<std::string, double>>& parts) {
    c.categories.push_back(category);
    for (auto& s : c.series) s.values.emplace_back();
    for (const auto& [name, v] : parts) {
      auto it = std::find_if(c.series.begin(), c.series.end(), [&](const svg::BarSeries& s) { return s.name == name; });
      if (it == c.series.end()) {
        it = c.series.insert(c.series.end(),
                             svg::BarSeries{name, std::vector<std::optional<double>>(c.categories.size())});
      }
      it->values.back() = v;
    }
  };
  for (size_t i = 0; i < runs.size(); ++i) {
    for (const auto& r : runs[i].doc.results) {
      if (r.family() != "train" || r.status != Status::pass) continue;
      std::string layout = r.params.contains("layout") && r.params.at("layout").is_string()
                               ? r.params.at("layout").get<std::string>()
                               : r.key.substr(6);
      if (runs.size() > 1) layout += " · " + runs[i].label;
      if (r.extra.contains("time_split") && r.extra.at("time_split").is_object()) {
        std::vector<std::pair<std::string, double>> parts;
        for (auto it = r.extra.at("time_split").begin(); it != r.extra.at("time_split").end(); ++it)
          if (it.value().is_number()) parts.emplace_back(it.key(), it.value().get<double>());
        add_bar(time, layout, parts);
      }
      if (r.extra.contains("memory") && r.extra.at("memory").is_object()) {
        std::vector<std::pair<std::string, double>> measured, analytic;
        for (auto it = r.extra.at("memory").begin(); it != r.extra.at("memory").end(); ++it) {
          if (const double m = number_at(it.value(), "measured"); std::isfinite(m)) measured.emplace_back(it.key(), m);
          if (const double a = number_at(it.value(), "analytic"); std::isfinite(a)) analytic.emplace_back(it.key(), a);
        }
        add_bar(memory, layout + " measured", measured);
        add_bar(memory, layout + " analytic", analytic);
      }
    }
  }
  if (!time.categories.empty()) out.push_back(svg::render_bar_chart(time));
  if (!memory.categories.empty()) out.push_back(svg::render_bar_chart(memory));
  return out;
}

const ReportView kTrainReportView = {"Training (train)", train_html, nullptr, nullptr, nullptr, nullptr};

}  // namespace gcb::bench
