// GPU-initiated flag ping-pong between two GPUs for `gcbench p2p` (one-way latency = RTT / 2):
// one thread on each GPU spins on a flag in its own memory and answers by storing into the
// other GPU's flag over the link (peer access must be enabled both ways). The host reference
// of the protocol is kernels/p2p/p2p_pingpong.hpp. Launchers only enqueue; timing is the harness's.
// Compiled only when CUDA is built.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace gcb::kernels {

// Device memory the two kernels share. Flags live on their owner's GPU; the other GPU writes
// them through peer access.
struct GpuPingPong {
  int initiator_device = 0, responder_device = 1;
  unsigned long long* initiator_flag = nullptr;  // on initiator_device
  unsigned long long* responder_flag = nullptr;  // on responder_device
  long long* elapsed_ns = nullptr;               // on initiator_device: globaltimer span of the launch
  int* timed_out = nullptr;                      // on initiator_device: 1 when a spin gave up
};

// Enqueues the responder on `responder_stream` (a stream of responder_device) and the initiator
// on `initiator_stream`. The two streams must start together (the caller joins them with
// events): a kernel whose partner never runs gives up after ~2^33 SM cycles (seconds) and sets
// *timed_out instead of hanging the GPU. Stream-ordered.
void gpu_pingpong_launch(const GpuPingPong& p, uint64_t base, uint32_t round_trips, cudaStream_t initiator_stream,
                         cudaStream_t responder_stream);

}  // namespace gcb::kernels
