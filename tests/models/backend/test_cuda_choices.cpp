// The CUDA backend's decisions that need no GPU: which attention kernels run and why
// (attention_choice.hpp), the MFU peak from the spec table (device_peak.hpp), and which GPUs each
// device's memory pool grants access to (pool_access.hpp).
#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <set>
#include <string_view>
#include <utility>
#include <vector>

#include "collectives/gpu_choice.hpp"
#include "models/model/attention_choice.hpp"
#include "models/theory/device_peak.hpp"
#include "models/backend/device/pool_access.hpp"

namespace gcb::models {
namespace {

const std::string kNoHeadDim = "our flash kernels support head_dim 64 and 128 only";

AttnImplId row(std::string_view name) {
  const std::optional<AttnImplId> id = kernels::attn::find_attention_impl(name);
  EXPECT_TRUE(id.has_value()) << name;
  return id.value_or(AttnImplId{});
}
const AttnImplId kOurs = row("ours"), kCudnn = row("cudnn");
const AttentionRequest kAuto = AttentionRequest::automatic;
const AttentionRequest kAskOurs = attention_request(kOurs), kAskCudnn = attention_request(kCudnn);

// What the backend passes: per row that trains, why it cannot run ("" = it can).
std::map<AttnImplId, std::string> reasons(const std::string& ours, const std::string& cudnn) {
  return {{kOurs, ours}, {kCudnn, cudnn}};
}
AttentionTimes times(double ours, double cudnn) { return {{kOurs, ours}, {kCudnn, cudnn}}; }

TEST(AttentionChoice, Fp32AlwaysRunsTheExactRowKernel) {
  for (AttentionRequest a : {kAuto, kAskOurs, kAskCudnn}) {
    const AttentionChoice c = choose_attention(a, DType::f32, reasons("", ""));
    EXPECT_FALSE(c.impl.has_value());
    EXPECT_EQ(attention_choice_name(c), "simple");
    EXPECT_FALSE(c.needs_timing);
  }
}

TEST(AttentionChoice, AskedImplementationsWinWhenTheyTakeTheShape) {
  EXPECT_EQ(choose_attention(kAskOurs, DType::bf16, reasons("", "")).impl, kOurs);
  EXPECT_EQ(choose_attention(kAskCudnn, DType::bf16, reasons("", "")).impl, kCudnn);
  // Asked for one that cannot: the other, with the reason.
  const AttentionChoice c = choose_attention(kAskOurs, DType::bf16, reasons(kNoHeadDim, ""));
  EXPECT_EQ(c.impl, kCudnn);
  EXPECT_NE(c.why.find("head_dim 64 and 128"), std::string::npos);
  EXPECT_EQ(choose_attention(kAskCudnn, DType::bf16, reasons("", "built without cuDNN")).impl, kOurs);
  // Neither: the simple kernel, both reasons recorded.
  const AttentionChoice none = choose_attention(kAuto, DType::bf16, reasons(kNoHeadDim, "no engine"));
  EXPECT_FALSE(none.impl.has_value());
  EXPECT_NE(none.why.find("no engine"), std::string::npos);
}

TEST(AttentionChoice, AutoTimesBothAndKeepsTheFaster) {
  const AttentionChoice first = choose_attention(kAuto, DType::bf16, reasons("", ""));
  EXPECT_TRUE(first.needs_timing);
  const AttentionChoice cudnn = choose_attention(kAuto, DType::bf16, reasons("", ""), times(2e-3, 1.5e-3));
  EXPECT_EQ(cudnn.impl, kCudnn);
  EXPECT_FALSE(cudnn.needs_timing);
  EXPECT_NE(cudnn.why.find("ours 2.000 ms, cudnn 1.500 ms"), std::string::npos) << cudnn.why;
  EXPECT_EQ(choose_attention(kAuto, DType::bf16, reasons("", ""), times(1e-3, 1.5e-3)).impl, kOurs);
  // Auto with one usable: no timing needed.
  EXPECT_EQ(choose_attention(kAuto, DType::bf16, reasons("", "no plan")).impl, kOurs);
  EXPECT_EQ(choose_attention(kAuto, DType::bf16, reasons(kNoHeadDim, "")).impl, kCudnn);
}

// --attn's names come from the registry: auto, then every row that trains, each round-tripping.
TEST(AttentionChoice, FlagNamesAreAutoAndTheRowsThatTrain) {
  const auto names = attention_request_names();
  ASSERT_EQ(names.size(), 1 + kernels::attn::training_attention_impls().size());
  EXPECT_EQ(names.front().first, "auto");
  EXPECT_EQ(names.front().second, kAuto);
  for (size_t i = 1; i < names.size(); ++i) {
    const std::optional<AttnImplId> id = requested_impl(names[i].second);
    ASSERT_TRUE(id.has_value());
    EXPECT_TRUE(kernels::attn::attention_impl(*id).trains) << names[i].first;
    EXPECT_EQ(attention_request_name(names[i].second), names[i].first);
  }
  EXPECT_EQ(attention_request_name(kAuto), "auto");
  EXPECT_EQ(attention_request_name(kAskOurs), "ours");
  // The forward-only baseline cannot train, so --attn does not offer it.
  for (const auto& [name, r] : names) EXPECT_NE(name, "unfused");
  EXPECT_FALSE(kernels::attn::find_attention_impl("fa3").has_value());
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
