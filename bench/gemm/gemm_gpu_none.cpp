// GPU cases of `gcbench gemm` when gcbench was built without CUDA or cuBLASLt: one WAIVED case
// says why, so a CPU-only build still shows what it did not measure.
#include "bench/gemm/gemm.hpp"
#include "bench/common/waived_case.hpp"

namespace gcb::bench {

CaseList gpu_gemm_cases(const GemmOptions&, const DeviceSelection& sel, uint64_t) {
  CaseList cases;
  if (!sel.gpu_requested) return cases;
  const std::string reason = sel.gpus.empty() ? sel.gpu_missing : "gcbench was built without CUDA/cuBLASLt";
  cases.push_back(std::make_unique<WaivedCase>("gemm/gpu", nlohmann::json{{"device", "gpu"}}, reason));
  return cases;
}

}  // namespace gcb::bench
