// The MFU denominator of a GPU run: the SKU's dense bf16 tensor-core peak from the spec table
// (reports/data/gpu_specs.json, vendor datasheets with sparsity halved), found by the CUDA device
// name. fp32 runs are measured against the same bf16 peak, so that MFU compares across precisions
// (an fp32 run is a correctness check, far from that peak by design).
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace gcb::models {

struct PeakFlops {
  double flops = 0;    // FLOP/s
  std::string source;  // where it comes from, recorded in the result
};

// nullopt when the table has no SKU matching `device_name` or no bf16 figure for it.
std::optional<PeakFlops> spec_peak_flops(std::string_view device_name);

}  // namespace gcb::models
