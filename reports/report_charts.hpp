// The charts of the HTML report, built from result documents by the conventions in
// docs/readme-report.md: memory bandwidth bars, copy bandwidth vs size with α–β fit curves,
// latency vs working set, collective algbw/busbw vs size, p2p src × dst heatmaps, training time
// and memory splits, and the roofline. Each function returns finished <svg> strings.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "reports/report_data.hpp"

namespace gcb::report {

// Bandwidth (in the unit of the measured points) predicted by t(n) = α + n/β at sizes
// log-spaced over [lo, hi]: y = scale · n / t(n) / 1e9 (GB/s). `scale` converts the swept
// size n into the bytes the bandwidth metric counts (e.g. 2 for a copy counting read + written).
std::vector<std::pair<double, double>> fit_bandwidth_curve(double alpha_s, double beta_bytes_per_s, double scale,
                                                           double lo, double hi, int points = 33);

std::vector<std::string> memory_charts(const std::vector<Run>& runs);
std::vector<std::string> coll_charts(const std::vector<Run>& runs);
std::vector<std::string> p2p_heatmaps(const std::vector<Run>& runs);
std::vector<std::string> train_charts(const std::vector<Run>& runs);
// One roofline per run whose first GPU has a known SKU (reports/specs.hpp) and that holds
// results with model flops > 0 and bytes > 0 measured on a GPU.
std::vector<std::string> roofline_charts(const std::vector<Run>& runs);

}  // namespace gcb::report
