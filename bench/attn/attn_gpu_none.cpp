// GPU cases of `gcbench attn` when gcbench was built without CUDA: WAIVED with the reason.
#include "bench/attn/attn.hpp"

namespace gcb::bench {

CaseList gpu_attn_cases(const AttnOptions& o, const DeviceSelection& sel, uint64_t) {
  if (!sel.gpu_requested) return {};
  return waived_gpu_attn_cases(o, sel.gpu_missing.empty() ? "gcbench was built without CUDA" : sel.gpu_missing);
}

}  // namespace gcb::bench
