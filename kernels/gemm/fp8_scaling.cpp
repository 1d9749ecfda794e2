// FP8 per-tensor scale factors (see fp8_scaling.hpp).
#include "kernels/gemm/fp8_scaling.hpp"

#include <cmath>
#include <fmt/format.h>

#include "core/error.hpp"

namespace gcb::kernels {

double fp8_max(DType t) {
  if (t == DType::fp8_e4m3) return 448.0;                                 // 1.75 · 2^8 (S.1111.110)
  if (t == DType::fp8_e5m2) return 57344.0;                               // 1.75 · 2^15 (S.11110.11)
  GCB_CHECK(false, fmt::format("{} is not an FP8 type", dtype_name(t)));  // callers pass an FP8 plan's type
  return 0.0;
}

double fp8_scale_from_amax(double amax, DType t, int margin, double previous) {
  if (!(amax > 0.0) || !std::isfinite(amax)) return previous;
  const double scale = fp8_max(t) / amax / std::ldexp(1.0, margin);
  // A denormal amax can overflow the quotient; keep the previous scale rather than Inf.
  return std::isfinite(scale) ? scale : previous;
}

double fp8_dequant_scale(double scale) {
  GCB_CHECK(scale > 0.0 && std::isfinite(scale), "FP8 scale must be positive and finite");
  return 1.0 / scale;
}

std::string fp8_unsupported_reason(int major, int minor) {
  if (major * 10 + minor >= 89) return {};
  return fmt::format("FP8 matmuls need compute capability 8.9 or newer (Ada, Hopper, Blackwell); this GPU is {}.{}",
                     major, minor);
}

}  // namespace gcb::kernels
