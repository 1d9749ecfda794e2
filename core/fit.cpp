// fit_alpha_beta (fit.hpp): weighted least squares of t = α + n/β over a size sweep, refitted through the origin when α
// would be negative, and n½ = α·β.
#include "core/fit.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

namespace gcb {

namespace {

// Weighted least squares for t = α + n·g (g = 1/β).
bool weighted_fit(std::span<const double> n, std::span<const double> t, const std::vector<double>& w, double& alpha,
                  double& g) {
  double sw = 0, sn = 0, st = 0, snn = 0, snt = 0;
  for (size_t i = 0; i < n.size(); ++i) {
    sw += w[i];
    sn += w[i] * n[i];
    st += w[i] * t[i];
    snn += w[i] * n[i] * n[i];
    snt += w[i] * n[i] * t[i];
  }
  const double det = sw * snn - sn * sn;
  if (!(std::fabs(det) > 0)) return false;
  g = (sw * snt - sn * st) / det;
  alpha = (st - g * sn) / sw;
  if (alpha < 0) {  // latency cannot be negative: refit through the origin
    alpha = 0;
    g = snt / snn;
  }
  return g > 0 && std::isfinite(g) && std::isfinite(alpha);
}

}  // namespace

AlphaBetaFit fit_alpha_beta(std::span<const double> bytes, std::span<const double> seconds) {
  AlphaBetaFit fit;
  fit.points = static_cast<int>(std::min(bytes.size(), seconds.size()));
  if (fit.points < 2) return fit;
  const auto [lo, hi] = std::minmax_element(bytes.begin(), bytes.begin() + fit.points);
  if (*lo == *hi) return fit;
  const std::span<const double> n = bytes.first(static_cast<size_t>(fit.points));
  const std::span<const double> t = seconds.first(static_cast<size_t>(fit.points));
  std::vector<double> base(n.size()), w(n.size());
  for (size_t i = 0; i < n.size(); ++i) base[i] = t[i] > 0 ? 1.0 / (t[i] * t[i]) : 0.0;
  w = base;
  double alpha = 0, g = 0;
  if (!weighted_fit(n, t, w, alpha, g)) return fit;
  for (int iter = 0; iter < 10; ++iter) {
    std::vector<double> r(n.size());
    for (size_t i = 0; i < n.size(); ++i) r[i] = std::fabs((alpha + g * n[i] - t[i]) / t[i]);
    std::vector<double> sorted = r;
    std::nth_element(sorted.begin(), sorted.begin() + static_cast<long>(sorted.size() / 2), sorted.end());
    const double scale = std::max(6.0 * 1.4826 * sorted[sorted.size() / 2], 1e-3);  // Tukey c·MAD
    for (size_t i = 0; i < n.size(); ++i) {
      const double u = r[i] / scale;
      w[i] = u < 1 ? base[i] * (1 - u * u) * (1 - u * u) : 0.0;
    }
    double a2 = 0, g2 = 0;
    if (!weighted_fit(n, t, w, a2, g2)) break;
    const bool converged = std::fabs(a2 - alpha) <= 1e-12 + 1e-9 * alpha && std::fabs(g2 - g) <= 1e-9 * g;
    alpha = a2;
    g = g2;
    if (converged) break;
  }
  fit.alpha_s = alpha;
  fit.beta_bytes_per_s = 1.0 / g;
  fit.n_half_bytes = alpha / g;
  for (size_t i = 0; i < n.size(); ++i)
    fit.max_rel_residual = std::max(fit.max_rel_residual, std::fabs((alpha + g * n[i] - t[i]) / t[i]));
  fit.ok = true;
  return fit;
}

}  // namespace gcb
