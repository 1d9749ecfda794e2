// The statistics behind `gcbench compare`: the Mann–Whitney U test, Holm's step-down correction
// and Student's t distribution (the between-run rule of pooled baselines). All are checked against
// scipy/statsmodels values in tests/reports/test_compare.cpp.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "core/error.hpp"
#include "reports/compare.hpp"

namespace gcb {

UTest mann_whitney_u(std::span<const double> x, std::span<const double> y) {
  GCB_CHECK(!x.empty() && !y.empty(), "Mann-Whitney U needs two non-empty samples");
  const size_t n1 = x.size(), n2 = y.size(), n = n1 + n2;
  // Pool, sort, and give tied values their average rank (1-based).
  std::vector<std::pair<double, bool>> pooled;  // value, from x
  pooled.reserve(n);
  for (double v : x) pooled.emplace_back(v, true);
  for (double v : y) pooled.emplace_back(v, false);
  std::sort(pooled.begin(), pooled.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  double rank_sum_x = 0;
  double tie_term = 0;  // Σ (t³ − t) over tie groups
  for (size_t i = 0; i < n;) {
    size_t j = i;
    while (j < n && pooled[j].first == pooled[i].first) ++j;
    const double t = static_cast<double>(j - i);
    const double avg_rank = (static_cast<double>(i + 1) + static_cast<double>(j)) / 2.0;
    for (size_t k = i; k < j; ++k)
      if (pooled[k].second) rank_sum_x += avg_rank;
    tie_term += t * t * t - t;
    i = j;
  }
  const double dn1 = static_cast<double>(n1), dn2 = static_cast<double>(n2), dn = static_cast<double>(n);
  UTest r;
  // U1 = R1 − n1(n1+1)/2 (Mann & Whitney 1947); mean n1·n2/2; variance with the tie correction
  // n1·n2/12 · ((n+1) − Σ(t³−t)/(n(n−1))) — the formulas scipy.stats.mannwhitneyu uses.
  r.u = rank_sum_x - dn1 * (dn1 + 1) / 2;
  const double mean = dn1 * dn2 / 2;
  const double variance = dn1 * dn2 / 12 * ((dn + 1) - tie_term / (dn * (dn - 1)));
  if (variance <= 0) {  // every observation ties: no evidence of a shift
    r.z = 0;
    r.p = 1;
    return r;
  }
  // Two-sided with continuity correction: z = (max(U1, U2) − mean − 0.5)/σ, p = 2·(1 − Φ(z)).
  const double u_max = std::max(r.u, dn1 * dn2 - r.u);
  r.z = (u_max - mean - 0.5) / std::sqrt(variance);
  r.p = std::clamp(std::erfc(r.z / std::sqrt(2.0)), 0.0, 1.0);
  return r;
}

int min_samples_for_u_test(double alpha, int cases) {
  GCB_CHECK(alpha > 0 && alpha < 1 && cases >= 1, "min_samples_for_u_test needs 0 < alpha < 1 and cases >= 1");
  for (int n = 2;; ++n) {
    std::vector<double> low(static_cast<size_t>(n)), high(static_cast<size_t>(n));
    std::iota(low.begin(), low.end(), 0.0);
    std::iota(high.begin(), high.end(), static_cast<double>(n));
    if (mann_whitney_u(low, high).p <= alpha / cases) return n;
  }
}

std::vector<double> holm_adjust(std::span<const double> p) {
  // Holm (1979): sort ascending, adjusted p_(i) = max over j ≤ i of min(1, (m − j + 1)·p_(j)).
  const size_t m = p.size();
  std::vector<size_t> order(m);
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return p[a] < p[b]; });
  std::vector<double> adjusted(m);
  double running = 0;
  for (size_t i = 0; i < m; ++i) {
    const double scaled = std::min(1.0, static_cast<double>(m - i) * p[order[i]]);
    running = std::max(running, scaled);
    adjusted[order[i]] = running;
  }
  return adjusted;
}

namespace {

// Continued fraction of the regularized incomplete beta function (modified Lentz; Press et al.,
// Numerical Recipes 3rd ed., §6.4 "betacf").
double beta_continued_fraction(double a, double b, double x) {
  constexpr double kTiny = 1e-300, kEps = 1e-15;
  const double qab = a + b, qap = a + 1, qam = a - 1;
  double c = 1, d = 1 - qab * x / qap;
  if (std::fabs(d) < kTiny) d = kTiny;
  d = 1 / d;
  double h = d;
  for (int m = 1; m <= 500; ++m) {
    const double dm = m, m2 = 2 * dm;
    double aa = dm * (b - dm) * x / ((qam + m2) * (a + m2));
    d = 1 + aa * d;
    if (std::fabs(d) < kTiny) d = kTiny;
    c = 1 + aa / c;
    if (std::fabs(c) < kTiny) c = kTiny;
    d = 1 / d;
    h *= d * c;
    aa = -(a + dm) * (qab + dm) * x / ((a + m2) * (qap + m2));
    d = 1 + aa * d;
    if (std::fabs(d) < kTiny) d = kTiny;
    c = 1 + aa / c;
    if (std::fabs(c) < kTiny) c = kTiny;
    d = 1 / d;
    const double step = d * c;
    h *= step;
    if (std::fabs(step - 1) < kEps) break;
  }
  return h;
}

// I_x(a, b), the regularized incomplete beta function.
double incomplete_beta(double a, double b, double x) {
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  const double front =
      std::exp(std::lgamma(a + b) - std::lgamma(a) - std::lgamma(b) + a * std::log(x) + b * std::log1p(-x));
  if (x < (a + 1) / (a + b + 2)) return front * beta_continued_fraction(a, b, x) / a;
  return 1 - front * beta_continued_fraction(b, a, 1 - x) / b;
}

}  // namespace

double student_t_two_sided_p(double t, double df) {
  GCB_CHECK(df > 0, "Student's t needs df > 0");
  if (!std::isfinite(t)) return 0;
  return std::clamp(incomplete_beta(df / 2, 0.5, df / (df + t * t)), 0.0, 1.0);
}

double student_t_quantile(double p, double df) {
  GCB_CHECK(p > 0 && p < 1 && df > 0, "student_t_quantile needs 0 < p < 1 and df > 0");
  double lo = 0, hi = 1;
  while (student_t_two_sided_p(hi, df) > p) hi *= 2;  // P(|T| > hi) falls below p
  for (int i = 0; i < 200 && hi - lo > 1e-12 * hi; ++i) {
    const double mid = (lo + hi) / 2;
    (student_t_two_sided_p(mid, df) > p ? lo : hi) = mid;
  }
  return (lo + hi) / 2;
}

double relative_change(double base, double contender) {
  if (base != 0) return (contender - base) / std::fabs(base);
  if (contender == 0) return 0;
  return (contender - base) / ((base + contender) / 2);  // compare.py's rule for a zero base
}

}  // namespace gcb
