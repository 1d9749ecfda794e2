// The α–β fit must recover the parameters it was generated from, also with an outlier.
#include <gtest/gtest.h>

#include <vector>

#include "core/fit.hpp"

namespace gcb {
namespace {

TEST(AlphaBetaFit, RecoversExactParameters) {
  const double alpha = 5e-6, beta = 20e9;  // 5 us, 20 GB/s
  std::vector<double> n, t;
  for (double s = 4096; s <= double(1 << 30); s *= 4) {
    n.push_back(s);
    t.push_back(alpha + s / beta);
  }
  const AlphaBetaFit f = fit_alpha_beta(n, t);
  ASSERT_TRUE(f.ok);
  EXPECT_NEAR(f.alpha_s, alpha, alpha * 1e-6);
  EXPECT_NEAR(f.beta_bytes_per_s, beta, beta * 1e-6);
  EXPECT_NEAR(f.n_half_bytes, alpha * beta, alpha * beta * 1e-6);
  EXPECT_LT(f.max_rel_residual, 1e-9);
}

TEST(AlphaBetaFit, DiscountsAnOutlier) {
  const double alpha = 2e-6, beta = 100e9;
  std::vector<double> n, t;
  for (double s = 1024; s <= double(1 << 28); s *= 2) {
    n.push_back(s);
    t.push_back(alpha + s / beta);
  }
  t[6] *= 3;  // one disturbed point (e.g. a context switch)
  const AlphaBetaFit f = fit_alpha_beta(n, t);
  ASSERT_TRUE(f.ok);
  EXPECT_NEAR(f.alpha_s, alpha, alpha * 0.02);
  EXPECT_NEAR(f.beta_bytes_per_s, beta, beta * 0.02);
}

TEST(AlphaBetaFit, RefusesDegenerateInput) {
  EXPECT_FALSE(fit_alpha_beta(std::vector<double>{1024}, std::vector<double>{1e-6}).ok);
  EXPECT_FALSE(fit_alpha_beta(std::vector<double>{1024, 1024}, std::vector<double>{1e-6, 2e-6}).ok);
}

}  // namespace
}  // namespace gcb
