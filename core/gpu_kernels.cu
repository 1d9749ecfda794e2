// Device code of core/: the blocking kernel the event timer enqueues before a timed batch.
#include "core/error.hpp"
#include "core/gpu_kernels.hpp"

namespace gcb::gpu {

namespace {

// Holds the stream until the host releases it; gives up after ~10 s of GPU time so a host that
// died cannot hang the device (nvbandwidth's spin-kernel latch, NVIDIA/nvbandwidth kernels.cu
// spinKernel; NVIDIA/nvbench blocking_kernel), and then tells the host it did: the sample that
// follows was not enqueued behind a held stream.
__global__ void blocking_kernel(LatchWords* words, unsigned long long timeout_cycles) {
  const volatile int* release = &words->release;
  const long long start = clock64();
  while (*release == 0) {
    if (static_cast<unsigned long long>(clock64() - start) > timeout_cycles) {
      *static_cast<volatile int*>(&words->timed_out) = 1;
      __threadfence_system();  // visible to the host before the events after this kernel
      return;
    }
  }
}

}  // namespace

void launch_blocking_kernel(LatchWords* words, unsigned long long timeout_cycles, cudaStream_t stream) {
  blocking_kernel<<<1, 1, 0, stream>>>(words, timeout_cycles);
  CUDA_CHECK(cudaGetLastError());
}

cudaError_t probe_kernel_image(int device) {
  if (const cudaError_t e = cudaSetDevice(device); e != cudaSuccess) return e;
  cudaFuncAttributes attributes{};
  const cudaError_t e = cudaFuncGetAttributes(&attributes, blocking_kernel);
  if (e != cudaSuccess) cudaGetLastError();  // not sticky; leave the runtime clean
  return e;
}

}  // namespace gcb::gpu
