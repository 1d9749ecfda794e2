// What the scan's stages run, checked on any machine: the cases of the per-device and link
// stages (GPU options and the link filter without a GPU; the host cases for real), and the
// exchange between ranks that every stage rests on, on rank threads.
#include <gtest/gtest.h>

#include <set>

#include "bench/scan/exchange.hpp"
#include "bench/scan/layout.hpp"
#include "bench/scan/stage_cases.hpp"
#include "collectives/world.hpp"
#include "core/stats.hpp"
#include "core/gpu.hpp"

namespace gcb::scan {
namespace {

TEST(ScanStageCases, DeviceOptionsPerKind) {
  ScanOptions o;
  const auto gpu_mem = device_mem_options(true, o);
  EXPECT_EQ(gpu_mem.kernels, (std::vector<kernels::StreamOp>{kernels::StreamOp::triad}));
  EXPECT_EQ(gpu_mem.dtypes, (std::vector<DType>{DType::f32}));
  EXPECT_FALSE(gpu_mem.peers);
  const auto gpu_gemm = device_gemm_options(true, o);
  EXPECT_EQ(gpu_gemm.dtypes, (std::vector<DType>{DType::bf16}));
  EXPECT_EQ(gpu_gemm.m, (std::vector<std::string>{"8192"}));
  EXPECT_FALSE(gpu_gemm.tune);
  o.gemm_size = 256;
  o.device_size = 1 << 20;
  EXPECT_EQ(device_gemm_options(false, o).m, (std::vector<std::string>{"256"}));
  EXPECT_EQ(device_gemm_options(false, o).dtypes, (std::vector<DType>{DType::f32}));
  EXPECT_EQ(device_mem_options(false, o).dtypes, (std::vector<DType>{DType::f64}));
  EXPECT_EQ(device_mem_options(false, o).size, uint64_t{1} << 20);
}

TEST(ScanStageCases, HostCases) {
  ScanOptions o;
  o.gemm_size = 128;
  o.device_size = 1 << 20;
  const DeviceCases c = device_cases(-1, o, 1);
  ASSERT_EQ(c.memory.size(), 1u);
  EXPECT_EQ(c.memory[0]->key(), "mem/host/triad");
  EXPECT_EQ(c.memory[0]->params()["dtype"], "fp64");
  ASSERT_EQ(c.gemm.size(), 1u);
  EXPECT_EQ(c.gemm[0]->key(), "gemm/fp32");
  EXPECT_EQ(c.gemm[0]->params()["m"], 128);
}

TEST(ScanStageCases, LinkCasesKeepBandwidthWithPeerAccess) {
  ScanOptions o;
  // One GPU: the p2p family's WAIVED cases, filtered to what the stage would measure.
  const auto one = link_cases(1, o, 1);
  std::set<std::string> kinds;
  for (const auto& c : one) {
    EXPECT_EQ(c->params()["peer_access"], "on");
    EXPECT_EQ(c->waived_reason(), "needs two GPUs");
    kinds.insert(c->key() + "/" + c->params()["engine"].get<std::string>());
  }
  EXPECT_EQ(kinds, (std::set<std::string>{"p2p/bandwidth/ce", "p2p/bandwidth/sm", "p2p/bidir_bandwidth/ce",
                                          "p2p/bidir_bandwidth/sm"}));
  if (!gpu::runtime().built) GTEST_SKIP() << "built without CUDA: no device-pair cases to construct";
  // Two GPUs (constructed, never run): both ordered pairs × uni/bidir × CE/SM, peer access on.
  const auto two = link_cases(2, o, 1);
  EXPECT_EQ(two.size(), 8u);
  for (const auto& c : two) EXPECT_EQ(c->params()["peer_access"], "on");
}

// Beyond kPairSamplesUpToNodes nodes a pair result crosses the gather without its samples: the
// metrics and statistics rank 0 judges stay, the count is recorded, and the JSON round trip holds.
TEST(ScanExchange, DroppedSamplesKeepTheJudgedFigures) {
  Result r;
  r.key = "p2p/bandwidth";
  r.metrics = {Metric{"bandwidth", 49.7, "GB/s", true, std::nullopt, ""}};
  r.samples = {0.0054, 0.0055, 0.0056, 0.0061};
  r.sample_flags = {0, 0, 0, 0};
  r.stats = summarize(r.samples);
  const size_t full = to_json(r).dump().size();
  drop_samples(r);
  EXPECT_TRUE(r.samples.empty());
  EXPECT_TRUE(r.sample_flags.empty());
  EXPECT_EQ(r.extra.at("samples_dropped"), 4);
  const Result back = result_from_json(to_json(r));
  ASSERT_TRUE(back.stats.has_value());
  EXPECT_DOUBLE_EQ(back.stats->median, 0.00555);
  EXPECT_EQ(back.stats->count, 4u);
  EXPECT_DOUBLE_EQ(*back.metrics.front().value, 49.7);
  EXPECT_LT(to_json(r).dump().size(), full);
  drop_samples(r);  // nothing left to drop: the count stays
  EXPECT_EQ(r.extra.at("samples_dropped"), 4);
}

TEST(ScanExchange, GatherBroadcastSplitOnRankThreads) {
  WorldOptions w;
  w.backend = "threads";
  w.ranks = 4;
  run_world(w, [](RankContext& ctx) {
    const auto names = all_gather_strings(ctx.host_comm, std::string(static_cast<size_t>(ctx.rank) * 3, 'x'));
    EXPECT_EQ(names.size(), 4u);
    for (int r = 0; r < 4; ++r) EXPECT_EQ(names[static_cast<size_t>(r)].size(), static_cast<size_t>(r) * 3);
    Result mine;
    mine.key = "t/r" + std::to_string(ctx.rank);
    std::vector<Result> list;
    if (ctx.rank % 2 == 1) list.push_back(mine);  // ranks with nothing to say take part too
    const auto all = all_gather_results(ctx.host_comm, list);
    EXPECT_EQ(all.size(), 2u);
    EXPECT_EQ(all[1].key, "t/r3");
    EXPECT_EQ(
        broadcast_json(ctx.host_comm, ctx.rank == 0 ? nlohmann::json{{"budget", 12.5}} : nlohmann::json())["budget"],
        12.5);
    // Pairs {0,3} and {1,2}: two sub-worlds at once, keyed so that rank 3 is rank 0 of its pair.
    SubWorld sub(ctx, ctx.rank == 0 || ctx.rank == 3 ? 0 : 1, ctx.rank == 3 ? 0 : 1, 2);
    EXPECT_TRUE(sub.member());
    EXPECT_EQ(sub.ctx().size, 2);
    EXPECT_EQ(sub.ctx().nodes, 2);
    if (ctx.rank == 3) {
      EXPECT_EQ(sub.ctx().rank, 0);
    }
    // Rank 2 stays out of the next sub-world.
    SubWorld some(ctx, ctx.rank == 2 ? -1 : 0, ctx.rank, 3);
    EXPECT_EQ(some.member(), ctx.rank != 2);
    const ScanLayout l = gather_layout(ctx, ctx.rank < 2 ? "a" : "b", ctx.rank % 2 == 0 ? 0 : 1);
    EXPECT_EQ(l.nodes, (std::vector<std::string>{"a", "b"}));
    EXPECT_EQ(l.ranks_of_node[1], (std::vector<int>{2, 3}));
    EXPECT_EQ(l.ranks[3].local, 1);
    EXPECT_EQ(l.ranks[3].gpu, 1);
    EXPECT_EQ(l.node_of(2), 1);
    return 0;
  });
}

}  // namespace
}  // namespace gcb::scan
