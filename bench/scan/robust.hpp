// The peer rule of `gcbench scan`: every figure is compared with the same figure of its peers
// (same SKU, same link type) by the median and the median absolute deviation, and, where the
// spec table or the topology gives one, with its expected value. One rule, stated once:
//
//   on y = ln(x): m = median(y), σ̂ = 1.4826 · MAD(y)   (1.4826·MAD estimates σ for normal data;
//                                                         Rousseeuw & Croux 1993, §1)
//   d = (m − ln x) / σ̂ for higher-is-better figures, (ln x − m) / σ̂ for lower-is-better ones
//   SLOW  ⇔  group ≥ min_peers  ∧  d > mad_threshold  ∧  relative shortfall > tolerance
//         ∨  x < min_percent_of_expected % of the expected value
//
// Logarithms because bandwidths, rates and times vary by factors, not by amounts: a link at 1 %
// of its peers is as far below them as their spread is wide, never further than 100 % on a
// linear scale, so a noisy fleet would hide it; on a log scale it is ln(100) below. For a tight
// fleet (spread of a few %) the log and linear rules agree. mad_threshold 3.5 is Iglewicz &
// Hoaglin's cut-off for the modified z-score 0.6745·(y − m)/MAD ("How to Detect and Handle
// Outliers", 1993, §3.3). The relative floor keeps a very tight fleet (MAD of 0.1 %) from
// calling a 1 % difference SLOW: a figure must be both unusual for the fleet and far enough below
// it to matter.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string>

namespace gcb::scan {

struct RobustRule {
  double mad_threshold = 3.5;           // Iglewicz & Hoaglin 1993, modified z-score > 3.5
  double tolerance = 0.10;              // relative shortfall against the median that matters
  double min_percent_of_expected = 50;  // below this % of the spec/topology value: SLOW
  size_t min_peers = 3;                 // a median of two values is their mean: no outlier test
};
// gcb::UsageError for values that make the rule meaningless.
void validate(const RobustRule& rule);

// 1.4826 = 1 / Φ⁻¹(3/4): MAD · 1.4826 estimates σ for normal data.
inline constexpr double kMadToSigma = 1.4826;

// Statistics of a peer group. Values ≤ 0 (nothing measured) join the median but not the logs.
struct GroupStats {
  size_t n = 0;
  double median = 0;      // of the values, for display
  double log_median = 0;  // median of ln(values)
  double log_mad = 0;     // median of |ln(value) − log_median|
  double sigma = 0;       // kMadToSigma · log_mad
};
GroupStats group_stats(std::span<const double> values);

// How far one value is from its group, in the figure's bad direction.
struct Deviation {
  double shortfall = 0;          // 1 − x/median (higher is better) or 1 − median/x (lower is better); < 0 = better
  std::optional<double> sigmas;  // d of the rule, signed toward "worse"; nullopt when σ̂ = 0 or x ≤ 0
  bool worse_than_all_spread = false;  // σ̂ = 0 (or x ≤ 0) and x worse than the median
};
Deviation deviation(double value, bool higher_is_better, const GroupStats& g);

// The peer half of the rule.
bool slow_against_peers(const Deviation& d, const GroupStats& g, const RobustRule& rule);
// The spec half: value / expected · 100 < min_percent_of_expected (expected > 0).
bool slow_against_expected(double value, double expected, bool higher_is_better, const RobustRule& rule);
// value / expected · 100, or for lower-is-better figures expected / value · 100.
double percent_of_expected(double value, double expected, bool higher_is_better);

// "8.1 MAD below" / "MAD 0, below every peer" — the words the console and the JSON share.
std::string describe_sigmas(const Deviation& d, bool higher_is_better);

}  // namespace gcb::scan
