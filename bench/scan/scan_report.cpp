// The scan section of `gcbench report` (scan_report.hpp): verdict counts per stage, the ranked culprits, the pair
// bandwidth heat map, per-node stage bars and the collective search's steps.
#include "bench/scan/scan_report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "core/stats.hpp"
#include "reports/escape.hpp"
#include "reports/render.hpp"
#include "reports/svg_chart.hpp"

namespace gcb::scan {

using namespace report;

namespace {

std::string str(const nlohmann::json& p, const char* k) {
  if (!p.contains(k)) return {};
  return p.at(k).is_string() ? p.at(k).get<std::string>() : p.at(k).dump();
}

struct Verdict {
  std::string stage, kind, node, peer, subject, figure, verdict, evidence;
  int rank = 0;  // culprit rank, 0 = not listed
};

std::vector<Verdict> verdicts_of(const ResultDocument& doc) {
  std::vector<Verdict> out;
  for (const auto& r : doc.results) {
    if (r.key != "scan/verdict") continue;
    Verdict v{str(r.params, "stage"),         str(r.params, "kind"),         str(r.params, "node"),
              str(r.params, "peer"),          str(r.params, "subject"),      str(r.params, "figure"),
              r.extra.value("verdict", "OK"), r.extra.value("evidence", ""), r.extra.value("culprit_rank", 0)};
    out.push_back(std::move(v));
  }
  return out;
}

// Stages the scan did not run, with the reason ("scan/skipped" results).
std::vector<std::pair<std::string, std::string>> skipped_of(const ResultDocument& doc) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& r : doc.results)
    if (r.key == "scan/skipped") {
      std::string why = r.reason;
      if (why.rfind("skipped: ", 0) == 0) why = why.substr(9);
      out.emplace_back(str(r.params, "stage"), why);
    }
  return out;
}

bool culprit_node(const std::vector<Verdict>& vs, const std::string& stage, const std::string& node) {
  return std::any_of(vs.begin(), vs.end(), [&](const Verdict& v) {
    return v.stage == stage && (v.kind == "node" || v.kind == "gpu") && v.node == node && v.verdict != "OK";
  });
}

// The figure a scan judged: bandwidth_median, tflops, latency, busbw or step_time.
const Metric* judged(const Result& r) {
  for (const char* name : {"bandwidth_median", "tflops", "latency", "busbw", "step_time"})
    if (const Metric* m = r.metric(name); m && m->value) return m;
  return nullptr;
}

std::vector<std::string> stages_in_order(const std::vector<Verdict>& vs) {
  std::vector<std::string> out;
  for (const auto& v : vs)
    if (std::find(out.begin(), out.end(), v.stage) == out.end()) out.push_back(v.stage);
  return out;
}

std::string counts_html(const std::vector<Verdict>& vs) {
  std::string out = "<table>\n<tr><th>stage</th><th>OK</th><th>SLOW</th><th>FAIL</th><th>MISSING</th></tr>\n";
  for (const auto& stage : stages_in_order(vs)) {
    std::map<std::string, int> n;
    for (const auto& v : vs)
      if (v.stage == stage && (v.kind == "node" || v.kind == "job")) ++n[v.verdict];
    out += fmt::format(
        "<tr><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>"
        "<td class=\"num\">{}</td></tr>\n",
        xml_escape(stage), n["OK"], n["SLOW"], n["FAIL"], n["MISSING"]);
  }
  return out + "</table>\n";
}

std::vector<const Verdict*> ranked(const std::vector<Verdict>& vs) {
  std::vector<const Verdict*> out;
  for (const auto& v : vs)
    if (v.rank > 0) out.push_back(&v);
  std::sort(out.begin(), out.end(), [](const Verdict* a, const Verdict* b) { return a->rank < b->rank; });
  return out;
}

std::string culprits_html(const std::vector<Verdict>& vs) {
  const auto list = ranked(vs);
  if (list.empty()) return "<p>No culprit: every node, GPU and link is OK.</p>\n";
  std::string out = "<table>\n<tr><th>#</th><th>verdict</th><th>stage</th><th>subject</th><th>evidence</th></tr>\n";
  for (const Verdict* v : list)
    out += fmt::format(
        "<tr><td class=\"num\">{}</td><td class=\"status\">{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n", v->rank,
        xml_escape(v->verdict), xml_escape(v->stage), xml_escape(v->subject), xml_escape(v->evidence));
  return out + "</table>\n";
}

