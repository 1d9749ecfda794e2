// Accuracy verdicts for attention outputs (see attention_check.hpp for the thresholds' reason).
#include "kernels/attention/attention_check.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace gcb::kernels::attn {

RelativeError relative_error(const double* want, const float* got, size_t n) {
  const ErrorStats e = compare(want, got, n);
  double sum_sq = 0, max_ref = 0;
  for (size_t i = 0; i < n; ++i) {
    sum_sq += want[i] * want[i];
    max_ref = std::max(max_ref, std::abs(want[i]));
  }
  const double rms = n ? std::sqrt(sum_sq / static_cast<double>(n)) : 0.0;
  RelativeError r;
  r.rmse = e.rmse;
  r.max_abs = e.max_abs;
  r.worst = e.worst;
  r.non_finite = e.non_finite;
  r.rel_rmse = rms > 0 ? e.rmse / rms : e.rmse;
  r.rel_max = max_ref > 0 ? e.max_abs / max_ref : e.max_abs;
  return r;
}

Tolerance attention_tolerance(DType t, bool backward) {
  double u = 0;
  switch (t) {
    case DType::f16: u = std::ldexp(1.0, -11); break;
    case DType::bf16: u = std::ldexp(1.0, -8); break;
    default: return backward ? Tolerance{2e-4, 2e-3} : Tolerance{1e-4, 1e-3};
  }
  const double factor = backward ? 2.0 : 1.0;
  return {4.0 * u * factor, 20.0 * u * factor};
}

std::string check_error(const std::string& tensor, const RelativeError& e, Tolerance tol) {
  if (e.non_finite) return fmt::format("{}: {} non-finite values, first at index {}", tensor, e.non_finite, e.worst);
  if (e.rel_rmse > tol.rel_rmse || e.rel_max > tol.rel_max)
    return fmt::format("{}: relative RMSE {:.3g} (limit {:.3g}), relative max error {:.3g} (limit {:.3g}) at index {}",
                       tensor, e.rel_rmse, tol.rel_rmse, e.rel_max, tol.rel_max, e.worst);
  return {};
}

}  // namespace gcb::kernels::attn
