// Device-pair and host-aggregate cases of `gcbench p2p` when gcbench was built without CUDA:
// every kind is WAIVED with the reason, so a CPU-only build still shows what it did not measure.
#include "bench/p2p/p2p_internal.hpp"

namespace gcb::bench {

CaseList p2p_device_cases(const P2pOptions& o, const std::vector<int>&, const std::string& no_gpu_reason, uint64_t) {
  return waived_p2p_device_cases(o, no_gpu_reason.empty() ? "gcbench was built without CUDA" : no_gpu_reason);
}

CaseList p2p_host_cases(const P2pOptions& o, const std::vector<int>&, const std::string& no_gpu_reason) {
  return waived_p2p_host_cases(o, no_gpu_reason.empty() ? "gcbench was built without CUDA" : no_gpu_reason);
}

}  // namespace gcb::bench