// Node × node send bandwidth: the best measurement of each directional pair over rails and
// confirmations; culprit links outlined, culprit nodes labelled.
std::string pair_heatmap(const Run& run, const std::vector<Verdict>& vs) {
  std::vector<std::string> nodes;
  std::map<std::pair<std::string, std::string>, double> best;
  std::string unit;
  for (const auto& r : run.doc.results) {
    if (r.key != "p2p/bandwidth" || str(r.params, "stage") != "pairs" || r.status != Status::pass) continue;
    const Metric* m = judged(r);
    if (!m) continue;
    const std::string s = str(r.params, "src_node"), d = str(r.params, "dst_node");
    for (const auto& n : {s, d})
      if (std::find(nodes.begin(), nodes.end(), n) == nodes.end()) nodes.push_back(n);
    auto& b = best[{s, d}];
    b = std::max(b, *m->value);
    unit = m->unit;
  }
  if (nodes.empty()) return "";
  std::sort(nodes.begin(), nodes.end());
  svg::Heatmap h;
  h.title = "pair send bandwidth (" + run.label + ")";
  h.row_label = "sender";
  h.col_label = "receiver";
  h.unit = unit;
  auto label = [&](const std::string& n) { return culprit_node(vs, "pairs", n) ? n + " (!)" : n; };
  for (const auto& n : nodes) {
    h.rows.push_back(label(n));
    h.cols.push_back(label(n));
  }
  h.values.assign(nodes.size(), std::vector<std::optional<double>>(nodes.size()));
  h.marked.assign(nodes.size(), std::vector<bool>(nodes.size(), false));
  for (const auto& [sd, v] : best) {
    const auto i = static_cast<size_t>(std::find(nodes.begin(), nodes.end(), sd.first) - nodes.begin());
    const auto j = static_cast<size_t>(std::find(nodes.begin(), nodes.end(), sd.second) - nodes.begin());
    h.values[i][j] = v;
  }
  for (const auto& v : vs)
    if (v.stage == "pairs" && v.kind == "link" && v.figure == "send bandwidth" && v.verdict != "OK") {
      const auto i = std::find(nodes.begin(), nodes.end(), v.node) - nodes.begin();
      const auto j = std::find(nodes.begin(), nodes.end(), v.peer) - nodes.begin();
      if (i < static_cast<long>(nodes.size()) && j < static_cast<long>(nodes.size()))
        h.marked[static_cast<size_t>(i)][static_cast<size_t>(j)] = true;
    }
  return svg::render_heatmap(h);
}

// One bar chart per judged figure of a stage: a bar per subject, culprits in their own series.
std::vector<std::string> stage_bars(const Run& run, const std::vector<Verdict>& vs) {
  struct Chart {
    std::string title, unit, stage;
    std::vector<std::string> subjects;
    std::vector<double> values;
    std::vector<bool> culprit;
  };
  std::vector<Chart> charts;
  auto add = [&](const std::string& title, const std::string& stage, const std::string& unit,
                 const std::string& subject, double value, bool culprit) {
    auto c = std::find_if(charts.begin(), charts.end(), [&](const Chart& x) { return x.title == title; });
    if (c == charts.end()) c = charts.insert(charts.end(), Chart{title, unit, stage, {}, {}, {}});
    c->subjects.push_back(subject);
    c->values.push_back(value);
    c->culprit.push_back(culprit);
  };
  std::map<std::string, std::vector<double>> sends;  // node → its links' send bandwidth
  std::string send_unit;
  for (const auto& r : run.doc.results) {
    const std::string stage = str(r.params, "stage");
    const Metric* m = judged(r);
    if (!m || r.status != Status::pass || r.key.rfind("scan/verdict", 0) == 0) continue;
    const std::string node = str(r.params, "node");
    const int gpu = r.params.value("gpu", -1);
    if (stage == "device" || stage == "reference") {
      const std::string subject = gpu >= 0 ? fmt::format("{} GPU{}", node, gpu) : node;
      const bool bad = std::any_of(vs.begin(), vs.end(), [&](const Verdict& v) {
        return v.stage == stage && v.kind == "gpu" && v.subject.rfind(subject, 0) == 0 && v.verdict != "OK";
      });
      const std::string what = stage == "reference" ? "reference step time" : r.key + " " + str(r.params, "dtype");
      add(fmt::format("{}: {} per {}", stage, what, gpu >= 0 ? "GPU" : "node"), stage, m->unit, subject, *m->value,
          bad || culprit_node(vs, stage, node));
    } else if (stage == "pairs" && r.key == "p2p/bandwidth") {
      sends[str(r.params, "src_node")].push_back(*m->value);
      send_unit = m->unit;
    }
  }
  for (const auto& [node, values] : sends)
    add("pairs: median send bandwidth per node", "pairs", send_unit, node, percentile(values, 0.5),
        culprit_node(vs, "pairs", node));
  std::vector<std::string> out;
  for (const auto& c : charts) {
    svg::BarChart b;
    b.title = c.title + " (" + run.label + ")";
    b.categories = c.subjects;
    b.y = {c.title.substr(c.title.find(": ") + 2), c.unit, svg::Scale::linear, svg::TickFormat::number};
    svg::BarSeries ok{"OK", {}}, bad{"culprit", {}};
    for (size_t i = 0; i < c.values.size(); ++i) {
      ok.values.push_back(c.culprit[i] ? std::nullopt : std::optional<double>(c.values[i]));
      bad.values.push_back(c.culprit[i] ? std::optional<double>(c.values[i]) : std::nullopt);
    }
    b.series = {ok, bad};  // grouped: each subject's value is labelled, so a culprit's tiny bar still reads
    out.push_back(svg::render_bar_chart(b));
  }
  return out;
}

