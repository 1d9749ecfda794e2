// Device code of core/: the blocking kernel the event timer enqueues before a timed batch.
#include "core/error.hpp"
#include "core/gpu_kernels.hpp"

namespace gcb::gpu {

namespace {

// Holds the stream until the host releases `flag`; gives up after ~10 s of GPU time so a host
// that died cannot hang the device (nvbandwidth's spin-kernel latch, reference §1.4).
__global__ void blocking_kernel(const volatile int* flag, unsigned long long timeout_cycles) {
  const long long start = clock64();
  while (*flag == 0) {
    if (static_cast<unsigned long long>(clock64() - start) > timeout_cycles) break;
  }
}

}  // namespace

void launch_blocking_kernel(const volatile int* flag, unsigned long long timeout_cycles, cudaStream_t stream) {
  blocking_kernel<<<1, 1, 0, stream>>>(flag, timeout_cycles);
  CUDA_CHECK(cudaGetLastError());
}

}  // namespace gcb::gpu
