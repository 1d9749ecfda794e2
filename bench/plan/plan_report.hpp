// `gcbench plan`'s view in `gcbench report`: the predicted layout table (step time, tokens/s,
// MFU per layout and run) and plan --verify's predicted-against-measured table. Reached through
// plan's row of the family table (bench/families.cpp).
#pragma once

#include "reports/html.hpp"

namespace gcb::bench {

extern const report::ReportView kPlanReportView;

}  // namespace gcb::bench
