// The `gcbench scan` section of `gcbench report` (its row's view, bench/families.cpp): per run, the verdict counts per
// stage, the ranked culprits with their evidence, a node × node heat map of pair send bandwidth with the culprit links
// outlined and culprit nodes labelled, per-node bars of each stage's figure (culprits in their own colour) and the
// collective search's steps. Pure functions of result documents: they read the "scan/verdict" results and the
// measurements the scan tagged with "stage".
#pragma once

#include <string>
#include <vector>

#include "reports/html.hpp"
#include "reports/report_data.hpp"

namespace gcb::scan {

// Whether any run holds scan verdicts.
bool has_scan(const std::vector<report::Run>& runs);
std::string scan_section_html(const std::vector<report::Run>& runs);
std::string scan_section_markdown(const std::vector<report::Run>& runs);

// "Cluster scan (scan)": the above in both reports (verdicts and culprits, not a row per verdict).
extern const report::ReportView kScanReportView;

}  // namespace gcb::scan
