// The CUDA backend's decisions that need no GPU: which attention kernels run and why
// (attention_choice.hpp), the MFU peak from the spec table (device_peak.hpp), and which GPUs each
// device's memory pool grants access to (pool_access.hpp).
#include <gtest/gtest.h>

#include <set>
#include <utility>
#include <vector>

#include "collectives/gpu_choice.hpp"
#include "models/model/attention_choice.hpp"
#include "models/theory/device_peak.hpp"
#include "models/backend/device/pool_access.hpp"

namespace gcb::models {
namespace {

const std::string kNoHeadDim = "our flash kernels support head_dim 64 and 128 only";

TEST(AttentionChoice, Fp32AlwaysRunsTheExactRowKernel) {
  for (AttentionImpl a : {AttentionImpl::automatic, AttentionImpl::ours, AttentionImpl::cudnn}) {
    const AttentionChoice c = choose_attention(a, DType::f32, "", "");
    EXPECT_EQ(c.path, AttentionPath::simple);
    EXPECT_FALSE(c.needs_timing);
  }
}

TEST(AttentionChoice, AskedImplementationsWinWhenTheyTakeTheShape) {
  EXPECT_EQ(choose_attention(AttentionImpl::ours, DType::bf16, "", "").path, AttentionPath::ours);
  EXPECT_EQ(choose_attention(AttentionImpl::cudnn, DType::bf16, "", "").path, AttentionPath::cudnn);
  // Asked for one that cannot: the other, with the reason.
  const AttentionChoice c = choose_attention(AttentionImpl::ours, DType::bf16, kNoHeadDim, "");
  EXPECT_EQ(c.path, AttentionPath::cudnn);
  EXPECT_NE(c.why.find("head_dim 64 and 128"), std::string::npos);
  EXPECT_EQ(choose_attention(AttentionImpl::cudnn, DType::bf16, "", "built without cuDNN").path, AttentionPath::ours);
  // Neither: the simple kernel, both reasons recorded.
  const AttentionChoice none = choose_attention(AttentionImpl::automatic, DType::bf16, kNoHeadDim, "no engine");
  EXPECT_EQ(none.path, AttentionPath::simple);
  EXPECT_NE(none.why.find("no engine"), std::string::npos);
}

TEST(AttentionChoice, AutoTimesBothAndKeepsTheFaster) {
  const AttentionChoice first = choose_attention(AttentionImpl::automatic, DType::bf16, "", "");
  EXPECT_TRUE(first.needs_timing);
  const AttentionChoice cudnn =
      choose_attention(AttentionImpl::automatic, DType::bf16, "", "", AttentionTimes{2e-3, 1.5e-3});
  EXPECT_EQ(cudnn.path, AttentionPath::cudnn);
  EXPECT_FALSE(cudnn.needs_timing);
  EXPECT_NE(cudnn.why.find("ours 2.000 ms, cudnn 1.500 ms"), std::string::npos) << cudnn.why;
  EXPECT_EQ(choose_attention(AttentionImpl::automatic, DType::bf16, "", "", AttentionTimes{1e-3, 1.5e-3}).path,
            AttentionPath::ours);
  // Auto with one usable: no timing needed.
  EXPECT_EQ(choose_attention(AttentionImpl::automatic, DType::bf16, "", "no plan").path, AttentionPath::ours);
  EXPECT_EQ(choose_attention(AttentionImpl::automatic, DType::bf16, kNoHeadDim, "").path, AttentionPath::cudnn);
}

TEST(AttentionChoice, ParsesTheFlag) {
  EXPECT_EQ(parse_attention_impl("auto"), AttentionImpl::automatic);
  EXPECT_EQ(parse_attention_impl("cudnn"), AttentionImpl::cudnn);
  EXPECT_FALSE(parse_attention_impl("fa3").has_value());
  EXPECT_EQ(attention_impl_name(AttentionImpl::ours), "ours");
}

TEST(DevicePeak, DenseBf16PeakOfTheSkuTheDeviceNameMatches) {
  const auto h100 = spec_peak_flops("NVIDIA H100 80GB HBM3");
  ASSERT_TRUE(h100.has_value());
  EXPECT_DOUBLE_EQ(h100->flops, 989.4e12);
  EXPECT_NE(h100->source.find("H100 SXM5 80GB bf16 dense"), std::string::npos) << h100->source;
  EXPECT_DOUBLE_EQ(spec_peak_flops("NVIDIA H200")->flops, 989.4e12);
  EXPECT_DOUBLE_EQ(spec_peak_flops("NVIDIA A100-SXM4-80GB")->flops, 312e12);
  EXPECT_FALSE(spec_peak_flops("NVIDIA GeForce RTX 4090").has_value());
}

// Every device of a process's rank threads grants its pool to every other one that can reach it:
// over the whole process, the granted (owner, peer) pairs are every ordered pair of distinct
// devices, each once, for a node of 8 fully connected GPUs and for 6 rank threads wrapped onto 4.
TEST(PoolAccess, EveryOrderedPeerPairOfTheProcessIsGranted) {
  const auto all = [](int, int) { return true; };
  for (const auto& [ranks, gpus] : {std::pair{8, 8}, std::pair{6, 4}, std::pair{2, 8}}) {
    const std::vector<int> devices = rank_thread_devices(ranks, gpus);
    std::multiset<std::pair<int, int>> granted;
    for (int owner : devices)
      for (int peer : pool_access_peers(owner, devices, all)) granted.insert({owner, peer});
    std::multiset<std::pair<int, int>> want;
    for (int a : devices)
      for (int b : devices)
        if (a != b) want.insert({a, b});
    EXPECT_EQ(granted, want) << ranks << " rank threads on " << gpus << " GPUs";
  }
}

// A pair the hardware cannot reach (cudaDeviceCanAccessPeer false: no P2P between them) is left
// out, asked in the direction peer → owner; a process of one GPU, or one that drives a single
// device, grants nothing.
TEST(PoolAccess, PairsWithoutPeerAccessAndLoneDevicesAreLeftOut) {
  const auto not_0_from_3 = [](int peer, int owner) { return !(peer == 3 && owner == 0); };
  EXPECT_EQ(pool_access_peers(0, {0, 1, 2, 3}, not_0_from_3), (std::vector<int>{1, 2}));
  EXPECT_EQ(pool_access_peers(3, {0, 1, 2, 3}, not_0_from_3), (std::vector<int>{0, 1, 2}));
  const auto all = [](int, int) { return true; };
  EXPECT_TRUE(pool_access_peers(0, {0}, all).empty());
  EXPECT_TRUE(pool_access_peers(0, {}, all).empty());
  EXPECT_EQ(pool_access_peers(1, {0, 1, 0, 1}, all), (std::vector<int>{0}));  // each peer once
}

}  // namespace
}  // namespace gcb::models
