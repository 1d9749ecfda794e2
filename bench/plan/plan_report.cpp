// plan's view in the reports (plan_report.hpp): the layout table (reports/html.hpp) of the
// predictions and plan --verify's own table.
#include "bench/plan/plan_report.hpp"

#include <fmt/format.h>

#include "reports/escape.hpp"
#include "reports/render.hpp"

namespace gcb::bench {

using namespace report;

namespace {

using gcb::xml_escape;

// plan --verify: each layout's predicted and measured step time, the error and the verdict.
std::string verify_table(const std::vector<Run>& runs, const std::string& family) {
  auto rows = family_rows(runs, family);
  std::erase_if(rows, [](const Row& r) { return r.key.rfind("plan/verify/", 0) != 0; });
  if (rows.empty()) return "";
  std::string out =
      "<p class=\"note\">plan --verify: the predicted step time against the training library's measured one on "
      "this machine (error = predicted / measured − 1).</p>\n<table>\n<tr><th>layout</th>";
  for (const auto& run : runs) {
    const std::string tag = runs.size() > 1 ? " · " + xml_escape(run.label) : "";
    out += fmt::format("<th>predicted{0}</th><th>measured{0}</th><th>error{0}</th><th>verdict{0}</th>", tag);
  }
  out += "</tr>\n";
  for (const auto& row : rows) {
    out += fmt::format("<tr><td>{}</td>", xml_escape(row.key.substr(12)));
    for (size_t i = 0; i < runs.size(); ++i) {
      const Result* r = row.per_run[i];
      const auto predicted = metric_of(r, "step_time_predicted"), measured = metric_of(r, "step_time_measured"),
                 error = metric_of(r, "error");
      out += fmt::format("<td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td>{}</td>",
                         predicted ? format_seconds(*predicted) : "—", measured ? format_seconds(*measured) : "—",
                         error ? fmt::format("{:+.1f} %", *error) : "—",
                         r ? xml_escape(std::string(status_name(r->status))) : "—");
    }
    out += "</tr>\n";
  }
  return out + "</table>\n";
}

std::string plan_html(const std::vector<Run>& runs, const std::string& family) {
  auto rows = family_rows(runs, family);
  // plan --verify's rows compare a prediction with a measurement: their own table (verify_table).
  std::erase_if(rows, [](const Row& r) { return r.key.starts_with("plan/verify/"); });
  return "<p class=\"note\">Predicted, not measured: step time, tokens/s and MFU of each layout "
         "(docs/readme-plan.md); WAIVED rows did not fit in memory.</p>\n" +
         layout_table(runs, rows) + verify_table(runs, family);
}

}  // namespace

const ReportView kPlanReportView = {"Planner predictions (plan)", plan_html, nullptr, nullptr, nullptr, nullptr};

}  // namespace gcb::bench
