// The few device kernels core/ needs (the harness's blocking kernel), kept in a .cu file of
// their own so host code stays in ordinary C++ translation units.
#pragma once

#include <cuda_runtime_api.h>

namespace gcb::gpu {

// Holds `stream` until the host writes a non-zero value to *flag (host-mapped memory), or until
// `timeout_cycles` SM cycles pass. Stream-ordered; checks the launch.
void launch_blocking_kernel(const volatile int* flag, unsigned long long timeout_cycles, cudaStream_t stream);

}  // namespace gcb::gpu
