// host_pingpong (p2p_pingpong.hpp): the flag ping-pong behind `gcbench p2p`'s GPU-initiated latency on two host
// threads, the reference for the final flag values the GPU case verifies.
#include "kernels/p2p/p2p_pingpong.hpp"

#include <atomic>
#include <thread>

namespace gcb::kernels {

PingPongFlags host_pingpong(uint64_t base, uint64_t round_trips, PingPongFlags start) {
  std::atomic<uint64_t> initiator_flag{start.initiator}, responder_flag{start.responder};
  std::thread responder([&] {
    for (uint64_t i = 1; i <= round_trips; ++i) {
      const uint64_t v = pingpong_value(base, i);
      while (responder_flag.load(std::memory_order_acquire) != v) std::this_thread::yield();
      initiator_flag.store(v, std::memory_order_release);
    }
  });
  for (uint64_t i = 1; i <= round_trips; ++i) {
    const uint64_t v = pingpong_value(base, i);
    responder_flag.store(v, std::memory_order_release);
    while (initiator_flag.load(std::memory_order_acquire) != v) std::this_thread::yield();
  }
  responder.join();
  return {initiator_flag.load(), responder_flag.load()};
}

}  // namespace gcb::kernels
