// p2p's view in the reports (p2p_report.hpp): its heat maps (reports/svg_chart.hpp) and its
// side-by-side table.
#include "bench/p2p/p2p_report.hpp"

#include <algorithm>
#include <tuple>

#include "reports/svg_chart.hpp"

namespace gcb::bench {

using namespace report;

namespace {

std::string p2p_html(const std::vector<Run>& runs, const std::string& family) {
  return charts_block(p2p_heatmaps(runs)) + compare_table(runs, family_rows(runs, family), true);
}

}  // namespace

std::vector<std::string> p2p_heatmaps(const std::vector<Run>& runs) {
  std::vector<std::string> out;
  for (size_t i = 0; i < runs.size(); ++i) {
    struct Group {
      std::string title, unit;
      std::vector<nlohmann::json> src, dst;
      std::vector<std::tuple<nlohmann::json, nlohmann::json, double>> cells;
    };
    std::vector<Group> groups;
    for (const auto& r : runs[i].doc.results) {
      if (r.family() != "p2p" || !r.params.contains("src") || !r.params.contains("dst")) continue;
      const Metric* m = r.metric("bandwidth");
      if (!m || !m->value || r.status != Status::pass) continue;
      const std::string rest = params_without(r.params, {"src", "dst"});
      const std::string title =
          r.key + (rest.empty() ? "" : " " + rest) + (runs.size() > 1 ? " (" + runs[i].label + ")" : "");
      auto g = std::find_if(groups.begin(), groups.end(), [&](const Group& x) { return x.title == title; });
      if (g == groups.end()) g = groups.insert(groups.end(), Group{title, m->unit, {}, {}, {}});
      g->src.push_back(r.params.at("src"));
      g->dst.push_back(r.params.at("dst"));
      g->cells.emplace_back(r.params.at("src"), r.params.at("dst"), *m->value);
    }
    for (auto& g : groups) {
      for (auto* v : {&g.src, &g.dst}) {
        std::sort(v->begin(), v->end());
        v->erase(std::unique(v->begin(), v->end()), v->end());
      }
      svg::Heatmap h;
      h.title = g.title;
      h.unit = g.unit;
      auto text = [](const nlohmann::json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); };
      for (const auto& s : g.src) h.rows.push_back(text(s));
      for (const auto& d : g.dst) h.cols.push_back(text(d));
      h.values.assign(g.src.size(), std::vector<std::optional<double>>(g.dst.size()));
      for (const auto& [s, d, v] : g.cells) {
        const auto si = static_cast<size_t>(std::find(g.src.begin(), g.src.end(), s) - g.src.begin());
        const auto di = static_cast<size_t>(std::find(g.dst.begin(), g.dst.end(), d) - g.dst.begin());
        h.values[si][di] = v;
      }
      out.push_back(svg::render_heatmap(h));
    }
  }
  return out;
}

const ReportView kP2pReportView = {"Point-to-point (p2p)", p2p_html, nullptr, nullptr, nullptr, nullptr};

}  // namespace gcb::bench
