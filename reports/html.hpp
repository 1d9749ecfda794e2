// The HTML report: one self-contained file (inline CSS, inline SVG charts, no JavaScript, no
// network) with an environment diff, a section per result family and a roofline, comparing
// several runs side by side with ratios to the first (the baseline).
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "reports/report_data.hpp"

namespace gcb::report {

struct HtmlOptions {
  std::string title = "gcbench report";
};

// A result family with a view of its own in the reports: its section title, its HTML (charts and
// tables) and, where the Markdown summary differs from the side-by-side table, its Markdown.
// Families without a row get "Family NAME" and the side-by-side table in both. Adding a family's
// own view is its renderers and one row (html.cpp kSections); tests read the rows from here.
struct ReportSection {
  const char* family;
  const char* title;
  std::string (*html)(const std::vector<Run>& runs, const std::string& family);
  std::string (*markdown)(const std::vector<Run>& runs);  // nullptr: the side-by-side table
};
std::span<const ReportSection> report_sections();
const ReportSection* report_section(std::string_view family);  // nullptr: no view of its own

// `runs` must not be empty; runs[0] is the baseline of every ratio.
std::string render_html(const std::vector<Run>& runs, const HtmlOptions& options = {});

}  // namespace gcb::report
