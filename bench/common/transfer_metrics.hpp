// The metrics of a timed transfer, shared by every family that moves bytes (mem, p2p): bandwidth
// from bytes and per-launch times, latency from per-launch times and the loads or round trips in
// one launch.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/stats.hpp"
#include "reports/result.hpp"

namespace gcb::bench {

// "bandwidth" = bytes / minimum time (max bandwidth, BabelStream's convention) and
// "bandwidth_median" = bytes / median time, GB/s (1e9 B/s), higher is better; with % of peak.
std::vector<Metric> bandwidth_metrics(double bytes, const Statistics& seconds, std::optional<double> peak_gbps,
                                      const std::string& peak_source);
// "latency" = median time / loads and "latency_min", in ns; lower is better.
std::vector<Metric> latency_metrics(const Statistics& seconds, uint64_t loads);

}  // namespace gcb::bench
