// The α–β (latency–bandwidth, "Hockney") model of a transfer: t(n) = α + n / β. Fitted over a
// size sweep so a result says its latency α, asymptotic bandwidth β and n½ = α·β (the size at
// which half of β is reached). Used by `mem` copies, `p2p` and `coll`.
#pragma once

#include <span>

namespace gcb {

struct AlphaBetaFit {
  double alpha_s = 0;  // seconds
  double beta_bytes_per_s = 0;
  double n_half_bytes = 0;      // α·β
  double max_rel_residual = 0;  // max |t_fit − t| / t over the points
  int points = 0;
  bool ok = false;  // false when fewer than 2 distinct sizes or a non-physical fit
};

// Robust fit: least squares on relative residuals (each point weighted by 1/t², so microsecond
// latencies and second-long transfers count alike), then iteratively re-weighted with Tukey's
// biweight to discount outliers. α is clamped at ≥ 0.
AlphaBetaFit fit_alpha_beta(std::span<const double> bytes, std::span<const double> seconds);

}  // namespace gcb
