// `gcbench p2p`'s view in `gcbench report`: a src × dst bandwidth heat map per case and run, and
// the side-by-side table. Reached through p2p's row of the family table (bench/families.cpp).
#pragma once

#include <string>
#include <vector>

#include "reports/html.hpp"

namespace gcb::bench {

std::vector<std::string> p2p_heatmaps(const std::vector<report::Run>& runs);
extern const report::ReportView kP2pReportView;

}  // namespace gcb::bench
