// The few device kernels core/ needs (the harness's blocking kernel), kept in a .cu file of
// their own so host code stays in ordinary C++ translation units.
#pragma once

#include <cuda_runtime_api.h>

namespace gcb::gpu {

// Host-mapped words the blocking kernel and the host share.
struct LatchWords {
  int release;    // host → device: non-zero lets the kernel end
  int timed_out;  // device → host: 1 when the kernel gave up waiting (timeout)
};

// Holds `stream` until the host writes a non-zero `release` (host-mapped memory, device pointer
// `words`), or until `timeout_cycles` SM cycles pass, in which case it sets `timed_out`.
// Stream-ordered; checks the launch.
void launch_blocking_kernel(LatchWords* words, unsigned long long timeout_cycles, cudaStream_t stream);

// Whether `device` has code of this build: cudaFuncGetAttributes on the blocking kernel (every
// timed GPU case launches it). cudaErrorNoKernelImageForDevice (or cudaErrorInvalidDeviceFunction)
// when the build carries no image the device can run; cudaSuccess otherwise.
cudaError_t probe_kernel_image(int device);

}  // namespace gcb::gpu
