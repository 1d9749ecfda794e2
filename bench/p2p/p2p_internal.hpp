// Pieces of `gcbench p2p` shared between its files: the WAIVED cases for machines that cannot run
// a kind (fewer than two GPUs, no CUDA), so both GPU variants (p2p_gpu.cpp, p2p_gpu_none.cpp)
// report the same keys.
#pragma once

#include "bench/p2p/p2p.hpp"

namespace gcb::bench {

// One WAIVED case per device-pair measure (bandwidth, bidir_bandwidth × ce/sm × peer on/off,
// latency, copy_call_latency), without src/dst: there is no pair to name.
CaseList waived_p2p_device_cases(const P2pOptions& o, const std::string& reason);
// The all-to-host and host-to-all aggregates, WAIVED.
CaseList waived_p2p_host_cases(const P2pOptions& o, const std::string& reason);

// p2pBandwidthLatencyTest's latency: 100 × 16 B copies per sample, event time / 100 (§2.1).
inline constexpr int kCopyCallsPerLaunch = 100;
inline constexpr size_t kCopyCallBytes = 16;

}  // namespace gcb::bench