// The collective search: each step's groups and bus bandwidths.
std::string search_html(const Run& run) {
  std::map<int, std::vector<std::pair<std::string, double>>> steps;
  for (const auto& r : run.doc.results) {
    if (str(r.params, "stage") != "coll" || r.status != Status::pass) continue;
    const Metric* m = r.metric("busbw");
    if (!m || !m->value) continue;
    steps[r.params.value("search_step", 0)].emplace_back(str(r.params, "op") + " {" + str(r.params, "subset") + "}",
                                                         *m->value);
  }
  if (steps.empty()) return "";
  std::string out = "<table>\n<tr><th>search step</th><th>groups measured at once: busbw (GB/s)</th></tr>\n";
  for (const auto& [step, groups] : steps) {
    std::string text;
    for (const auto& [g, v] : groups) text += fmt::format("{}{} {}", text.empty() ? "" : "; ", g, format_value(v));
    out += fmt::format("<tr><td class=\"num\">{}</td><td>{}</td></tr>\n", step, xml_escape(text));
  }
  return out + "</table>\n";
}

}  // namespace

bool has_scan(const std::vector<Run>& runs) {
  return std::any_of(runs.begin(), runs.end(), [](const Run& r) {
    return std::any_of(r.doc.results.begin(), r.doc.results.end(),
                       [](const Result& x) { return x.key == "scan/verdict"; });
  });
}

std::string scan_section_html(const std::vector<Run>& runs) {
  std::string out;
  for (const auto& run : runs) {
    const auto vs = verdicts_of(run.doc);
    if (vs.empty()) continue;
    out += fmt::format("<h3>Scan of {}</h3>\n", xml_escape(run.label));
    out += counts_html(vs);
    if (const auto sk = skipped_of(run.doc); !sk.empty()) {
      out += "<p class=\"note\">Skipped (no verdict, not OK):</p>\n<ul>\n";
      for (const auto& [stage, why] : sk) out += fmt::format("<li>{}: {}</li>\n", xml_escape(stage), xml_escape(why));
      out += "</ul>\n";
    }
    out +=
        "<p class=\"note\">Culprits, ranked (the rule is printed by <code>gcbench scan</code> and in "
        "docs/readme-scan.md):</p>\n" +
        culprits_html(vs);
    std::vector<std::string> charts;
    if (const std::string h = pair_heatmap(run, vs); !h.empty()) {
      charts.push_back(h);
      out +=
          "<p class=\"note\">Heat map: sender × receiver, the best measurement of each pair; red outline = a "
          "SLOW link, (!) = a culprit node of the pair stage.</p>\n";
    }
    for (auto& b : stage_bars(run, vs)) charts.push_back(std::move(b));
    if (!charts.empty()) {
      out += "<div class=\"charts\">\n";
      for (const auto& c : charts) out += c;
      out += "</div>\n";
    }
    out += search_html(run);
  }
  return out;
}

std::string scan_section_markdown(const std::vector<Run>& runs) {
  std::string out;
  for (const auto& run : runs) {
    const auto vs = verdicts_of(run.doc);
    if (vs.empty()) continue;
    out +=
        fmt::format("\n### Scan of {}\n\n| stage | OK | SLOW | FAIL | MISSING |\n| --- | ---: | ---: | ---: | ---: |\n",
                    markdown_text(run.label));
    for (const auto& stage : stages_in_order(vs)) {
      std::map<std::string, int> n;
      for (const auto& v : vs)
        if (v.stage == stage && (v.kind == "node" || v.kind == "job")) ++n[v.verdict];
      out += fmt::format("| {} | {} | {} | {} | {} |\n", markdown_text(stage), n["OK"], n["SLOW"], n["FAIL"],
                         n["MISSING"]);
    }
    for (const auto& [stage, why] : skipped_of(run.doc))
      out += fmt::format("| {} | skipped: {} | | | |\n", markdown_text(stage), markdown_text(why));
    const auto list = ranked(vs);
    if (list.empty()) {
      out += "\nNo culprit: every node, GPU and link is OK.\n";
      continue;
    }
    out += "\n| # | verdict | stage | subject | evidence |\n| ---: | --- | --- | --- | --- |\n";
    for (const Verdict* v : list)
      out += fmt::format("| {} | {} | {} | {} | {} |\n", v->rank, markdown_text(v->verdict), markdown_text(v->stage),
                         markdown_text(v->subject), markdown_text(v->evidence));
  }
  return out;
}

const ReportView kScanReportView = {
    "Cluster scan (scan)",
    [](const std::vector<Run>& runs, const std::string&) { return scan_section_html(runs); },
    scan_section_markdown,
    nullptr,
    nullptr,
    nullptr};

}  // namespace gcb::scan
