// render_html (html.hpp): the self-contained HTML report — inline CSS, the runs table, environment diff, a section per
// family (its view, else its side-by-side table) and the roofline; and the building blocks of the families' views.
#include "reports/html.hpp"

#include "reports/escape.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/error.hpp"
#include "reports/render.hpp"
#include "reports/report_charts.hpp"
#include "reports/svg_chart.hpp"

namespace gcb::report {

namespace {

using gcb::xml_escape;

// A ratio further than this from 1 is coloured as better or worse (display only; `gcbench
// compare` owns regression verdicts).
constexpr double kRatioHighlight = 0.05;

constexpr const char* kCss = R"(
body { font-family: Helvetica, Arial, sans-serif; margin: 24px; color: #222; max-width: 1400px; }
h1 { font-size: 22px; margin-bottom: 4px; }
h2 { font-size: 18px; border-bottom: 2px solid #4e79a7; padding-bottom: 3px; margin-top: 32px; }
h3 { font-size: 15px; margin-top: 20px; }
table { border-collapse: collapse; margin: 8px 0 16px 0; font-size: 12px; }
th, td { border: 1px solid #ccc; padding: 3px 7px; text-align: left; vertical-align: top; }
th { background: #eef2f7; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
td.better { background: #dff0d8; }
td.worse { background: #f8d7da; }
td.status { color: #a94442; }
.warn { background: #fff3cd; border: 1px solid #e0c060; padding: 8px 12px; margin: 12px 0; }
.note { color: #666; font-size: 12px; }
.charts { display: flex; flex-wrap: wrap; gap: 16px; }
.charts svg { border: 1px solid #ddd; }
tr.nofit td { color: #999; background: #f6f6f6; font-style: italic; }
)";

std::string value_cell(const Result* r, bool show_peak) {
  if (!r) return "<td class=\"num\">—</td>";
  if (r->status != Status::pass && r->status != Status::fail)
    return fmt::format("<td class=\"status\" title=\"{}\">{}</td>", xml_escape(r->reason), status_name(r->status));
  const Metric* m = headline(r);
  if (!m) return "<td class=\"num\">null</td>";
  std::string text = fmt::format("{} {}", format_value(*m->value), m->unit);
  if (show_peak)
    if (const auto p = m->percent_of_peak()) text += fmt::format(" ({}%)", fixed_text(*p, 1));
  if (r->status == Status::fail) text += " FAIL";
  if (r->throttled) text += "*";
  return fmt::format("<td class=\"num\">{}</td>", xml_escape(text));
}

std::string ratio_cell(const Row& row, size_t run) {
  const auto q = ratio_to_baseline(row, run);
  if (!q) return "<td class=\"num\">—</td>";
  const bool higher_better = headline(row.per_run[0])->higher_is_better;
  const char* cls = "";
  if (std::fabs(*q - 1) > kRatioHighlight) cls = ((*q > 1) == higher_better) ? " better" : " worse";
  return fmt::format("<td class=\"num{}\">{}×</td>", cls, fixed_text(*q, 3));
}

// "Values: bandwidth, best sample (mem/host/copy …); latency, median (mem/host/latency)": what each
// headline is, once per distinct label, so a best-sample figure is never read as a median.
std::string headline_note(const std::vector<Row>& rows) {
  std::vector<std::pair<std::string, std::vector<std::string>>> labels;
  for (const auto& row : rows) {
    const std::string label = headline_label(row.first());
    if (label.empty()) continue;
    auto it = std::find_if(labels.begin(), labels.end(), [&](const auto& l) { return l.first == label; });
    if (it == labels.end()) it = labels.insert(labels.end(), {label, {}});
    if (std::find(it->second.begin(), it->second.end(), row.key) == it->second.end()) it->second.push_back(row.key);
  }
  if (labels.empty()) return "";
  std::string text;
  for (const auto& [label, keys] : labels) {
    const std::string cases = keys.size() > 3 ? fmt::format("{}, {} … ({} cases)", keys[0], keys[1], keys.size())
                                              : fmt::format("{}", fmt::join(keys, ", "));
    text += fmt::format("{}{} ({})", text.empty() ? "" : "; ", label, cases);
  }
  return fmt::format("<p class=\"note\">Values: {}.</p>\n", xml_escape(text));
}

}  // namespace

std::string compare_table(const std::vector<Run>& runs, const std::vector<Row>& rows, bool show_peak) {
  std::string out = headline_note(rows) + "<table>\n<tr><th>case</th><th>params</th>";
  for (const auto& run : runs) out += fmt::format("<th>{}</th>", xml_escape(run.label));
  for (size_t i = 1; i < runs.size(); ++i)
    out += fmt::format("<th>{} / {}</th>", xml_escape(runs[i].label), xml_escape(runs[0].label));
  out += "</tr>\n";
  for (const auto& row : rows) {
    out += fmt::format("<tr><td>{}</td><td>{}</td>", xml_escape(row.key), xml_escape(params_summary(row.params)));
    for (size_t i = 0; i < runs.size(); ++i) out += value_cell(row.per_run[i], show_peak);
    for (size_t i = 1; i < runs.size(); ++i) out += ratio_cell(row, i);
    out += "</tr>\n";
  }
  return out + "</table>\n";
}

std::string charts_block(const std::vector<std::string>& charts) {
  if (charts.empty()) return "";
  std::string out = "<div class=\"charts\">\n";
  for (const auto& c : charts) out += c;
  return out + "</div>\n";
}

namespace {

std::string runs_table(const std::vector<Run>& runs) {
  std::string out =
      "<table>\n<tr><th>run</th><th>host</th><th>date</th><th>GPU</th><th>command</th><th>results</th></tr>\n";
  for (size_t i = 0; i < runs.size(); ++i) {
    const auto& ctx = runs[i].doc.context;
    const auto fields = environment_fields(ctx);
    std::string command, host = "-";
    if (ctx.contains("command_line") && ctx.at("command_line").is_array())
      for (const auto& a : ctx.at("command_line")) {
        if (!command.empty()) command += ' ';
        command += a.is_string() ? a.get<std::string>() : a.dump();
      }
    for (const auto& [k, v] : fields)
      if (k == "host") host = v;
    out += fmt::format("<tr><td>{}{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n",
                       xml_escape(runs[i].label), i == 0 && runs.size() > 1 ? " (baseline)" : "", xml_escape(host),
                       xml_escape(ctx.value("date", std::string("-"))), xml_escape(fields[0].second),
                       xml_escape(command), xml_escape(status_summary(runs[i].doc.results)));
  }
  return out + "</table>\n";
}

std::string environment_section(const std::vector<Run>& runs) {
  std::string out;
  const auto diff = environment_diff(runs);
  if (!diff.empty()) {
    out +=
        "<div class=\"warn\"><b>The runs' environments differ</b> — ratios compare different conditions:\n<table>\n<tr><th>field</th>";
    for (const auto& run : runs) out += fmt::format("<th>{}</th>", xml_escape(run.label));
    out += "</tr>\n";
    for (const auto& f : diff) {
      out += fmt::format("<tr><td>{}</td>", xml_escape(f.name));
      for (const auto& v : f.values) out += fmt::format("<td>{}</td>", xml_escape(v));
      out += "</tr>\n";
    }
    out += "</table></div>\n";
  }
  out += "<h3>Environment of " + xml_escape(runs[0].label) + "</h3>\n<table>\n";
  for (const auto& [k, v] : environment_fields(runs[0].doc.context))
    out += fmt::format("<tr><th>{}</th><td>{}</td></tr>\n", xml_escape(k), xml_escape(v));
  return out + "</table>\n";
}

std::string not_passed_section(const std::vector<Run>& runs) {
  std::string rows;
  for (const auto& run : runs)
    for (const auto& r : run.doc.results)
      if (r.status != Status::pass)
        rows += fmt::format("<tr><td>{}</td><td>{}</td><td>{}</td><td class=\"status\">{}</td><td>{}</td></tr>\n",
                            xml_escape(run.label), xml_escape(r.key), xml_escape(params_summary(r.params)),
                            status_name(r.status), xml_escape(r.reason));
  if (rows.empty()) return "";
  return "<h2>Not passed</h2>\n<table>\n<tr><th>run</th><th>case</th><th>params</th><th>status</th><th>reason</th></tr>\n" +
         rows + "</table>\n";
}

}  // namespace

std::optional<double> metric_of(const Result* r, const char* name) {
  if (!r) return std::nullopt;
  const Metric* m = r->metric(name);
  return m ? m->value : std::nullopt;
}

std::string layout_table(const std::vector<Run>& runs, const std::vector<Row>& rows) {
  static constexpr std::array<std::pair<const char*, const char*>, 3> kCols = {
      {{"step_time", "step time"}, {"tokens_per_s", "tokens/s"}, {"mfu", "MFU"}}};
  std::string out = "<table>\n<tr><th>layout</th><th>params</th>";
  for (const auto& run : runs)
    for (const auto& [metric, title] : kCols)
      out += fmt::format("<th>{}{}</th>", title, runs.size() > 1 ? " · " + xml_escape(run.label) : "");
  out += "</tr>\n";
  for (const auto& row : rows) {
    const std::string layout = row.params.contains("layout") && row.params.at("layout").is_string()
                                   ? row.params.at("layout").get<std::string>()
                                   : row.key;
    // A layout no run could take (WAIVED: it does not fit, or the model refuses it) is drawn as
    // such, greyed with the reason, not as a row of dashes among the ones that ran.
    const Result* refused = nullptr;
    bool all_refused = true;
    for (const Result* r : row.per_run) {
      if (r && r->status == Status::waived)
        refused = refused ? refused : r;
      else if (r)
        all_refused = false;
    }
    const bool nofit = refused && all_refused;
    out += fmt::format("<tr{}><td>{}{}</td><td>{}</td>", nofit ? " class=\"nofit\"" : "", xml_escape(layout),
                       nofit ? " — not run: " + xml_escape(refused->reason) : "",
                       xml_escape(params_without(row.params, {"layout"})));
    for (size_t i = 0; i < runs.size(); ++i) {
      for (const auto& [metric, title] : kCols) {
        const auto v = metric_of(row.per_run[i], metric);
        std::string text = "—";
        if (v && std::string_view(metric) == "step_time")
          text = format_seconds(*v);
        else if (v && std::string_view(metric) == "mfu")
          text = *v <= 1 ? percent_text(*v, 1) : fmt::format("{}%", fixed_text(*v, 1));
        else if (v)
          text = format_value(*v);
        out += fmt::format("<td class=\"num\">{}</td>", xml_escape(text));
      }
    }
    out += "</tr>\n";
  }
  return out + "</table>\n";
}

const ReportSection* find_section(std::span<const ReportSection> sections, std::string_view family) {
  for (const ReportSection& s : sections) {
    GCB_CHECK(s.family && s.view && s.view->title && s.view->html,
              "a report section without its family, title or HTML");
    if (family == s.family) return &s;
  }
  return nullptr;
}

std::vector<Row> section_rows(const std::vector<Run>& runs, const std::string& family, const ReportSection* section) {
  return section && section->view->rows ? section->view->rows(runs, family) : family_rows(runs, family);
}

std::string render_html(const std::vector<Run>& runs, std::span<const ReportSection> sections,
                        const HtmlOptions& options) {
  std::string out = fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n<title>{0}</title>\n<style>{1}</style>\n"
      "</head>\n<body>\n<h1>{0}</h1>\n",
      xml_escape(options.title), kCss);
  out += fmt::format(
      "<p class=\"note\">{} run{}{}. Values are each result's headline metric; % of peak in "
      "parentheses; * = a sample was taken while the GPU reported a slowdown reason.</p>\n",
      runs.size(), runs.size() == 1 ? "" : "s",
      runs.size() > 1 ? fmt::format("; ratios are to the baseline {}", xml_escape(runs[0].label)) : "");
  out += runs_table(runs);
  out += environment_section(runs);
  out += not_passed_section(runs);
  for (const auto& family : families(runs)) {
    const ReportSection* section = find_section(sections, family);
    const std::string title = section ? section->view->title : "Family " + family;
    out += fmt::format("<h2 id=\"{0}\">{1}</h2>\n", xml_escape(family), xml_escape(title));
    out += section ? section->view->html(runs, family) : compare_table(runs, family_rows(runs, family), true);
  }
  const auto roofs = roofline_charts(runs);
  if (!roofs.empty()) {
    out +=
        "<h2 id=\"roofline\">Roofline</h2>\n<p class=\"note\">Measured FLOP/s (model flops / median time) "
        "against min(peak, HBM bandwidth × intensity) from the SKU's spec sheet.</p>\n";
    out += charts_block(roofs);
  }
  return out + "</body>\n</html>\n";
}

}  // namespace gcb::report
