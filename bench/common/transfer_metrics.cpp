// The bandwidth and latency metrics of a timed transfer (transfer_metrics.hpp), shared by the mem and p2p families.
#include "bench/common/transfer_metrics.hpp"

namespace gcb::bench {

std::vector<Metric> bandwidth_metrics(double bytes, const Statistics& s, std::optional<double> peak_gbps,
                                      const std::string& peak_source) {
  auto gbps = [&](double seconds) -> std::optional<double> {
    if (!(seconds > 0)) return std::nullopt;
    return bytes / seconds / 1e9;
  };
  Metric max{"bandwidth", gbps(s.min), "GB/s", true, peak_gbps, peak_source};
  Metric median{"bandwidth_median", gbps(s.median), "GB/s", true, peak_gbps, peak_source};
  return {max, median};
}

std::vector<Metric> latency_metrics(const Statistics& s, uint64_t loads) {
  const double n = static_cast<double>(loads);
  Metric median{"latency", s.count ? std::optional<double>(s.median / n * 1e9) : std::nullopt, "ns", false, {}, {}};
  Metric min{"latency_min", s.count ? std::optional<double>(s.min / n * 1e9) : std::nullopt, "ns", false, {}, {}};
  return {median, min};
}

}  // namespace gcb::bench
