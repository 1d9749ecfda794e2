// spec_peak_flops (device_peak.hpp): the dense bf16 tensor-core peak of a GPU found by device name in the spec table,
// the MFU denominator of a GPU run.
#include "models/theory/device_peak.hpp"

#include <fmt/format.h>

#include "reports/specs.hpp"

namespace gcb::models {

std::optional<PeakFlops> spec_peak_flops(std::string_view device_name) {
  const std::optional<GpuSpec> spec = find_gpu_spec(device_name);
  if (!spec) return std::nullopt;
  const std::optional<double> tflops = peak_tflops(*spec, DType::bf16);
  if (!tflops) return std::nullopt;
  return PeakFlops{*tflops * 1e12,
                   fmt::format("spec:{} bf16 dense {} TFLOP/s (reports/data/gpu_specs.json)", spec->sku, *tflops)};
}

}  // namespace gcb::models
