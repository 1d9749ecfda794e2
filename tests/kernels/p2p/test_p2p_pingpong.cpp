// The host reference of the flag ping-pong (kernels/p2p/p2p_pingpong.hpp): both flags end at
// base + round_trips, also when the flags start with the values a previous launch left.
#include <gtest/gtest.h>

#include "kernels/p2p/p2p_pingpong.hpp"

namespace gcb::kernels {
namespace {

TEST(HostPingPong, BothFlagsEndAtTheLastRoundTrip) {
  const PingPongFlags f = host_pingpong(0, 1000);
  EXPECT_EQ(f.initiator, 1000u);
  EXPECT_EQ(f.responder, 1000u);
  EXPECT_EQ(pingpong_final_flag(0, 1000), 1000u);
}

TEST(HostPingPong, StaleFlagsOfThePreviousLaunchNeverSatisfyAWait) {
  // Launch 2 starts where launch 1 ended (base 1000, flags 1000): with values that only grow,
  // a one-round-trip launch still waits for 1001 instead of passing on the stale 1000.
  const PingPongFlags f = host_pingpong(1000, 1, {1000, 1000});
  EXPECT_EQ(f.initiator, 1001u);
  EXPECT_EQ(f.responder, 1001u);
}

}  // namespace
}  // namespace gcb::kernels
