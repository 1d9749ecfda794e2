// `gcbench coll`'s view in `gcbench report`: algbw and busbw vs size per op with the α–β fit
// curves, and the side-by-side table of each sweep's largest size; `gcbench report --format
// coll-table` prints its nccl-tests tables (coll_table.hpp). Reached through coll's row of the
// family table (bench/families.cpp).
#pragma once

#include <string>
#include <vector>

#include "reports/html.hpp"

namespace gcb::bench {

std::vector<std::string> coll_charts(const std::vector<report::Run>& runs);
extern const report::ReportView kCollReportView;

}  // namespace gcb::bench
