// The World's GPU choice (collectives/gpu_choice.hpp) for the launches it must support: every GPU
// of an 8-GPU node visible to every rank, and one GPU per rank (srun --gpus-per-task=1), plus the
// duplicate check that catches ranks sharing a GPU.
#include <gtest/gtest.h>

#include <vector>

#include "collectives/gpu_choice.hpp"

namespace gcb {
namespace {

TEST(GpuChoice, EightVisibleGpusOnePerLocalRank) {
  for (int r = 0; r < 8; ++r) EXPECT_EQ(device_for_local_rank(r, 8), r);
}

TEST(GpuChoice, OneVisibleGpuPerRankIsDeviceZero) {
  // srun --gpus-per-task=1: local ranks 0..7 each see one GPU (their own) as device 0. The old
  // rule (device = local rank) gave local rank 3 "no GPU".
  for (int r = 0; r < 8; ++r) EXPECT_EQ(device_for_local_rank(r, 1), 0);
}

TEST(GpuChoice, NoDeviceIsNoGpu) { EXPECT_EQ(device_for_local_rank(0, 0), -1); }

// The GPUs one process's rank threads drive: each local rank's, once, in order.
TEST(GpuChoice, RankThreadDevicesAreEachLocalRanksGpuOnce) {
  EXPECT_EQ(rank_thread_devices(4, 8), (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(rank_thread_devices(8, 8), (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(rank_thread_devices(6, 4), (std::vector<int>{0, 1, 2, 3}));  // wrapped around
  EXPECT_EQ(rank_thread_devices(1, 8), (std::vector<int>{0}));
  EXPECT_TRUE(rank_thread_devices(4, 0).empty());
}

TEST(GpuChoice, DuplicateUuidOnOneHostIsCaught) {
  // One GPU per rank: distinct UUIDs behind the same device index 0 are fine.
  EXPECT_FALSE(duplicate_gpu({{1, 0xA}, {1, 0xB}, {1, 0xC}}).has_value());
  // Two ranks that were given the same GPU (a CUDA_VISIBLE_DEVICES mistake, or more ranks than
  // GPUs wrapping around): ranks 0 and 2.
  const auto dup = duplicate_gpu({{1, 0xA}, {1, 0xB}, {1, 0xA}});
  ASSERT_TRUE(dup.has_value());
  EXPECT_EQ(dup->first, 0u);
  EXPECT_EQ(dup->second, 2u);
  // The same UUID hash on two hosts is two GPUs.
  EXPECT_FALSE(duplicate_gpu({{1, 0xA}, {2, 0xA}}).has_value());
}

}  // namespace
}  // namespace gcb
