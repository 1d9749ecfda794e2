// mem's derived results (α–β fits over copy sweeps, peer ratios), option validation and the
// WAIVED cases a machine without GPUs reports.
#include <gtest/gtest.h>

#include "bench/mem/mem.hpp"
#include "core/error.hpp"
#include "core/gpu.hpp"

namespace gcb::bench {
namespace {

Result measured(const std::string& key, nlohmann::json params, double seconds, double gbps) {
  Result r;
  r.key = key;
  r.params = std::move(params);
  r.samples = {seconds};
  r.stats = summarize(r.samples);
  r.metrics = {Metric{"bandwidth", gbps, "GB/s", true, {}, {}}};
  return r;
}

TEST(MemDerived, FitsEachCopySweep) {
  std::vector<Result> rs;
  const double alpha = 8e-6, beta = 25e9;
  for (double b = 4096; b <= double(1 << 26); b *= 4) {
    rs.push_back(measured("mem/copy/h2d", {{"device", "gpu:0"}, {"engine", "ce"}, {"bytes", b}}, alpha + b / beta, 0));
    rs.push_back(
        measured("mem/copy/h2d", {{"device", "gpu:0"}, {"engine", "sm"}, {"bytes", b}}, 2 * alpha + b / beta, 0));
  }
  const auto derived = mem_derived_results(rs);
  ASSERT_EQ(derived.size(), 2u);  // one fit per engine
  for (const auto& fit : derived) {
    EXPECT_EQ(fit.key, "mem/copy/h2d/fit");
    EXPECT_FALSE(fit.params.contains("bytes"));
    EXPECT_NEAR(*fit.metric("beta")->value, 25.0, 1e-6);
    const double a = fit.params.at("engine") == "ce" ? 8.0 : 16.0;
    EXPECT_NEAR(*fit.metric("alpha")->value, a, 1e-6);  // microseconds
  }
}

TEST(MemDerived, RatiosAgainstPeers) {
  const nlohmann::json host = {{"device", "cpu"}, {"dtype", "fp64"}, {"array_bytes", 1024}, {"threads", 2}};
  std::vector<Result> rs = {measured("mem/host/triad", host, 1, 19.0),
                            measured("mem/host/classic_stream_triad", host, 1, 20.0)};
  rs.push_back(measured("mem/hbm/triad", {{"device", "gpu:0"}, {"dtype", "fp32"}}, 1, 3000));
  rs.push_back(measured("mem/copy/d2d", {{"device", "gpu:0"}, {"engine", "ce"}, {"bytes", 1 << 20}}, 1, 1000));
  rs.push_back(measured("mem/copy/d2d", {{"device", "gpu:0"}, {"engine", "ce"}, {"bytes", 1 << 30}}, 1, 2500));
  rs.push_back(measured("mem/copy/d2d", {{"device", "gpu:0"}, {"engine", "sm"}, {"bytes", 1 << 30}}, 1, 2750));
  const auto derived = mem_derived_results(rs);
  auto ratio = [&](const char* key) -> double {
    for (const auto& r : derived)
      if (r.key == key) return *r.metric("ratio")->value;
    ADD_FAILURE() << key << " missing";
    return 0;
  };
  EXPECT_DOUBLE_EQ(ratio("mem/host/triad_vs_classic_stream"), 0.95);
  EXPECT_DOUBLE_EQ(ratio("mem/hbm/triad_vs_memcpy_d2d"), 3000.0 / 2500.0);  // against the largest size
  EXPECT_DOUBLE_EQ(ratio("mem/copy/d2d_sm_vs_memcpy"), 1.1);
}

TEST(MemDerived, InterleavedRoundsGiveTheMedianOfPerRoundRatios) {
  // Round k pairs only with round k: the median of 0.90, 1.20 and 1.00 is 1.00 (the ratio of the
  // medians of each side, 22/20, would differ).
  std::vector<Result> rs;
  const double ours[] = {18.0, 24.0, 22.0}, classic[] = {20.0, 20.0, 22.0};
  for (int k = 0; k < 3; ++k) {
    const nlohmann::json p = {
        {"device", "cpu"}, {"dtype", "fp64"}, {"array_bytes", 1024}, {"threads", 2}, {"round", k}};
    rs.push_back(measured("mem/host/classic_stream_triad", p, 1, classic[k]));
    rs.push_back(measured("mem/host/triad", p, 1, ours[k]));
  }
  // An fp64 triad of the main sweep (no round) must not be taken for a round.
  rs.push_back(measured("mem/host/triad", {{"device", "cpu"}, {"dtype", "fp64"}, {"array_bytes", 1024}, {"threads", 2}},
                        1, 99.0));
  const auto derived = mem_derived_results(rs);
  const Result* x = nullptr;
  for (const auto& r : derived)
    if (r.key == "mem/host/triad_vs_classic_stream") x = &r;
  ASSERT_NE(x, nullptr);
  ASSERT_EQ(x->status, Status::pass);
  EXPECT_DOUBLE_EQ(*x->metric("ratio")->value, 1.0);
  EXPECT_EQ(x->params.at("rounds"), 3);
  const std::vector<double> per_round = x->extra.at("per_round");
  ASSERT_EQ(per_round.size(), 3u);
  EXPECT_DOUBLE_EQ(per_round[0], 0.9);
  EXPECT_DOUBLE_EQ(per_round[1], 1.2);
  EXPECT_DOUBLE_EQ(per_round[2], 1.0);
}

TEST(MemHostCases, PeerRoundsInterleaveWithAlternatingOrder) {
  MemOptions o;
  o.groups = {"stream"};
  o.kernels = {kernels::StreamOp::copy};
  o.dtypes = {DType::f32};
  o.size = 4096;
  o.peer_rounds = 3;
  const CaseList cases = host_mem_cases(o, 1);
  std::vector<std::string> order;
  for (const auto& c : cases)
    if (c->params().contains("round")) order.push_back(c->key() + "#" + c->params().at("round").dump());
  const std::vector<std::string> want = {
      "mem/host/classic_stream_triad#0", "mem/host/triad#0", "mem/host/triad#1", "mem/host/classic_stream_triad#1",
      "mem/host/classic_stream_triad#2", "mem/host/triad#2"};
  EXPECT_EQ(order, want);
  o.peer_rounds = 0;
  EXPECT_THROW(validate(o), UsageError);
}

TEST(MemDerived, MissingPeerIsWaivedNotInvented) {
  const nlohmann::json host = {{"device", "cpu"}, {"dtype", "fp64"}, {"array_bytes", 1024}, {"threads", 2}};
  std::vector<Result> rs = {measured("mem/host/classic_stream_triad", host, 1, 20.0)};
  const auto derived = mem_derived_results(rs);
  ASSERT_EQ(derived.size(), 1u);
  EXPECT_EQ(derived[0].status, Status::waived);
  EXPECT_TRUE(derived[0].metrics.empty());
}

TEST(MemOptions, Validation) {
  MemOptions o;
  EXPECT_NO_THROW(validate(o));
  for (auto mutate : std::vector<std::function<void(MemOptions&)>>{
           [](MemOptions& m) {
             m.groups = {"stream", "cache"};
           },
           [](MemOptions& m) { m.dtypes = {DType::f16}; }, [](MemOptions& m) { m.vector_bytes = {32}; },
           [](MemOptions& m) { m.copy_factor = 1; }, [](MemOptions& m) { m.copy_min = 0; },
           [](MemOptions& m) { m.size = 100; }, [](MemOptions& m) { m.latency_max = 1024; }}) {
    MemOptions bad;
    mutate(bad);
    EXPECT_THROW(validate(bad), UsageError);
  }
}

TEST(MemCases, NoGpuGivesOneWaivedCasePerGroup) {
  if (gpu::device_count() > 0) GTEST_SKIP() << "this machine has a GPU";
  DeviceSelection sel = select_devices("all");
  EXPECT_TRUE(sel.cpu);
  EXPECT_TRUE(sel.gpus.empty());
  const CaseList cases = gpu_mem_cases(MemOptions{}, sel, 1);
  ASSERT_EQ(cases.size(), 3u);
  for (const auto& c : cases) EXPECT_NE(c->waived_reason().find("no GPU"), std::string::npos);
  EXPECT_THROW(select_devices("gpu:0"), UsageError);
  EXPECT_TRUE(gpu_mem_cases(MemOptions{}, select_devices("cpu"), 1).empty());
}

}  // namespace
}  // namespace gcb::bench
