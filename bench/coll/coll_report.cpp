// coll's view in the reports (coll_report.hpp): its charts from the generic chart machinery
// (reports/report_charts.hpp) and its side-by-side table.
#include "bench/coll/coll_report.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <functional>

#include "bench/coll/coll_table.hpp"
#include "reports/report_charts.hpp"

namespace gcb::bench {

using namespace report;

namespace {

// Every coll result sweeps params "bytes" (and "count"): the table shows the largest size.
std::vector<Row> coll_rows(const std::vector<Run>& runs, const std::string& family) {
  return family_rows(runs, family, [](const Result&) { return true; });
}

std::string coll_html(const std::vector<Run>& runs, const std::string& family) {
  return charts_block(coll_charts(runs)) + "<p class=\"note\">Largest size of each series:</p>\n" +
         compare_table(runs, coll_rows(runs, family), true);
}

}  // namespace

std::vector<std::string> coll_charts(const std::vector<Run>& runs) {
  std::vector<std::string> out;
  const auto is_coll = [](const Result& r) { return r.family() == "coll" && !r.key.ends_with("/fit"); };
  const auto op_of = [](const Result& r) {
    return r.params.contains("op") && r.params.at("op").is_string() ? r.params.at("op").get<std::string>()
                                                                    : r.key.substr(5);
  };
  std::vector<std::string> ops;
  for (const auto& run : runs)
    for (const auto& r : run.doc.results)
      if (is_coll(r) && std::find(ops.begin(), ops.end(), op_of(r)) == ops.end()) ops.push_back(op_of(r));
  for (const auto& op : ops) {
    const auto keep = [&](const Result& r) { return is_coll(r) && op_of(r) == op; };
    // algbw = S/t with S the swept message size (nccl-tests), so the fit curve needs no scale;
    // busbw = algbw × the op's factor, read back from the results themselves.
    const auto one = [](const Result&) { return 1.0; };
    const auto bus_factor = [](const Result& r) {
      const auto a = metric_value(r, "algbw"), b = metric_value(r, "busbw");
      return a && b && *a > 0 ? *b / *a : 1.0;
    };
    for (const auto& [metric, factor] :
         {std::make_pair(std::string("algbw"), std::function<double(const Result&)>(one)),
          std::make_pair(std::string("busbw"), std::function<double(const Result&)>(bus_factor))}) {
      auto chart =
          size_chart(runs, fmt::format("{}: {} vs size", op, metric), metric, keep, {"bytes", "count"}, metric, factor);
      if (!chart.empty()) out.push_back(std::move(chart));
    }
  }
  return out;
}

const ReportView kCollReportView = {"Collectives (coll)",
                                    coll_html,
                                    nullptr,
                                    coll_rows,
                                    [](const std::vector<Result>& results) { return render_coll_table(results); },
                                    "the nccl-tests tables of the coll results"};

}  // namespace gcb::bench
