// gcbench p2p: the matrices, the % of expected arithmetic, WAIVED device cases without GPUs, and
// rank-pair matrices over rank threads (ThreadCommunicator).
#include <gtest/gtest.h>
#include <pthread.h>
#include <sched.h>

#include <chrono>
#include <map>
#include <mutex>
#include <set>
#include <sstream>
#include <vector>

#include "bench/p2p/p2p.hpp"
#include "bench/common/runner.hpp"
#include "collectives/rendezvous.hpp"
#include "collectives/world.hpp"
#include "core/error.hpp"

namespace gcb::bench {
namespace {

Result pair_result(const std::string& key, int s, int d, double gbps, const std::string& peer = "on") {
  Result r;
  r.key = key;
  r.params = {{"src", s}, {"dst", d}, {"engine", "ce"}, {"peer_access", peer}, {"scope", "device"}, {"bytes", 1024}};
  r.metrics = {Metric{"bandwidth", gbps, "GB/s", true, {}, {}}};
  return r;
}

TEST(P2pMatrix, RowsAreSourcesColumnsDestinationsDiagonalDash) {
  std::vector<Result> rs = {pair_result("p2p/bandwidth", 0, 1, 12.5), pair_result("p2p/bandwidth", 1, 0, 7.25)};
  const std::string out = render_p2p_matrices(rs);
  EXPECT_NE(out.find(" src\\dst         0         1\n"), std::string::npos) << out;
  EXPECT_NE(out.find("       0         -     12.50\n"), std::string::npos) << out;
  EXPECT_NE(out.find("       1      7.25         -\n"), std::string::npos) << out;
  EXPECT_NE(out.find("p2p/bandwidth [GB/s], row = src, column = dst\n  bytes 1 KiB, engine ce, peer_access on, "
                     "scope device\n"),
            std::string::npos)
      << out;
}

TEST(P2pMatrix, OtherParamsMakeOtherMatricesAndStatusesShowAsLetters) {
  Result waived = pair_result("p2p/bandwidth", 1, 0, 0, "off");
  waived.status = Status::waived;
  waived.reason = "no peer";
  waived.metrics.clear();
  std::vector<Result> rs = {pair_result("p2p/bandwidth", 0, 1, 3.0), pair_result("p2p/bandwidth", 0, 1, 2.0, "off"),
                            waived};
  rs[1].extra["warning"] = "too fast";
  const std::string out = render_p2p_matrices(rs);
  EXPECT_NE(out.find("peer_access on"), std::string::npos);
  EXPECT_NE(out.find("peer_access off"), std::string::npos);
  EXPECT_NE(out.find("       1         W         -\n"), std::string::npos) << out;
  EXPECT_NE(out.find("  WAIVED: no peer\n"), std::string::npos) << out;
  EXPECT_NE(out.find("  warning 0->1: too fast\n"), std::string::npos) << out;
  // Results without src/dst (the host aggregate) and other families make no matrix.
  Result host;
  host.key = "p2p/host_aggregate";
  host.params = {{"direction", "all_to_host"}};
  Result mem;
  mem.key = "mem/copy/d2d";
  mem.params = {{"src", 0}, {"dst", 1}};
  EXPECT_EQ(render_p2p_matrices({host, mem}), "");
}

// p2p's console view shows each result once: pairs in their matrix, only what no matrix shows in
// the generic table; a ping-pong latency matrix says its values are one-way and how they are
// derived from the round trip.
TEST(P2pMatrix, ViewShowsEachResultOnceAndLabelsOneWayLatency) {
  Result lat = pair_result("p2p/latency", 0, 1, 0);
  lat.metrics = {Metric{"latency", 1234.5, "ns", false, {}, {}}};
  lat.model = {{"one_way", "round-trip time / 2 (osu_latency)"}};
  Result host;
  host.key = "p2p/host_aggregate";
  host.params = {{"direction", "all_to_host"}, {"scope", "host"}};
  host.status = Status::waived;
  host.reason = "no GPU here";
  const std::vector<Result> rs = {pair_result("p2p/bandwidth", 0, 1, 12.5), pair_result("p2p/bandwidth", 1, 0, 7.25),
                                  lat, host};
  const std::string out = render_p2p_view(rs);
  auto count = [&out](const std::string& what) {
    size_t n = 0;
    for (size_t at = out.find(what); at != std::string::npos; at = out.find(what, at + 1)) ++n;
    return n;
  };
  EXPECT_EQ(count("12.50"), 1u) << out;
  EXPECT_EQ(count("1234.50"), 1u) << out;
  EXPECT_EQ(count("1234.5 "), 0u) << out;  // no generic row for a pair
  EXPECT_EQ(count("host_aggregate"), 1u) << out;
  EXPECT_EQ(count("no GPU here"), 1u) << out;
  EXPECT_NE(out.find("[ns one-way = round-trip time / 2 (osu_latency)], row = src"), std::string::npos) << out;
  EXPECT_NE(out.find("[GB/s], row = src"), std::string::npos) << out;
  // A latency of 10 µs or more reads in µs, the matrix's title saying so.
  Result slow = lat;
  slow.metrics.front().value = 101296.88;
  const std::string us = render_p2p_matrices({slow});
  EXPECT_NE(us.find("[µs one-way = round-trip time / 2 (osu_latency)]"), std::string::npos) << us;
  EXPECT_NE(us.find("    101.30\n"), std::string::npos) << us;
  // Pairs alone: no generic table at all.
  EXPECT_EQ(render_p2p_view({rs[0], rs[1]}), render_p2p_matrices({rs[0], rs[1]}));
}

// On a host without GPUs the device cases are waived as a whole: the view names them under their
// reason once (it once printed 13 rows of "-" 155 columns wide, each with the same reason), and a
// matrix title wraps its params instead of running past 100 columns.
TEST(P2pMatrix, WaivedCasesOnceUnderTheirReasonAndTitlesFit100Columns) {
  std::vector<Result> rs;
  for (const char* key : {"p2p/bandwidth", "p2p/bandwidth", "p2p/bidir_bandwidth", "p2p/latency"}) {
    Result w;
    w.key = key;
    w.params = {{"bytes", 268435456}, {"engine", "ce"}, {"scope", "device"}};
    w.status = Status::waived;
    w.reason = "needs two GPUs (0 found)";
    w.metrics.clear();
    rs.push_back(w);
  }
  rs.back().reason = "no GPU here";
  Result pair = pair_result("p2p/bandwidth", 0, 1, 1.05);
  pair.params["path"] = "memcpy through the ThreadCommunicator in one process (not a link)";
  pair.params["backend"] = "threads";
  pair.params["bytes"] = 67108864;
  rs.push_back(pair);
  const std::string out = render_p2p_view(rs);
  auto count = [&out](const std::string& what) {
    size_t n = 0;
    for (size_t at = out.find(what); at != std::string::npos; at = out.find(what, at + 1)) ++n;
    return n;
  };
  EXPECT_EQ(count("needs two GPUs (0 found)"), 1u) << out;
  EXPECT_NE(out.find("p2p: 4 case(s) waived (not run here)\n  bandwidth ×2, bidir_bandwidth\n    needs two GPUs"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("\n  latency\n    no GPU here\n"), std::string::npos) << out;
  EXPECT_EQ(out.find("WAIVED"), std::string::npos) << out;  // no table of waived rows
  EXPECT_NE(out.find("p2p/bandwidth [GB/s], row = src, column = dst\n  "), std::string::npos) << out;
  std::istringstream lines(out);
  for (std::string line; std::getline(lines, line);) {
    size_t cols = 0;  // characters, not bytes ("×")
    for (const char ch : line) cols += (static_cast<unsigned char>(ch) & 0xC0) != 0x80;
    EXPECT_LE(cols, 100u) << line;
  }
}

TEST(P2pExpected, NvlinkPcieNetworkRates) {
  // H100 SXM: 18 links × 25 GB/s per direction = 450 GB/s (NVIDIA H100 datasheet).
  const LinkRate nv = nvlink_rate(18, 25);
  ASSERT_TRUE(nv.gbps);
  EXPECT_DOUBLE_EQ(*nv.gbps, 450);
  EXPECT_EQ(nv.source, "nvlink:18x25GB/s");
  // nccl #1264: 380 GB/s unidirectional on 8×H100 SXM = 84.4 % of 450.
  EXPECT_NEAR(*percent_of_expected(380, nv), 84.444, 1e-3);
  EXPECT_FALSE(nvlink_rate(0, 25).gbps);
  EXPECT_DOUBLE_EQ(*pcie_rate(5, 16).gbps, 63.0);
  EXPECT_DOUBLE_EQ(*pcie_rate(4, 8).gbps, 15.75);
  EXPECT_EQ(pcie_rate(4, 16).source, "pcie:gen4 x16");
  const LinkRate ndr = network_rate(400, "mlx5_0");
  EXPECT_DOUBLE_EQ(*ndr.gbps, 50);  // 4x NDR: 400 Gb/s = 50 GB/s
  EXPECT_FALSE(network_rate(0, "eth0").gbps);
  EXPECT_DOUBLE_EQ(*slower(pcie_rate(5, 16), pcie_rate(4, 16)).gbps, 31.5);
  EXPECT_FALSE(slower(pcie_rate(5, 16), LinkRate{}).gbps);
  EXPECT_FALSE(percent_of_expected(10, LinkRate{}));
}

TEST(P2pExpected, WarnsOnlyAboveTheLinkRate) {
  const LinkRate nv = nvlink_rate(18, 25);
  EXPECT_EQ(exceeds_link_warning(450, nv), "");
  EXPECT_EQ(exceeds_link_warning(100, LinkRate{}), "");
  const std::string w = exceeds_link_warning(495, nv);
  EXPECT_NE(w.find("exceeds the link rate 450.00 GB/s (nvlink:18x25GB/s) by 10.0 %"), std::string::npos) << w;
  const auto j = link_extra(495, nv);
  EXPECT_DOUBLE_EQ(j.at("percent_of_expected").get<double>(), 110);
  EXPECT_DOUBLE_EQ(j.at("expected_gbps").get<double>(), 450);
  EXPECT_TRUE(j.contains("warning"));
  EXPECT_FALSE(link_extra(300, nv).contains("warning"));
  EXPECT_TRUE(link_extra(300, LinkRate{}).empty());
}

HarnessOptions fast_harness() {
  HarnessOptions h;
  h.warmup = 1;
  h.min_samples = 2;
  h.max_samples = 3;
  h.min_time = 0;
  h.max_time = 1;
  return h;
}

TEST(P2pDevice, WaivedWithoutTwoGpus) {
  P2pOptions o;
  o.size = 4096;
  for (const std::vector<int>& gpus : {std::vector<int>{}, std::vector<int>{0}}) {
    CaseList cases = p2p_device_cases(o, gpus, "needs two GPUs (0 found: none here)", 1);
    ASSERT_EQ(cases.size(), 11u);  // 2 keys × 2 engines × 2 peer states, latency, 2 copy-call latencies
    Runner runner(RunnerOptions{fast_harness(), false, true}, nullptr);
    runner.run_all(cases);
    std::set<std::string> keys;
    for (const auto& r : runner.results()) {
      EXPECT_EQ(r.status, Status::waived) << r.key;
      EXPECT_EQ(r.reason.rfind("needs two GPUs", 0), 0u) << r.reason;
      EXPECT_FALSE(r.params.contains("src"));
      keys.insert(r.key);
    }
    EXPECT_EQ(keys,
              (std::set<std::string>{"p2p/bandwidth", "p2p/bidir_bandwidth", "p2p/latency", "p2p/copy_call_latency"}));
  }
  CaseList host = p2p_host_cases(o, {}, "no CUDA device");
  ASSERT_EQ(host.size(), 2u);
  for (const auto& c : host) EXPECT_EQ(c->waived_reason(), "no CUDA device");
}

TEST(P2pOptionsCheck, RefusesImpossibleValues) {
  P2pOptions o;
  EXPECT_NO_THROW(validate(o));
  P2pOptions bad = o;
  bad.modes = {"device", "bogus"};
  EXPECT_THROW(validate(bad), UsageError);
  bad = o;
  bad.size = 0;
  EXPECT_THROW(validate(bad), UsageError);
  bad = o;
  bad.iters = 0;
  EXPECT_THROW(validate(bad), UsageError);
  bad = o;
  bad.backend = "carrier-pigeon";
  EXPECT_THROW(validate(bad), UsageError);
  bad = o;
  bad.latency_size = o.size + 1;
  EXPECT_THROW(validate(bad), UsageError);
  bad = o;
  bad.rank_measures = {"bandwidth", "jitter"};  // no flag sets them: an invariant
  EXPECT_THROW(validate(bad), Fault);
}

TEST(P2pRanks, FourThreadRanksFillEveryOffDiagonalCell) {
  P2pOptions o;
  o.size = 64 * 1024;
  o.latency_size = 8;
  Runner runner(RunnerOptions{fast_harness(), false, true}, nullptr);
  WorldOptions w;
  w.ranks = 4;
  w.timeout = std::chrono::milliseconds(30'000);
  uint64_t wrong = 99;
  run_world(w, [&](RankContext& ctx) {
    const uint64_t x = run_p2p_ranks_on_rank(o, fast_harness(), ctx, &runner, 3);
    if (ctx.rank == 0) wrong = x;
    return 0;
  });
  EXPECT_EQ(wrong, 0u);
  std::map<std::string, std::set<std::pair<int, int>>> cells;
  for (const auto& r : runner.results()) {
    ASSERT_EQ(r.status, Status::pass) << r.key << " " << r.reason;
    const int s = r.params.at("src").get<int>(), d = r.params.at("dst").get<int>();
    EXPECT_NE(s, d);
    EXPECT_EQ(r.params.at("scope"), "rank");
    EXPECT_EQ(r.params.at("backend"), "threads");
    ASSERT_FALSE(r.metrics.empty());
    ASSERT_TRUE(r.metrics.front().value);
    EXPECT_GT(*r.metrics.front().value, 0) << r.key;
    EXPECT_EQ(r.metrics.front().name, r.key == "p2p/latency" ? "latency" : "bandwidth");
    EXPECT_EQ(r.params.at("bytes").get<uint64_t>(), r.key == "p2p/latency" ? 8u : 65536u);
    cells[r.key].insert({s, d});
  }
  ASSERT_EQ(cells.size(), 3u);
  for (const auto& [key, pairs] : cells) EXPECT_EQ(pairs.size(), 12u) << key;  // 4 × 3 ordered pairs
  const std::string out = render_p2p_matrices(runner.results());
  EXPECT_NE(out.find(" src\\dst         0         1         2         3\n"), std::string::npos) << out;
  EXPECT_NE(out.find("memcpy through the ThreadCommunicator"), std::string::npos) << out;
}

// Rank threads are kept on CPUs of their own while a pair is timed when they fit the CPUs the
// process may use (rank r on the r-th, the same in every process), recorded in extra.rank_cpus;
// more ranks than CPUs are not pinned (-1); afterwards each rank thread has its mask back.
TEST(P2pRanks, RankThreadsKeptOnTheirOwnCpusWhileTimed) {
  cpu_set_t process;
  CPU_ZERO(&process);
  ASSERT_EQ(sched_getaffinity(0, sizeof(process), &process), 0);
  const int usable = CPU_COUNT(&process);
  for (int ranks : {2, usable + 1}) {
    P2pOptions o;
    o.size = 16 * 1024;
    o.latency_size = 8;
    Runner runner(RunnerOptions{fast_harness(), false, true}, nullptr);
    std::mutex mu;
    std::vector<bool> mask_back(static_cast<size_t>(ranks), false);
    WorldOptions w;
    w.ranks = ranks;
    w.timeout = std::chrono::milliseconds(30'000);
    run_world(w, [&](RankContext& ctx) {
      run_p2p_ranks_on_rank(o, fast_harness(), ctx, &runner, 3);
      cpu_set_t after;
      CPU_ZERO(&after);
      pthread_getaffinity_np(pthread_self(), sizeof(after), &after);
      std::lock_guard lk(mu);
      mask_back[static_cast<size_t>(ctx.rank)] = CPU_EQUAL(&after, &process);
      return 0;
    });
    ASSERT_FALSE(runner.results().empty());
    for (const Result& r : runner.results()) {
      ASSERT_TRUE(r.extra.contains("rank_cpus")) << r.key;
      ASSERT_EQ(r.extra["rank_cpus"].size(), static_cast<size_t>(ranks)) << r.key;
      for (int k = 0; k < ranks; ++k)
        EXPECT_EQ(r.extra["rank_cpus"][static_cast<size_t>(k)], ranks <= usable ? detail::nth_cpu(process, k) : -1)
            << ranks << " ranks, rank " << k << " of " << r.key;
    }
    for (int k = 0; k < ranks; ++k) EXPECT_TRUE(mask_back[static_cast<size_t>(k)]) << ranks << " ranks, rank " << k;
  }
}

// What `gcbench scan` asks of the rank pairs: chosen measures, symmetric ones once per pair.
TEST(P2pRanks, ChosenMeasuresAndSymmetricOnce) {
  P2pOptions o;
  o.size = 16 * 1024;
  o.rank_measures = {"bandwidth", "bidir_bandwidth"};
  o.symmetric_once = true;
  Runner runner(RunnerOptions{fast_harness(), false, true}, nullptr);
  WorldOptions w;
  w.ranks = 3;
  w.timeout = std::chrono::milliseconds(30'000);
  run_world(
      w, [&](RankContext& ctx) { return static_cast<int>(run_p2p_ranks_on_rank(o, fast_harness(), ctx, &runner, 3)); });
  std::map<std::string, std::set<std::pair<int, int>>> cells;
  for (const auto& r : runner.results())
    cells[r.key].insert({r.params.at("src").get<int>(), r.params.at("dst").get<int>()});
  EXPECT_EQ(cells.size(), 2u);                   // no latency
  EXPECT_EQ(cells["p2p/bandwidth"].size(), 6u);  // both orders
  EXPECT_EQ(cells["p2p/bidir_bandwidth"], (std::set<std::pair<int, int>>{{0, 1}, {0, 2}, {1, 2}}));
}

}  // namespace
}  // namespace gcb::bench
