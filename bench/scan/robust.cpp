// The peer rule of `gcbench scan` (robust.hpp): group_stats (median and MAD of ln x), a figure's deviation,
// slow_against_peers, slow_against_expected and the text that states them.
#include "bench/scan/robust.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/error.hpp"
#include "core/stats.hpp"

namespace gcb::scan {

void validate(const RobustRule& r) {
  if (!(r.mad_threshold > 0)) throw UsageError("--mad-threshold must be > 0");
  if (!(r.tolerance >= 0 && r.tolerance < 1)) throw UsageError("--tolerance must be in [0, 1)");
  if (!(r.min_percent_of_expected >= 0 && r.min_percent_of_expected <= 100))
    throw UsageError("--min-percent-of-expected must be in [0, 100]");
  if (r.min_peers < 3) throw UsageError("the peer rule needs at least 3 peers");
}

GroupStats group_stats(std::span<const double> values) {
  GroupStats g;
  g.n = values.size();
  if (values.empty()) return g;
  g.median = percentile(values, 0.5);
  std::vector<double> logs;
  for (double v : values)
    if (v > 0) logs.push_back(std::log(v));
  if (logs.empty()) return g;
  g.log_median = percentile(logs, 0.5);
  std::vector<double> dev;
  dev.reserve(logs.size());
  for (double y : logs) dev.push_back(std::fabs(y - g.log_median));
  g.log_mad = percentile(dev, 0.5);
  g.sigma = kMadToSigma * g.log_mad;
  return g;
}

Deviation deviation(double value, bool higher_is_better, const GroupStats& g) {
  Deviation d;
  if (higher_is_better)
    d.shortfall = g.median > 0 ? 1 - value / g.median : 0;
  else
    d.shortfall = value > 0 ? 1 - g.median / value : 1;
  if (value <= 0) {  // nothing got through: worse than any spread for a bandwidth
    d.worse_than_all_spread = higher_is_better;
    return d;
  }
  const double worse_by = higher_is_better ? g.log_median - std::log(value) : std::log(value) - g.log_median;
  if (g.sigma > 0)
    d.sigmas = worse_by / g.sigma;
  else
    d.worse_than_all_spread = worse_by > 0;
  return d;
}

bool slow_against_peers(const Deviation& d, const GroupStats& g, const RobustRule& rule) {
  if (g.n < rule.min_peers) return false;
  const bool unusual = d.sigmas ? *d.sigmas > rule.mad_threshold : d.worse_than_all_spread;
  return unusual && d.shortfall > rule.tolerance;
}

double percent_of_expected(double value, double expected, bool higher_is_better) {
  if (higher_is_better) return expected > 0 ? value / expected * 100 : 0;
  return value > 0 ? expected / value * 100 : 0;
}

bool slow_against_expected(double value, double expected, bool higher_is_better, const RobustRule& rule) {
  if (!(expected > 0)) return false;
  return percent_of_expected(value, expected, higher_is_better) < rule.min_percent_of_expected;
}

std::string describe_sigmas(const Deviation& d, bool higher_is_better) {
  const char* side = higher_is_better ? "below" : "above";
  if (d.sigmas)
    return fmt::format("{:.1f} MAD {}", std::fabs(*d.sigmas),
                       *d.sigmas >= 0 ? side : (higher_is_better ? "above" : "below"));
  return d.worse_than_all_spread ? fmt::format("MAD 0, {} every peer", side) : "MAD 0";
}

}  // namespace gcb::scan
