// The HTML report: one self-contained file (inline CSS, inline SVG charts, no JavaScript, no
// network) with an environment diff, a section per result family and a roofline, comparing
// several runs side by side with ratios to the first (the baseline).
#pragma once

#include <string>
#include <vector>

#include "reports/report_data.hpp"

namespace gcb::report {

struct HtmlOptions {
  std::string title = "gcbench report";
};

// `runs` must not be empty; runs[0] is the baseline of every ratio.
std::string render_html(const std::vector<Run>& runs, const HtmlOptions& options = {});

}  // namespace gcb::report
