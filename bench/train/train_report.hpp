// `gcbench train`'s view in `gcbench report`: the layout table (step time, tokens/s, MFU per
// layout and run) and stacked bars of the step time per phase and the memory per category,
// measured against analytic. Reached through train's row of the family table (bench/families.cpp).
#pragma once

#include <string>
#include <vector>

#include "reports/html.hpp"

namespace gcb::bench {

std::vector<std::string> train_charts(const std::vector<report::Run>& runs);
extern const report::ReportView kTrainReportView;

}  // namespace gcb::bench
