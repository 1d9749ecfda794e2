// The `gcbench scan` section of `gcbench report`: per run, the verdict counts per stage, the
// ranked culprits with their evidence, a node × node heat map of pair send bandwidth with the
// culprit links outlined and culprit nodes labelled, per-node bars of each stage's figure (culprits
// in their own colour) and the collective search's steps. Pure functions of result documents:
// they read the "scan/verdict" results and the measurements the scan tagged with "stage".
#pragma once

#include <string>
#include <vector>

#include "reports/report_data.hpp"

namespace gcb::report {

// Whether any run holds scan verdicts.
bool has_scan(const std::vector<Run>& runs);
std::string scan_section_html(const std::vector<Run>& runs);
std::string scan_section_markdown(const std::vector<Run>& runs);

}  // namespace gcb::report
