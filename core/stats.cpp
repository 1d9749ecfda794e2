// stats.hpp's summary statistics: R-7 percentiles (percentile, sorted_percentile), relative_stddev and summarize.
#include "core/stats.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "core/error.hpp"

namespace gcb {

namespace {
double sorted_percentile(const std::vector<double>& sorted, double q) {
  const double pos = q * static_cast<double>(sorted.size() - 1);
  const auto lo = static_cast<size_t>(std::floor(pos));
  const size_t hi = std::min(lo + 1, sorted.size() - 1);
  const double frac = pos - static_cast<double>(lo);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * frac;
}
}  // namespace

double percentile(std::span<const double> samples, double q) {
  GCB_CHECK(!samples.empty(), "percentile of no samples");
  GCB_CHECK(q >= 0.0 && q <= 1.0, "percentile outside [0, 1]");
  std::vector<double> sorted(samples.begin(), samples.end());
  std::sort(sorted.begin(), sorted.end());
  return sorted_percentile(sorted, q);
}

double relative_stddev(std::span<const double> samples) {
  if (samples.size() < 2) return 0.0;
  const double n = static_cast<double>(samples.size());
  const double mean = std::accumulate(samples.begin(), samples.end(), 0.0) / n;
  double ss = 0.0;
  for (double x : samples) ss += (x - mean) * (x - mean);
  const double sd = std::sqrt(ss / (n - 1.0));
  return mean != 0.0 ? sd / std::fabs(mean) : 0.0;
}

Statistics summarize(std::span<const double> samples) {
  Statistics s;
  s.count = samples.size();
  if (samples.empty()) return s;
  std::vector<double> sorted(samples.begin(), samples.end());
  std::sort(sorted.begin(), sorted.end());
  const double n = static_cast<double>(sorted.size());
  s.min = sorted.front();
  s.max = sorted.back();
  s.mean = std::accumulate(sorted.begin(), sorted.end(), 0.0) / n;
  s.median = sorted_percentile(sorted, 0.5);
  s.p5 = sorted_percentile(sorted, 0.05);
  s.p95 = sorted_percentile(sorted, 0.95);
  if (sorted.size() >= 2) {
    double ss = 0.0;
    for (double x : sorted) ss += (x - s.mean) * (x - s.mean);
    s.stddev = std::sqrt(ss / (n - 1.0));
  }
  s.cv = s.mean != 0.0 ? s.stddev / std::fabs(s.mean) : 0.0;
  return s;
}

}  // namespace gcb
