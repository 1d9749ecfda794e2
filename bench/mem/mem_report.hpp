// `gcbench mem`'s view in `gcbench report`: bandwidth bars per kernel, copy bandwidth vs size with
// the α–β fit curves, latency vs working set, and the side-by-side table in which each copy sweep
// is its largest size. Reached through mem's row of the family table (bench/families.cpp).
#pragma once

#include <string>
#include <vector>

#include "reports/html.hpp"

namespace gcb::bench {

std::vector<std::string> mem_charts(const std::vector<report::Run>& runs);
extern const report::ReportView kMemReportView;

}  // namespace gcb::bench
