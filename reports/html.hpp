// The HTML report: one self-contained file (inline CSS, inline SVG charts, no JavaScript, no
// network) with an environment diff, a section per result family and a roofline, comparing
// several runs side by side with ratios to the first (the baseline); and the building blocks a
// family's own view is made of.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "reports/report_data.hpp"

namespace gcb::report {

struct HtmlOptions {
  std::string title = "gcbench report";
};

// A result family's view of its own in the reports: its section title, its HTML (charts and
// tables), its Markdown where that differs from the side-by-side table, the rows of its
// side-by-side table where they are not every result (family_rows), and the console tables its
// command prints where `gcbench report --format NAME-table` prints them again from a document. The views live in the
// families' folders (bench/NAME/NAME_report.cpp) and reach the renderers through the family
// table (bench/common/family.hpp); reports/ names no family.
struct ReportView {
  const char* title;
  std::string (*html)(const std::vector<Run>& runs, const std::string& family);
  std::string (*markdown)(const std::vector<Run>& runs);                              // nullptr: the side-by-side table
  std::vector<Row> (*rows)(const std::vector<Run>& runs, const std::string& family);  // nullptr: family_rows
  std::string (*tables)(const std::vector<Result>& results);                          // nullptr: no --format NAME-table
  const char* tables_help;  // what `tables` prints, for --help: "the nccl-tests tables of the coll results"
};
// The view of one family. Families without a section get "Family NAME" and the side-by-side
// table of family_rows in both reports.
struct ReportSection {
  const char* family;
  const ReportView* view;
};
const ReportSection* find_section(std::span<const ReportSection> sections, std::string_view family);
// The rows of a family's side-by-side table: its view's, or family_rows.
std::vector<Row> section_rows(const std::vector<Run>& runs, const std::string& family, const ReportSection* section);

// `runs` must not be empty; runs[0] is the baseline of every ratio.
std::string render_html(const std::vector<Run>& runs, std::span<const ReportSection> sections,
                        const HtmlOptions& options = {});

// Building blocks of a family's view.
// Side-by-side table: a note naming what each headline is, then case, params, the headline value
// of each run (with % of peak when `show_peak`) and the ratio of each run to run 0.
std::string compare_table(const std::vector<Run>& runs, const std::vector<Row>& rows, bool show_peak);
// The charts (finished <svg> strings) in one wrapping row; "" when there are none.
std::string charts_block(const std::vector<std::string>& charts);
// Layout comparison of training results, measured or predicted: step time, tokens/s and MFU of each
// layout (params.layout, else the key) in each run; a layout no run could take (WAIVED in all)
// greyed with its reason.
std::string layout_table(const std::vector<Run>& runs, const std::vector<Row>& rows);
// The value of the named metric of a result; nullopt when either is absent.
std::optional<double> metric_of(const Result* r, const char* name);

}  // namespace gcb::report
