// Verdicts of every stage of `gcbench scan` on synthetic results shaped as the stages tag them:
// GPU and host figures, intra-node links, inter-node pairs with attribution, the collective
// search, the reference step, drift against a baseline, culprit ranking and the result form.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>

#include "bench/scan/drift.hpp"
#include "bench/scan/findings.hpp"
#include "bench/scan/judge.hpp"
#include "bench/scan/pair_search.hpp"
#include "core/nvml.hpp"

namespace gcb::scan {
namespace {

Result measured(const std::string& key, nlohmann::json params, const std::string& metric, double value,
                const std::string& unit, bool higher = true, std::optional<double> peak = std::nullopt) {
  Result r;
  r.key = key;
  r.params = std::move(params);
  r.metrics.push_back(Metric{metric, value, unit, higher, peak, peak ? "spec:test" : ""});
  return r;
}

const Finding* find(const std::vector<Finding>& fs, const std::string& stage, SubjectKind kind, const std::string& node,
                    int gpu = -2) {
  for (const auto& f : fs)
    if (f.stage == stage && f.kind == kind && f.node == node && (gpu == -2 || f.gpu == gpu)) return &f;
  return nullptr;
}

const std::vector<std::string> kNodes = {"n1", "n2", "n3", "n4"};

TEST(ScanJudgeDevice, SlowGpuIsNamedWithItsFleetAndSpec) {
  std::vector<Result> rs;
  const double triad[4][2] = {{3.02, 3.01}, {3.03, 3.00}, {3.02, 2.41}, {2.99, 3.04}};
  for (int n = 0; n < 4; ++n)
    for (int g = 0; g < 2; ++g)
      rs.push_back(measured("mem/hbm/triad",
                            {{"stage", "device"}, {"node", kNodes[n]}, {"gpu", g}, {"sku", "H100"}, {"dtype", "fp32"}},
                            "bandwidth_median", triad[n][g] * 1000, "GB/s", true, 3350.0));
  const auto fs = judge_device(rs, kNodes, RobustRule{});
  const Finding* slow = find(fs, "device", SubjectKind::gpu, "n3", 1);
  ASSERT_TRUE(slow);
  EXPECT_EQ(slow->verdict, Verdict::slow);
  EXPECT_NE(slow->evidence.find("HBM triad bandwidth 2.410 TB/s, fleet median 3.015 TB/s (8 peers)"), std::string::npos)
      << slow->evidence;
  EXPECT_NEAR(*slow->percent_of_expected, 2410.0 / 3350 * 100, 1e-9);
  EXPECT_EQ(find(fs, "device", SubjectKind::gpu, "n3", 0)->verdict, Verdict::ok);
  EXPECT_EQ(find(fs, "device", SubjectKind::node, "n3")->verdict, Verdict::slow);
  EXPECT_EQ(find(fs, "device", SubjectKind::node, "n1")->verdict, Verdict::ok);
  // Ranked: the GPU, not its node's rollup beside it.
  const Culprits c = rank_culprits(fs);
  ASSERT_EQ(c.ranked.size(), 1u);
  EXPECT_EQ(c.ranked[0].subject(), "n3 GPU1");
}

TEST(ScanJudgeDevice, FailedMissingThrottledAndBelowSpec) {
  std::vector<Result> rs;
  for (int n = 0; n < 3; ++n) {  // n4 reports nothing
    Result r = measured("gemm/bf16",
                        {{"stage", "device"}, {"node", kNodes[n]}, {"gpu", 0}, {"sku", "H100"}, {"dtype", "bf16"}},
                        "tflops", 700, "TFLOP/s", true, 989.0);
    if (n == 1) r.sample_flags = {nvml::kHwSlowdown, nvml::kHwSlowdown, 0, 0};  // 50 % of samples
    rs.push_back(r);
  }
  Result bad =
      measured("mem/hbm/triad", {{"stage", "device"}, {"node", "n1"}, {"gpu", 0}}, "bandwidth_median", 1, "GB/s");
  bad.status = Status::fail;
  bad.reason = "verification failed: a[3] = 0";
  rs.push_back(bad);
  // A lone GPU at 40 % of spec: no peers to compare, but below half of its expected value.
  rs.push_back(measured("mem/hbm/triad", {{"stage", "device"}, {"node", "n2"}, {"gpu", 0}, {"sku", "H100"}},
                        "bandwidth_median", 1340, "GB/s", true, 3350.0));
  const auto fs = judge_device(rs, kNodes, RobustRule{});
  EXPECT_EQ(find(fs, "device", SubjectKind::node, "n1")->verdict, Verdict::fail);
  EXPECT_EQ(find(fs, "device", SubjectKind::node, "n4")->verdict, Verdict::missing);
  const Finding* n2 = find(fs, "device", SubjectKind::node, "n2");
  EXPECT_EQ(n2->verdict, Verdict::slow);
  bool throttle = false, spec = false;
  for (const auto& f : fs) {
    throttle = throttle || (f.node == "n2" && f.figure == "bf16 GEMM clocks" && f.verdict == Verdict::slow &&
                            f.evidence.find("throttle: hw_slowdown in 50 % of samples") != std::string::npos);
    spec =
        spec || (f.node == "n2" && f.figure == "HBM triad bandwidth" && f.verdict == Verdict::slow &&
                 f.evidence.find("(1 peer: too few for the median/MAD rule), 40 % of expected") != std::string::npos);
  }
  EXPECT_TRUE(throttle);
  EXPECT_TRUE(spec);
}

// Copy-engine bandwidth of every ordered GPU pair of every node over NVLink (450 GB/s expected),
// the value of each from `gbps(node, src, dst)`.
template <typename Speed>
std::vector<Result> nvlink_pairs(int gpus, Speed gbps) {
  std::vector<Result> rs;
  for (const auto& node : kNodes)
    for (int s = 0; s < gpus; ++s)
      for (int d = 0; d < gpus; ++d) {
        if (s == d) continue;
        Result r = measured(
            "p2p/bandwidth",
            {{"stage", "links"}, {"node", node}, {"src", s}, {"dst", d}, {"engine", "ce"}, {"peer_access", "on"}},
            "bandwidth_median", gbps(node, s, d), "GB/s");
        r.extra = {{"expected_gbps", 450.0}, {"expected_source", "nvlink:18x25GB/s"}};
        rs.push_back(r);
      }
  return rs;
}

TEST(ScanJudgeLinks, SlowNvlinkPairAgainstItsLinkType) {
  const auto rs =
      nvlink_pairs(2, [](const std::string& node, int s, int) { return node == "n2" && s == 1 ? 120.0 : 370.0; });
  const auto fs = judge_links(rs, kNodes, RobustRule{});
  const Finding* n2 = find(fs, "links", SubjectKind::node, "n2");
  ASSERT_TRUE(n2);
  EXPECT_EQ(n2->verdict, Verdict::slow);
  EXPECT_NE(n2->evidence.find("n2 GPU1 -> GPU0"), std::string::npos) << n2->evidence;
  EXPECT_EQ(find(fs, "links", SubjectKind::node, "n1")->verdict, Verdict::ok);
}

TEST(ScanJudgeLinks, AGpuInEverySlowPairIsTheCulprit) {
  // Four GPUs per node; n2's GPU1 at half speed in each of its pairs (both directions).
  const auto rs = nvlink_pairs(4, [](const std::string& node, int s, int d) {
    return (node == "n2" && (s == 1 || d == 1) ? 180 : 370) * (1 + 0.01 * ((s * 3 + d) % 5));
  });
  const auto fs = judge_links(rs, kNodes, RobustRule{});
  const Finding* gpu = find(fs, "links", SubjectKind::gpu, "n2", 1);
  ASSERT_TRUE(gpu);
  EXPECT_EQ(gpu->verdict, Verdict::slow);
  EXPECT_NE(gpu->evidence.find("over its 6 GPU-pair links"), std::string::npos) << gpu->evidence;
  for (int g : {0, 2, 3}) EXPECT_EQ(find(fs, "links", SubjectKind::gpu, "n2", g), nullptr) << g;
  EXPECT_EQ(find(fs, "links", SubjectKind::node, "n2")->evidence.rfind("n2 GPU1: ", 0), 0u);
  const Culprits c = rank_culprits(fs);
  ASSERT_EQ(c.ranked.size(), 1u);
  EXPECT_EQ(c.ranked[0].subject(), "n2 GPU1");
}

// Directional pair results as the pair stage tags them: every ordered pair of n1..n4.
std::vector<Result> pairs(double normal, const std::function<double(int, int)>& bw) {
  std::vector<Result> rs;
  for (int s = 0; s < 4; ++s)
    for (int d = 0; d < 4; ++d) {
      if (s == d) continue;
      rs.push_back(measured("p2p/bandwidth",
                            {{"stage", "pairs"}, {"src_node", kNodes[s]}, {"dst_node", kNodes[d]}, {"rail", 0}},
                            "bandwidth_median", bw ? bw(s, d) : normal, "GB/s"));
    }
  return rs;
}

TEST(ScanJudgePairs, ThrottledSenderIsTheCulpritAndExplainsItsLinks) {
  // n4's sends at 1/500, the others spread over ±30 %.
  auto rs = pairs(1, [](int s, int d) { return s == 3 ? 0.002 : 1.0 + 0.1 * ((s * 7 + d * 3) % 7 - 3); });
  const auto fs = judge_pairs(rs, kNodes, RobustRule{3.5, 0.9, 50, 3});
  const Finding* n4 = find(fs, "pairs", SubjectKind::node, "n4");
  ASSERT_TRUE(n4);
  EXPECT_EQ(n4->verdict, Verdict::slow);
  EXPECT_NE(n4->evidence.find("3 of 3 outgoing send bandwidth links SLOW"), std::string::npos) << n4->evidence;
  for (const char* ok : {"n1", "n2", "n3"})
    EXPECT_EQ(find(fs, "pairs", SubjectKind::node, ok)->verdict, Verdict::ok) << ok;
  const Culprits c = rank_culprits(fs);
  ASSERT_EQ(c.ranked.size(), 1u);
  EXPECT_EQ(c.ranked[0].subject(), "n4");
  EXPECT_EQ(c.explained_links, 3u);
}

TEST(ScanJudgePairs, OneBadCableIsALinkNotANode) {
  auto rs = pairs(1, [](int s, int d) { return s == 0 && d == 2 ? 0.05 : 1.0 + 0.01 * (s + d); });
  const auto fs = judge_pairs(rs, kNodes, RobustRule{});
  for (const auto& n : kNodes) EXPECT_EQ(find(fs, "pairs", SubjectKind::node, n)->verdict, Verdict::ok) << n;
  const Culprits c = rank_culprits(fs);
  ASSERT_EQ(c.ranked.size(), 1u);
  EXPECT_EQ(c.ranked[0].subject(), "n1 -> n3 rail 0");
  EXPECT_EQ(c.explained_links, 0u);
}

TEST(ScanJudgePairs, AConfirmationForgivesATransientButNotAFault) {
  auto rs = pairs(1, [](int s, int d) {
    if (s == 1 && d == 2) return 0.05;  // slow once...
    return s == 3 ? 0.002 : 1.0 + 0.01 * (s + d);
  });
  // ...and fine when measured again; node 4's links are slow again.
  Result again = measured("p2p/bandwidth",
                          {{"stage", "pairs"}, {"src_node", "n2"}, {"dst_node", "n3"}, {"rail", 0}, {"confirm", true}},
                          "bandwidth_median", 1.02, "GB/s");
  rs.push_back(again);
  Result still = measured("p2p/bandwidth",
                          {{"stage", "pairs"}, {"src_node", "n4"}, {"dst_node", "n1"}, {"rail", 0}, {"confirm", true}},
                          "bandwidth_median", 0.0021, "GB/s");
  rs.push_back(still);
  const auto fs = judge_pairs(rs, kNodes, RobustRule{});
  const Culprits c = rank_culprits(fs);
  ASSERT_EQ(c.ranked.size(), 1u);
  EXPECT_EQ(c.ranked[0].subject(), "n4");
  for (const auto& f : fs)
    if (f.kind == SubjectKind::link && f.node == "n4" && f.peer == "n1") {
      EXPECT_EQ(*f.value, 0.0021);
      EXPECT_NE(f.evidence.find("best of 2 measurements"), std::string::npos) << f.evidence;
    }
  // A failed measurement is not forgiven by a good one.
  rs.push_back(measured("p2p/bandwidth", {{"stage", "pairs"}, {"src_node", "n1"}, {"dst_node", "n2"}, {"rail", 0}},
                        "bandwidth_median", 1, "GB/s"));
  rs.back().status = Status::fail;
  rs.back().reason = "verification failed";
  bool failed = false;
  for (const auto& f : judge_pairs(rs, kNodes, RobustRule{}))
    failed = failed || (f.kind == SubjectKind::link && f.node == "n1" && f.peer == "n2" && f.verdict == Verdict::fail);
  EXPECT_TRUE(failed);
}

// Send bandwidth of every ordered pair of `nodes` nodes "m1".."mN" on `rails` rails.
std::vector<std::string> names(int n) {
  std::vector<std::string> out;
  for (int i = 1; i <= n; ++i) out.push_back("m" + std::to_string(i));
  return out;
}
std::vector<Result> matrix(int n, int rails, const std::function<double(int, int, int)>& bw) {
  std::vector<Result> rs;
  const auto ns = names(n);
  for (int s = 0; s < n; ++s)
    for (int d = 0; d < n; ++d)
      for (int r = 0; r < rails; ++r)
        if (s != d)
          rs.push_back(measured("p2p/bandwidth",
                                {{"stage", "pairs"}, {"src_node", ns[s]}, {"dst_node", ns[d]}, {"rail", r}},
                                "bandwidth_median", bw(s, d, r), "GB/s"));
  return rs;
}
std::vector<std::string> named(const std::vector<Finding>& fs) {
  std::vector<std::string> out;
  for (const auto& f : fs)
    if (f.stage == "pairs" && f.kind == SubjectKind::node && f.verdict != Verdict::ok) out.push_back(f.node);
  return out;
}
// Deterministic spread of ±4 % per link.
double jitter(int s, int d, int r) { return 1 + 0.04 * (((s * 7 + d * 13 + r * 5) % 9) - 4) / 4.0; }

TEST(ScanJudgePairs, ANodeInEverySlowPairIsNamedWhenTheLinksCannotTell) {
  // The reported case: four nodes, m4's link throttled to 40 % both ways. Half of the twelve
  // links touch m4, so the fleet's median sits between the two levels and no link is SLOW on
  // its own; m4's median over its links is 40 % of every other node's.
  auto rs = matrix(4, 1, [](int s, int d, int r) { return (s == 3 || d == 3 ? 0.4 : 1.0) * jitter(s, d, r); });
  const auto fs = judge_pairs(rs, names(4), RobustRule{});
  for (const auto& f : fs)
    if (f.kind == SubjectKind::link) {
      EXPECT_EQ(f.verdict, Verdict::ok) << f.subject() << ": " << f.evidence;
    }
  EXPECT_EQ(named(fs), std::vector<std::string>{"m4"});
  const Finding* m4 = find(fs, "pairs", SubjectKind::node, "m4");
  EXPECT_NE(m4->evidence.find("median outgoing send bandwidth over its 3 links"), std::string::npos) << m4->evidence;
  EXPECT_NE(m4->evidence.find("against the other nodes' medians (0 of 3 outgoing send bandwidth links SLOW"),
            std::string::npos)
      << m4->evidence;
  EXPECT_NEAR(*m4->shortfall, 0.6, 0.05);
}

TEST(ScanJudgePairs, ThreeNodesAreEnoughForTheNodeRule) {
  // Three nodes: the slow one is in both of its pairs, each other node in one of two.
  auto slow_node = matrix(3, 1, [](int s, int d, int r) { return (s == 1 || d == 1 ? 0.3 : 1.0) * jitter(s, d, r); });
  EXPECT_EQ(named(judge_pairs(slow_node, names(3), RobustRule{})), std::vector<std::string>{"m2"});
  // One slow pair is a link: both its ends have one fast link too, and the link is named.
  auto slow_link = matrix(3, 1, [](int s, int d, int r) { return ((s + d == 1) ? 0.3 : 1.0) * jitter(s, d, r); });
  const auto fs = judge_pairs(slow_link, names(3), RobustRule{});
  EXPECT_TRUE(named(fs).empty());
  const Culprits c = rank_culprits(fs);
  ASSERT_EQ(c.ranked.size(), 2u);  // m1 -> m2 and m2 -> m1
  for (const auto& f : c.ranked) EXPECT_EQ(f.kind, SubjectKind::link) << f.subject();
  // Two nodes: nothing to compare a node with (the rule needs three).
  auto two = matrix(2, 1, [](int s, int, int) { return s == 1 ? 0.3 : 1.0; });
  EXPECT_TRUE(named(judge_pairs(two, names(2), RobustRule{})).empty());
}

TEST(ScanJudgePairs, ASlowNicIsItsRailOfItsNode) {
  // Eight nodes on four rails; m6's rail-2 NIC at 30 % both ways: 14 of its node's 56 directional
  // links, no majority, but its rail-2 median against every other (node, rail)'s.
  auto rs =
      matrix(8, 4, [](int s, int d, int r) { return (r == 2 && (s == 5 || d == 5) ? 0.3 : 1.0) * jitter(s, d, r); });
  const auto fs = judge_pairs(rs, names(8), RobustRule{});
  EXPECT_EQ(named(fs), std::vector<std::string>{"m6"});
  const Finding* m6 = find(fs, "pairs", SubjectKind::node, "m6");
  EXPECT_EQ(m6->rail, 2);
  EXPECT_EQ(m6->evidence.rfind("rail 2 median outgoing send bandwidth over its 7 links", 0), 0u) << m6->evidence;
}

TEST(ScanJudgePairs, AMeasurementAgainWithAHealthyNodeConfirmsOrClears) {
  auto rs = matrix(4, 1, [](int s, int d, int r) { return (s == 3 || d == 3 ? 0.4 : 1.0) * jitter(s, d, r); });
  auto probe = [&](double v) {
    auto out = rs;
    for (auto [s, d] : {std::pair{"m4", "m1"}, std::pair{"m1", "m4"}})
      out.push_back(measured("p2p/bandwidth",
                             {{"stage", "pairs"}, {"src_node", s}, {"dst_node", d}, {"rail", 0}, {"probe", true}},
                             "bandwidth_median", v, "GB/s"));
    return out;
  };
  // Slow again with m1: confirmed.
  auto fs = judge_pairs(probe(0.41), names(4), RobustRule{});
  EXPECT_EQ(named(fs), std::vector<std::string>{"m4"});
  EXPECT_NE(find(fs, "pairs", SubjectKind::node, "m4")->evidence.find("; confirmed: measured again with m1"),
            std::string::npos);
  // At the fleet's speed with m1: the rounds caught a transient.
  fs = judge_pairs(probe(0.98), names(4), RobustRule{});
  EXPECT_TRUE(named(fs).empty());
  EXPECT_EQ(find(fs, "pairs", SubjectKind::node, "m4")->evidence.rfind("in line once measured again with m1", 0), 0u);
}

TEST(ScanJudgePairs, FailedTransfersAndNodesWithoutPairs) {
  auto rs = pairs(1, [](int s, int) { return 1.0 + 0.01 * s; });
  rs.erase(std::remove_if(rs.begin(), rs.end(),
                          [](const Result& r) { return r.params["src_node"] == "n4" || r.params["dst_node"] == "n4"; }),
           rs.end());
  for (auto& r : rs)
    if (r.params["src_node"] == "n1") {
      r.status = Status::fail;
      r.reason = "verification failed: 12 bytes received wrong";
    }
  const auto fs = judge_pairs(rs, kNodes, RobustRule{});
  EXPECT_EQ(find(fs, "pairs", SubjectKind::node, "n1")->verdict, Verdict::fail);
  EXPECT_EQ(find(fs, "pairs", SubjectKind::node, "n4")->verdict, Verdict::missing);
}

// The bisection's links are measured once each: at 4,096 nodes (16,384 links) a 3.5 σ cut lets
// about four healthy ones through on noise. PairSearch measures the SLOW ones again and
// judge_pairs keeps each link's best: a transient clears, a fault stays.
TEST(ScanPairSearch, TheBisectionsSlowLinksAreMeasuredAgain) {
  std::vector<std::string> nodes;
  for (int i = 0; i < 16; ++i) nodes.push_back(fmt::format("n{}", i));
  PairSearch search(nodes, RobustRule{}, 4);
  std::vector<std::string> purposes;
  Round again;
  int bisections = 0;
  while (!search.done()) {
    const PairStep step = search.next();
    purposes.push_back(step.purpose);
    if (step.purpose == "bisection confirm") again = step.pairs;
    std::vector<Result> rs;
    for (const auto& [a, b] : step.pairs)
      for (int dir = 0; dir < (is_bisection(step) ? 1 : 2); ++dir) {
        const int s = dir == 0 ? a : b, d = dir == 0 ? b : a;
        double v = 1.0 + 0.01 * ((s * 7 + d * 3) % 5 - 2);
        if (step.purpose == "bisection" && a == 0) v = 0.5;  // n0-n8: slow once (a transient)
        if (is_bisection(step) && a == 1) v = 0.5;           // n1-n9: slow every time (a fault)
        Result r = measured(
            is_bisection(step) ? "p2p/bidir_bandwidth" : "p2p/bandwidth",
            {{"src_node", nodes[static_cast<size_t>(s)]}, {"dst_node", nodes[static_cast<size_t>(d)]}, {"rail", 0}},
            "bandwidth_median", v, "GB/s");
        search.tag(r);
        EXPECT_EQ(r.params["stage"], is_bisection(step) ? "bisection" : "pairs");
        EXPECT_EQ(r.params.value("confirm", false), step.purpose == "bisection confirm" || step.purpose == "confirm");
        rs.push_back(std::move(r));
      }
    bisections += step.purpose == "bisection" ? 1 : 0;
    search.record(std::move(rs));
  }
  EXPECT_EQ(bisections, 1);
  ASSERT_GE(purposes.size(), 2u);
  EXPECT_EQ(purposes[purposes.size() - 2], "bisection");
  EXPECT_EQ(purposes.back(), "bisection confirm");
  EXPECT_EQ(again, (Round{{0, 8}, {1, 9}}));
  const auto fs = search.findings();
  auto link = [&](const std::string& a, const std::string& b) -> const Finding* {
    for (const auto& f : fs)
      if (f.stage == "bisection" && f.kind == SubjectKind::link && f.node == a && f.peer == b) return &f;
    return nullptr;
  };
  ASSERT_TRUE(link("n0", "n8") && link("n1", "n9"));
  EXPECT_EQ(link("n0", "n8")->verdict, Verdict::ok) << link("n0", "n8")->evidence;
  EXPECT_EQ(link("n1", "n9")->verdict, Verdict::slow) << link("n1", "n9")->evidence;
  EXPECT_NE(link("n1", "n9")->evidence.find("best of 2 measurements"), std::string::npos) << link("n1", "n9")->evidence;
  size_t slow_links = 0;
  for (const auto& f : fs) slow_links += f.kind == SubjectKind::link && f.verdict != Verdict::ok ? 1 : 0;
  EXPECT_EQ(slow_links, 1u);
}

TEST(ScanJudgeColl, CulpritFromTheSearchAndTheJobAgainstItsNic) {
  HalvingSearch s(4, 0.5, 50.0);
  s.record({{1, 1.1}});
  s.record({{40, 44}, {1, 1.1}});
  s.record({{40, 44}, {1, 1.1}});  // probes {2,0} and {3,1}
  ASSERT_TRUE(s.done());
  Result whole = measured("coll/all_reduce", {{"stage", "coll"}, {"subset", "n1,n2,n3,n4"}, {"op", "all_reduce"}},
                          "busbw", 1, "GB/s");
  const auto fs = judge_coll({whole}, s.outcome(), kNodes, 50.0, "NIC", RobustRule{});
  EXPECT_EQ(find(fs, "coll", SubjectKind::node, "n4")->verdict, Verdict::slow);
  EXPECT_EQ(find(fs, "coll", SubjectKind::node, "n3")->verdict, Verdict::ok);
  EXPECT_EQ(find(fs, "coll", SubjectKind::node, "n3")->evidence, "in a fast half or probe");
  const Finding* job = find(fs, "coll", SubjectKind::job, "");
  ASSERT_TRUE(job);
  EXPECT_EQ(job->verdict, Verdict::slow);  // 2 % of the NIC rate
  EXPECT_NE(job->evidence.find("2 % of expected 50.00 GB/s (NIC)"), std::string::npos) << job->evidence;
  // No whole-job result at all: MISSING.
  EXPECT_EQ(
      find(judge_coll({}, s.outcome(), kNodes, std::nullopt, "", RobustRule{}), "coll", SubjectKind::job, "")->verdict,
      Verdict::missing);
}

TEST(ScanJudgeReference, SlowRankStepTime) {
  std::vector<Result> rs;
  for (int n = 0; n < 4; ++n)
    rs.push_back(measured("scan/reference_step",
                          {{"stage", "reference"}, {"node", kNodes[n]}, {"gpu", -1}, {"rank", n}}, "step_time",
                          n == 2 ? 0.5 : 0.1 + 0.001 * n, "s", false));
  const auto fs = judge_reference(rs, kNodes, RobustRule{});
  EXPECT_EQ(find(fs, "reference", SubjectKind::node, "n3")->verdict, Verdict::slow);
  EXPECT_EQ(find(fs, "reference", SubjectKind::node, "n1")->verdict, Verdict::ok);
}

TEST(ScanFindings, ResultRoundTripAndRanking) {
  Finding f;
  f.stage = "pairs";
  f.kind = SubjectKind::link;
  f.node = "a";
  f.peer = "b";
  f.rail = 3;
  f.figure = "send bandwidth";
  f.verdict = Verdict::slow;
  f.value = 0.5;
  f.unit = "GB/s";
  f.median = 10;
  f.sigmas = 8.1;
  f.shortfall = 0.95;
  f.peers = 12;
  f.evidence = "x";
  const Result r = to_result(f, 2);
  EXPECT_EQ(r.key, "scan/verdict");
  EXPECT_EQ(r.status, Status::fail);
  EXPECT_EQ(r.reason, "SLOW: x");
  EXPECT_EQ(r.params["subject"], "a -> b rail 3");
  const auto back = finding_from_result(r);
  ASSERT_TRUE(back);
  EXPECT_EQ(back->subject(), f.subject());
  EXPECT_EQ(back->verdict, Verdict::slow);
  EXPECT_EQ(*back->sigmas, 8.1);
  EXPECT_EQ(*back->value, 0.5);
  EXPECT_FALSE(finding_from_result(measured("mem/host/triad", {}, "bandwidth", 1, "GB/s")));
  // FAIL and MISSING before SLOW; nodes before links; bigger shortfall first.
  Finding a = f, b = f, c = f, d = f;
  a.kind = SubjectKind::node;
  a.shortfall = 0.2;
  b.kind = SubjectKind::node;
  b.node = "z";
  b.shortfall = 0.6;
  c.kind = SubjectKind::node;
  c.node = "m";
  c.verdict = Verdict::missing;
  d.verdict = Verdict::ok;
  const Culprits ranked = rank_culprits({f, a, b, c, d});
  ASSERT_EQ(ranked.ranked.size(), 3u);  // the SLOW link a -> b is explained by node a
  EXPECT_EQ(ranked.explained_links, 1u);
  EXPECT_EQ(ranked.ranked[0].node, "m");
  EXPECT_EQ(ranked.ranked[1].node, "z");
  EXPECT_EQ(ranked.ranked[2].node, "a");
  EXPECT_EQ(format_figure(0.0009515, "GB/s"), "0.9515 MB/s");
  EXPECT_EQ(format_figure(2410, "GB/s"), "2.410 TB/s");
  EXPECT_EQ(format_figure(0.02558, "TFLOP/s"), "25.58 GFLOP/s");  // a host sgemm, once "0.02558 TFLOP/s"
  EXPECT_EQ(format_figure(0.0008662, "TFLOP/s"), "866.2 MFLOP/s");
  EXPECT_EQ(format_figure(989.4, "TFLOP/s"), "989.4 TFLOP/s");
}

// Samples whose statistics make `compare` see a clear change (nine samples each side).
Result sampled(const std::string& node, double seconds) {
  Result r = measured("mem/host/triad", {{"stage", "device"}, {"node", node}, {"gpu", -1}, {"dtype", "fp64"}},
                      "bandwidth_median", 1.0 / seconds, "GB/s");
  for (int i = 0; i < 9; ++i) r.samples.push_back(seconds * (1 + 0.001 * i));
  r.stats = summarize(r.samples);
  return r;
}

TEST(ScanDrift, EachNodeAgainstItsOwnPast) {
  ResultDocument base;
  for (const char* n : {"n1", "n2", "n3", "old"}) base.results.push_back(sampled(n, 1.0));
  std::vector<Result> now = {sampled("n1", 1.0), sampled("n2", 1.5), sampled("n3", 1.001)};
  now[0].params["src"] = 7;  // world ranks and rounds differ between jobs and are ignored
  const auto fs = judge_drift(base, now, {"n1", "n2", "n3", "new"}, RobustRule{});
  EXPECT_EQ(find(fs, "drift", SubjectKind::node, "n1")->verdict, Verdict::ok);
  const Finding* n2 = find(fs, "drift", SubjectKind::node, "n2");
  EXPECT_EQ(n2->verdict, Verdict::slow);
  EXPECT_NEAR(*n2->shortfall, 1 - 1 / 1.5, 1e-9);
  EXPECT_EQ(find(fs, "drift", SubjectKind::node, "n3")->verdict, Verdict::ok);
  EXPECT_EQ(find(fs, "drift", SubjectKind::node, "old")->verdict, Verdict::missing);
  EXPECT_EQ(find(fs, "drift", SubjectKind::node, "new")->evidence, "not in the baseline: nothing to compare");
  EXPECT_EQ(drift_view(now).results[0].params,
            (nlohmann::json{{"stage", "device"}, {"node", "n1"}, {"gpu", -1}, {"dtype", "fp64"}}));
}

TEST(ScanDrift, AUniformlySlowerHostIsTheClusterNotItsNodes) {
  ResultDocument base;
  const std::vector<std::string> ns = {"n1", "n2", "n3", "n4"};
  for (const auto& n : ns) base.results.push_back(sampled(n, 1.0));
  // Every node at half its speed, within 2 % of each other: a cluster-wide shift, no node blamed.
  std::vector<Result> now;
  for (size_t i = 0; i < ns.size(); ++i) now.push_back(sampled(ns[i], 2.0 * (1 + 0.005 * static_cast<double>(i))));
  auto fs = judge_drift(base, now, ns, RobustRule{});
  for (const auto& n : ns) {
    const Finding* f = find(fs, "drift", SubjectKind::node, n);
    EXPECT_EQ(f->verdict, Verdict::ok) << n << ": " << f->evidence;
    EXPECT_EQ(f->evidence.rfind("slower with the rest of the cluster, not against it", 0), 0u) << f->evidence;
  }
  const Finding* job = find(fs, "drift", SubjectKind::job, "");
  ASSERT_TRUE(job);
  EXPECT_EQ(job->verdict, Verdict::slow);
  EXPECT_EQ(job->evidence.rfind("cluster-wide shift: mem/host/triad bandwidth_median of the median node at 0.49", 0),
            0u)
      << job->evidence;
  EXPECT_NE(job->evidence.find("no node moved against the others"), std::string::npos) << job->evidence;
  const Culprits c = rank_culprits(fs);
  ASSERT_EQ(c.ranked.size(), 1u);
  EXPECT_EQ(c.ranked[0].subject(), "job");
  // One node ten times slower on top of the shift is blamed, the others are not.
  now[2] = sampled("n3", 20.0);
  fs = judge_drift(base, now, ns, RobustRule{});
  for (const auto& n : ns)
    EXPECT_EQ(find(fs, "drift", SubjectKind::node, n)->verdict, n == "n3" ? Verdict::slow : Verdict::ok) << n;
  EXPECT_NE(
      find(fs, "drift", SubjectKind::node, "n3")->evidence.find("; moved against the same figure of the other nodes"),
      std::string::npos);
}

}  // namespace
}  // namespace gcb::scan
