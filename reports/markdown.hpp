// The Markdown report for PR comments and job summaries: environment diff, status counts and a
// headline-metric table per family with ratios to the baseline, kept under a byte budget
// (GitHub PR comments hold at most 65,536 characters; GitHub's comment limit) by
// showing fewer rows per family when the full table would not fit.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "reports/html.hpp"
#include "reports/report_data.hpp"

namespace gcb::report {

struct MarkdownOptions {
  std::string title = "gcbench report";
  size_t max_bytes = 64000;  // under GitHub's 65,536-character comment limit, with headroom
};

// `runs` must not be empty; runs[0] is the baseline. A family with a section gets its view's
// Markdown or its view's rows (html.hpp). The result is at most max_bytes long.
std::string render_markdown(const std::vector<Run>& runs, std::span<const ReportSection> sections,
                            const MarkdownOptions& options = {});

}  // namespace gcb::report
