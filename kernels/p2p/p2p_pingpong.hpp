// The flag ping-pong protocol behind `gcbench p2p`'s GPU-initiated latency, as a plain host
// reference: two threads, each spinning on a flag the other one writes. The CUDA version
// (kernels/p2p/gpu_p2p.hpp) runs the same protocol with one thread on each of two GPUs; both end
// with the values pingpong_final_flag() names, which is what the GPU case verifies.
#pragma once

#include <cstdint>

namespace gcb::kernels {

// Round trip i (1-based) of a launch that starts at `base`: the initiator stores base + i into
// the responder's flag and waits for its own flag to read base + i; the responder waits for
// base + i and writes it back. Values only grow across launches (base += round_trips), so a
// stale flag from the previous launch never satisfies a wait.
constexpr uint64_t pingpong_value(uint64_t base, uint64_t round_trip) { return base + round_trip; }
// What both flags hold after a completed launch.
constexpr uint64_t pingpong_final_flag(uint64_t base, uint64_t round_trips) { return base + round_trips; }

struct PingPongFlags {
  uint64_t initiator = 0;  // written by the responder
  uint64_t responder = 0;  // written by the initiator
};
// Runs the protocol on two host threads with atomic flags starting at `start` and returns the
// flags at the end. Blocking.
PingPongFlags host_pingpong(uint64_t base, uint64_t round_trips, PingPongFlags start = {});

}  // namespace gcb::kernels
