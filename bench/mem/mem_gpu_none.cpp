// GPU cases of `gcbench mem` when gcbench was built without CUDA: each kind is WAIVED with
// the reason, so a CPU-only build still shows what it did not measure.
#include "bench/mem/mem.hpp"

namespace gcb::bench {

CaseList gpu_mem_cases(const MemOptions& o, const DeviceSelection& sel, uint64_t) {
  if (!sel.gpu_requested) return {};
  return waived_gpu_mem_cases(o, sel.gpu_missing);
}

}  // namespace gcb::bench
