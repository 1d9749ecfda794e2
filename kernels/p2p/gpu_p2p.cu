// CUDA side of `gcbench p2p`'s GPU-initiated latency: the flag ping-pong of
// kernels/p2p/p2p_pingpong.hpp with one thread per GPU (NVIDIA/cuda-samples p2pBandwidthLatencyTest.cu,
// "Latency done right": GPU-initiated flag ping-pong, separate from CE operation latency).
#include <cuda_runtime.h>

#include "core/error.hpp"
#include "kernels/p2p/gpu_p2p.hpp"
#include "kernels/p2p/p2p_pingpong.hpp"

namespace gcb::kernels {

namespace {

// ~2^33 cycles ≈ 5 s at 1.7 GHz: far beyond any link round trip, short enough that a partner
// that never started ends the launch instead of the run.
constexpr long long kSpinBudgetCycles = 1LL << 33;

__device__ unsigned long long global_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// Spins until *flag == want; false when the budget ran out.
__device__ bool wait_for(volatile unsigned long long* flag, unsigned long long want) {
  const long long start = clock64();
  while (*flag != want) {
    if (clock64() - start > kSpinBudgetCycles) return false;
  }
  return true;
}

__global__ void pingpong_initiator(volatile unsigned long long* own, volatile unsigned long long* peer,
                                   unsigned long long base, unsigned round_trips, long long* elapsed_ns,
                                   int* timed_out) {
  const unsigned long long t0 = global_ns();
  for (unsigned i = 1; i <= round_trips; ++i) {
    const unsigned long long v = pingpong_value(base, i);
    *peer = v;  // a volatile store into the peer GPU's memory: one posted write over the link
    if (!wait_for(own, v)) {
      *timed_out = 1;
      return;
    }
  }
  *elapsed_ns = static_cast<long long>(global_ns() - t0);
}

__global__ void pingpong_responder(volatile unsigned long long* own, volatile unsigned long long* peer,
                                   unsigned long long base, unsigned round_trips) {
  for (unsigned i = 1; i <= round_trips; ++i) {
    const unsigned long long v = pingpong_value(base, i);
    if (!wait_for(own, v)) return;  // the initiator reports the timeout
    *peer = v;
  }
}

}  // namespace

void gpu_pingpong_launch(const GpuPingPong& p, uint64_t base, uint32_t round_trips, cudaStream_t initiator_stream,
                         cudaStream_t responder_stream) {
  GCB_CHECK(p.initiator_flag && p.responder_flag && p.elapsed_ns && p.timed_out, "ping-pong needs all four buffers");
  GCB_CHECK(p.initiator_device != p.responder_device, "ping-pong needs two different GPUs");
  GCB_CHECK(round_trips > 0, "ping-pong needs at least one round trip");
  // The responder goes first so that it is already spinning when the initiator's first store lands.
  CUDA_CHECK(cudaSetDevice(p.responder_device));
  pingpong_responder<<<1, 1, 0, responder_stream>>>(p.responder_flag, p.initiator_flag, base, round_trips);
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaSetDevice(p.initiator_device));
  pingpong_initiator<<<1, 1, 0, initiator_stream>>>(p.initiator_flag, p.responder_flag, base, round_trips, p.elapsed_ns,
                                                    p.timed_out);
  CUDA_CHECK(cudaGetLastError());
}

}  // namespace gcb::kernels
