// The pure parts of `gcbench scan`: the log-scale median/MAD rule, the round-robin and bisection
// plans, the halving search on synthetic bus bandwidths, the budget's shares and the reasons a
// stage is skipped ("budget", "no NICs") with the verdict line that lists them.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>

#include "bench/scan/budget.hpp"
#include "bench/scan/halving.hpp"
#include "bench/scan/plan.hpp"
#include "bench/scan/robust.hpp"
#include "bench/scan/scan.hpp"
#include "bench/scan/scan_run.hpp"
#include "core/error.hpp"

namespace gcb::scan {
namespace {

TEST(ScanRobust, GroupStatsOnLogValues) {
  // e^0, e^1, e^2, e^3, e^10: log median 2, |log − 2| = 2,1,0,1,8 → MAD 1.
  const std::vector<double> v = {1, std::exp(1.0), std::exp(2.0), std::exp(3.0), std::exp(10.0)};
  const GroupStats g = group_stats(v);
  EXPECT_EQ(g.n, 5u);
  EXPECT_NEAR(g.median, std::exp(2.0), 1e-12);
  EXPECT_NEAR(g.log_median, 2.0, 1e-12);
  EXPECT_NEAR(g.log_mad, 1.0, 1e-12);
  EXPECT_NEAR(g.sigma, kMadToSigma, 1e-12);
}

TEST(ScanRobust, ThrottledLinkIsSlowEvenInANoisyFleet) {
  // Nine links spread over 4x (as on a loaded VM) and three at 1/1000 of them: on a linear scale
  // the slow ones sit less than one MAD below the median; on logs they are far below.
  std::vector<double> v = {0.6, 0.68, 0.83, 0.94, 1.17, 1.29, 1.85, 2.06, 2.26, 0.00095, 0.00095, 0.00096};
  const GroupStats g = group_stats(v);
  const RobustRule rule{3.5, 0.9, 50, 3};
  const Deviation slow = deviation(0.00095, true, g);
  ASSERT_TRUE(slow.sigmas);
  EXPECT_GT(*slow.sigmas, 3.5);
  EXPECT_GT(slow.shortfall, 0.99);
  EXPECT_TRUE(slow_against_peers(slow, g, rule));
  for (double fast : {0.6, 2.26}) EXPECT_FALSE(slow_against_peers(deviation(fast, true, g), g, rule)) << fast;
}

TEST(ScanRobust, BothHalvesOfTheRuleAreNeeded) {
  const std::vector<double> tight = {100, 100.1, 99.9, 100.05, 99.95};
  const GroupStats g = group_stats(tight);
  // 2 % below a fleet spread over 0.1 %: many MAD below, but not 10 % short → OK.
  const Deviation d = deviation(98, true, g);
  EXPECT_GT(*d.sigmas, 3.5);
  EXPECT_FALSE(slow_against_peers(d, g, RobustRule{}));
  // 20 % below → SLOW.
  EXPECT_TRUE(slow_against_peers(deviation(80, true, g), g, RobustRule{}));
  // A wide fleet: 30 % below is within its spread → OK whatever the tolerance.
  const std::vector<double> wide = {50, 100, 150, 200, 75};
  const GroupStats w = group_stats(wide);
  EXPECT_FALSE(slow_against_peers(deviation(70, true, w), w, RobustRule{}));
}

TEST(ScanRobust, LowerIsBetterAndTinyGroups) {
  const std::vector<double> lat = {10, 10.2, 9.9, 10.1, 40};
  const GroupStats g = group_stats(lat);
  const Deviation d = deviation(40, false, g);
  EXPECT_NEAR(d.shortfall, 1 - 10.1 / 40, 1e-12);  // median 10.1
  EXPECT_TRUE(slow_against_peers(d, g, RobustRule{}));
  EXPECT_FALSE(slow_against_peers(deviation(9.9, false, g), g, RobustRule{}));
  // Two values: their median is their mean, so the peer rule never fires.
  const std::vector<double> two = {1, 100};
  const GroupStats t = group_stats(two);
  EXPECT_FALSE(slow_against_peers(deviation(1, true, t), t, RobustRule{}));
  // Identical peers (MAD 0): any value worse by more than the tolerance is SLOW.
  const std::vector<double> same = {5, 5, 5, 4};
  const GroupStats s = group_stats(same);
  const Deviation d4 = deviation(4, true, s);
  EXPECT_FALSE(d4.sigmas);
  EXPECT_TRUE(d4.worse_than_all_spread);
  EXPECT_TRUE(slow_against_peers(d4, s, RobustRule{}));
}

TEST(ScanRobust, ExpectedValue) {
  const RobustRule rule;
  EXPECT_NEAR(percent_of_expected(2.41, 3.35, true), 71.940298, 1e-5);
  EXPECT_FALSE(slow_against_expected(2.41, 3.35, true, rule));
  EXPECT_TRUE(slow_against_expected(1.6, 3.35, true, rule));
  EXPECT_TRUE(slow_against_expected(30, 10, false, rule));  // a latency 3x its expected value
  EXPECT_FALSE(slow_against_expected(1, 0, true, rule));    // nothing expected
  EXPECT_THROW(validate(RobustRule{3.5, 1.0, 50, 3}), UsageError);
  EXPECT_THROW(validate(RobustRule{0, 0.1, 50, 3}), UsageError);
  EXPECT_NO_THROW(validate(RobustRule{}));
}

// A rehearsal with more ranks than the host has CPUs judges at kSharedCpuTolerance and says so;
// with the CPUs to spare, without --rehearse, or with --tolerance given, the rule is the user's.
TEST(ScanRobust, ARehearsalOnSharedCpusJudgesLargerShortfallsOnly) {
  ScanOptions o;
  o.rehearse = true;
  const ScanOptions shared = rehearsal_rule(o, 4, 2);
  EXPECT_DOUBLE_EQ(shared.rule.tolerance, kSharedCpuTolerance);
  EXPECT_NE(shared.rule_note.find("4 ranks share this host's 2 CPUs"), std::string::npos) << shared.rule_note;
  EXPECT_NE(shared.rule_note.find("over 60 %"), std::string::npos) << shared.rule_note;
  EXPECT_DOUBLE_EQ(rehearsal_rule(o, 4, 8).rule.tolerance, RobustRule{}.tolerance);
  EXPECT_TRUE(rehearsal_rule(o, 4, 8).rule_note.empty());
  ScanOptions given = o;
  given.tolerance_given = true;
  EXPECT_DOUBLE_EQ(rehearsal_rule(given, 4, 2).rule.tolerance, RobustRule{}.tolerance);
  ScanOptions cluster;
  EXPECT_DOUBLE_EQ(rehearsal_rule(cluster, 4, 2).rule.tolerance, RobustRule{}.tolerance);
}

TEST(ScanPlan, RoundRobinCoversEveryPairOnce) {
  for (int n = 2; n <= 17; ++n) {
    const auto rounds = round_robin_rounds(n);
    EXPECT_EQ(rounds.size(), static_cast<size_t>(n % 2 == 0 ? n - 1 : n)) << n;
    std::set<NodePair> seen;
    for (const auto& round : rounds) {
      std::set<int> busy;
      for (const auto& [a, b] : round) {
        EXPECT_LT(a, b);
        EXPECT_TRUE(busy.insert(a).second) << "node twice in a round, n=" << n;
        EXPECT_TRUE(busy.insert(b).second) << "node twice in a round, n=" << n;
        EXPECT_TRUE(seen.insert({a, b}).second) << "pair twice, n=" << n;
      }
      EXPECT_EQ(round.size(), static_cast<size_t>(n / 2)) << n;
    }
    EXPECT_EQ(seen.size(), static_cast<size_t>(n * (n - 1) / 2)) << n;
  }
  EXPECT_TRUE(round_robin_rounds(1).empty());
  EXPECT_EQ(round_robin_rounds(4), (std::vector<Round>{{{0, 3}, {1, 2}}, {{0, 2}, {1, 3}}, {{0, 1}, {2, 3}}}));
}

TEST(ScanPlan, BisectionAndRails) {
  EXPECT_EQ(bisection_pairs(4), (Round{{0, 2}, {1, 3}}));
  EXPECT_EQ(bisection_pairs(5), (Round{{0, 2}, {1, 3}}));  // node 4 rests
  EXPECT_TRUE(bisection_pairs(1).empty());
  // Rail-aligned: GPU i with GPU i; a node with fewer ranks pairs only its own.
  EXPECT_EQ(rail_pairs({0, 1, 2, 3}, {4, 5, 6, 7}), (std::vector<std::pair<int, int>>{{0, 4}, {1, 5}, {2, 6}, {3, 7}}));
  EXPECT_EQ(rail_pairs({0, 1}, {4, 5, 6}), (std::vector<std::pair<int, int>>{{0, 4}, {1, 5}}));
}

TEST(ScanPlan, PackRoundsKeepsEachRoundDisjoint) {
  // The three links of a throttled node 3 need three rounds; an unrelated pair joins the first.
  EXPECT_EQ(pack_rounds({{0, 3}, {1, 3}, {2, 3}, {1, 2}}), (std::vector<Round>{{{0, 3}, {1, 2}}, {{1, 3}}, {{2, 3}}}));
  EXPECT_TRUE(pack_rounds({}).empty());
}

// Drives a search: each group measures the bandwidth of its slowest member (a ring is as slow as
// its slowest link); its best sample 10 % above that.
HalvingOutcome search(int nodes, const std::vector<double>& node_bw, double tolerance,
                      std::optional<double> expected = std::nullopt) {
  HalvingSearch s(nodes, tolerance, expected);
  int guard = 0;
  while (!s.done() && ++guard < 50) {
    std::vector<GroupBusbw> m;
    for (const auto& g : s.next_groups()) {
      double bw = 1e9;
      for (int n : g) bw = std::min(bw, node_bw[static_cast<size_t>(n)]);
      m.push_back({bw, bw * 1.1});
    }
    s.record(m);
  }
  EXPECT_TRUE(s.done());
  return s.outcome();
}

TEST(ScanHalving, FindsTheSlowNodeOfFour) {
  const auto o = search(4, {100, 100, 100, 1}, 0.5);
  EXPECT_EQ(o.culprits, (std::vector<int>{3}));
  ASSERT_EQ(o.steps.size(), 3u);
  EXPECT_EQ(o.steps[0].groups, (std::vector<std::vector<int>>{{0, 1, 2, 3}}));
  EXPECT_EQ(o.steps[1].groups, (std::vector<std::vector<int>>{{0, 1}, {2, 3}}));
  EXPECT_EQ(o.steps[2].purpose, "probes");
  EXPECT_EQ(o.steps[2].groups, (std::vector<std::vector<int>>{{2, 0}, {3, 1}}));
}

TEST(ScanHalving, FindsTheSlowNodeOfSixteenInLogSteps) {
  std::vector<double> bw(16, 100);
  bw[11] = 10;
  const auto o = search(16, bw, 0.1);
  EXPECT_EQ(o.culprits, (std::vector<int>{11}));
  // whole, halves of 16, 8 and 4, then probes of the last pair.
  EXPECT_EQ(o.steps.size(), 5u);
}

TEST(ScanHalving, OddSizesPackProbesIntoRounds) {
  // 5 nodes: halves {0,1} and {2,3,4}; three suspects but two good nodes → two probe rounds.
  const auto o = search(5, {100, 100, 100, 100, 5}, 0.5);
  EXPECT_EQ(o.culprits, (std::vector<int>{4}));
  size_t probe_rounds = 0;
  for (const auto& s : o.steps) probe_rounds += s.purpose == "probes" ? 1 : 0;
  EXPECT_EQ(probe_rounds, 2u);
}

TEST(ScanHalving, HealthyJobsAndWhatCannotBeSplit) {
  EXPECT_TRUE(search(8, std::vector<double>(8, 100), 0.1).culprits.empty());
  EXPECT_EQ(search(8, std::vector<double>(8, 100), 0.1).steps.size(), 2u);  // whole + one halving
  // Within tolerance of the expected value: no halving at all.
  EXPECT_EQ(search(8, std::vector<double>(8, 100), 0.1, 105.0).steps.size(), 1u);
  // Three nodes: too few to halve.
  const auto three = search(3, {100, 100, 1}, 0.5);
  EXPECT_TRUE(three.culprits.empty());
  EXPECT_NE(three.note.find("too few to halve"), std::string::npos);
  // Two slow nodes, one in each half of the slow half: the subset is named, not a node.
  std::vector<double> bw(8, 100);
  bw[4] = bw[6] = 1;
  const auto two = search(8, bw, 0.5);
  EXPECT_TRUE(two.culprits.empty());
  EXPECT_EQ(two.slow_subset, (std::vector<int>{4, 5, 6, 7}));
}

TEST(ScanHalving, ABestSampleAsFastAsTheOtherMedianIsNotClearlySlower) {
  HalvingSearch s(4, 0.1, std::nullopt);
  s.record({{100, 110}});
  // Half B's median is 30 % lower, but its best sample reaches half A's median: noise, not a
  // culprit.
  s.record({{100, 120}, {70, 100}});
  EXPECT_TRUE(s.done());
  EXPECT_TRUE(s.outcome().culprits.empty());
  EXPECT_TRUE(s.outcome().slow_subset.empty());
  // A stall in the fast half (one slow sample) cannot make the slow half look fine: the fast
  // half's median stands, and half B's best sample is far below it.
  HalvingSearch t(4, 0.5, std::nullopt);
  t.record({{1, 1.1}});
  t.record({{100, 120}, {1, 1.1}});
  EXPECT_FALSE(t.done());  // on to the probes
}

// A half slow once (a stall during the halves step, as a loaded CI machine gave the netns test)
// whose probes are all fine is measured once more and named only if it is slow again.
TEST(ScanHalving, ASlowHalfWhoseProbesAreFineIsMeasuredAgain) {
  for (const bool slow_again : {false, true}) {
    HalvingSearch s(4, 0.9, std::nullopt);
    s.record({{0.0066, 0.0098}});
    s.record({{0.69, 0.82}, {0.0044, 0.0056}});  // {2,3} slow
    s.record({{0.69, 0.87}, {0.54, 0.84}});      // probes {2,0}, {3,1} fine
    ASSERT_FALSE(s.done());
    EXPECT_EQ(s.next_groups(), (std::vector<std::vector<int>>{{2, 3}}));
    s.record({slow_again ? GroupBusbw{0.004, 0.005} : GroupBusbw{0.6, 0.8}});
    ASSERT_TRUE(s.done());
    EXPECT_TRUE(s.outcome().culprits.empty());
    EXPECT_EQ(s.outcome().slow_subset, (slow_again ? std::vector<int>{2, 3} : std::vector<int>{}));
    EXPECT_EQ(s.outcome().steps.back().purpose, "subset again");
    EXPECT_NE(s.outcome().note.find(slow_again ? "the subset slow again" : "a transient, no slow subset"),
              std::string::npos)
        << s.outcome().note;
  }
}

// Shares: what is left, split by weight over the stages still to run.
TEST(ScanBudget, SharesAreRenormalisedOverTheStagesLeft) {
  const std::vector<std::string> all = {"inventory", "device", "links", "pairs", "coll"};
  EXPECT_NEAR(stage_share("device", {all.begin() + 1, all.end()}, 600, 12), 588 * 0.25 / 0.93, 1e-9);
  EXPECT_NEAR(stage_share("coll", {"coll"}, 600, 100), 500, 1e-9);  // the last stage gets all that is left
  EXPECT_EQ(stage_share("coll", {"coll"}, 600, 700), 0);            // overrun: nothing
}

// --budget is seconds like every other limit, with an optional unit; the default is in seconds too.
TEST(ScanBudget, BudgetIsSecondsWithAnOptionalUnit) {
  EXPECT_EQ(parse_budget_s("600"), 600);
  EXPECT_EQ(parse_budget_s("600s"), 600);
  EXPECT_EQ(parse_budget_s("10m"), 600);
  EXPECT_EQ(parse_budget_s("0.5m"), 30);
  EXPECT_EQ(parse_budget_s("0"), 0);
  for (const char* bad : {"", "-1", "10h", "m", "1.5.2", "10 m", "nan", "inf"})
    EXPECT_THROW(parse_budget_s(bad), UsageError) << bad;
  EXPECT_EQ(default_budget_s(2), 180);  // 3 minutes for two nodes
  EXPECT_EQ(default_budget_s(64), 2040);
  EXPECT_EQ(default_budget_s(4, true), 46);  // a rehearsal of 4 nodes on one host: within a minute
}

// A stage is skipped for the budget when nothing is left or its share gives a measurement less
// than kMinMeasurementSeconds; a stage that samples nothing runs while any time is left.
TEST(ScanBudget, AStageThatCannotFitItsShareIsSkippedWithReasonBudget) {
  // 1,024 nodes, 32 rounds: (32 + 1) × 4 + 1 = 133 measurements at 70 % sampling → 9.5 s.
  const StageCost pairs = stage_cost("pairs", 1024, 32, 0, 0);
  EXPECT_EQ(pairs.measurements, 133);
  EXPECT_NEAR(min_stage_seconds(pairs), 133 * 0.05 / 0.7, 1e-9);
  EXPECT_EQ(budget_skip_reason(pairs, 9.6, 20), "");
  const std::string why = budget_skip_reason(pairs, 9.4, 20);
  EXPECT_EQ(why.rfind("budget: ", 0), 0u) << why;
  EXPECT_NE(why.find("9.40 s of the 20.0 s left is below the 9.50 s its 133 measurements need"), std::string::npos)
      << why;
  EXPECT_NEAR(per_measurement_seconds(pairs, 9.5), 0.05, 1e-12);
  // Four nodes, three rounds: 17 measurements; the halving search: 1 op + 1 level + 2 = 4.
  EXPECT_EQ(stage_cost("pairs", 4, 3, 0, 0).measurements, 17);
  EXPECT_EQ(stage_cost("coll", 4, 0, 1, 0).measurements, 4);
  EXPECT_EQ(stage_cost("coll", 1024, 0, 2, 0).measurements, 2 + 9 + 2);  // 1,024 halved 9 times to 2
  EXPECT_EQ(stage_cost("device", 4, 0, 0, 0).measurements, 2);
  // Nothing left: every stage is skipped, the inventory and the reference step too.
  for (const char* stage : {"inventory", "device", "pairs", "reference"}) {
    const std::string none = budget_skip_reason(stage_cost(stage, 4, 3, 1, 0), 0, -2.5);
    EXPECT_EQ(none, "budget: none left (2.5 s over)") << stage;
  }
  // The reference step samples nothing under the budget: any time left lets it run.
  EXPECT_EQ(budget_skip_reason(stage_cost("reference", 4, 3, 1, 0), 0.01, 0.01), "");
}

// "no NICs": the stages between nodes need a path between them.
TEST(ScanBudget, NodesWithoutANetworkInterfaceSkipTheStagesBetweenNodes) {
  const std::vector<std::string> nodes = {"a", "b", "c"};
  EXPECT_EQ(no_nics_reason(nodes, {{"eth0"}, {"ib0", "eth0"}, {"veth1"}}, false), "");
  EXPECT_EQ(no_nics_reason(nodes, {{"eth0"}, {}, {}}, false),
            "no NICs: 2 of 3 nodes have no network interface besides loopback (b, c): no path between nodes");
  EXPECT_EQ(no_nics_reason(nodes, {{}, {}, {}}, true), "");  // a rehearsal: ranks on one host
  EXPECT_EQ(no_nics_reason({"a"}, {{}}, false), "");         // one node has its own reason
  // Six nodes without one: four named, the rest counted.
  const std::string many =
      no_nics_reason({"a", "b", "c", "d", "e", "f", "g"}, {{}, {}, {}, {}, {}, {}, {"eth0"}}, false);
  EXPECT_NE(many.find("6 of 7 nodes"), std::string::npos) << many;
  EXPECT_NE(many.find("(a, b, c, d and 2 more)"), std::string::npos) << many;
}

// The interfaces of a sysfs tree: loopback (by type 772, whatever its name) and interfaces down
// are left out; virtual ones count.
TEST(ScanBudget, NetworkInterfacesOfASysfsTree) {
  namespace fs = std::filesystem;
  const fs::path root = fs::temp_directory_path() / ("gcb_scan_net_" + std::to_string(::getpid()));
  fs::remove_all(root);
  auto iface = [&](const std::string& name, const std::string& type, const std::string& state) {
    fs::create_directories(root / name);
    std::ofstream(root / name / "type") << type << "\n";
    std::ofstream(root / name / "operstate") << state << "\n";
  };
  iface("lo", "772", "unknown");
  EXPECT_TRUE(network_interfaces(root.string()).empty());  // loopback only: no NIC
  iface("lo2", "772", "up");
  iface("eth0", "1", "up");
  iface("veth7", "1", "up");
  iface("ib0", "32", "down");
  iface("ib1", "32", "unknown");
  EXPECT_EQ(network_interfaces(root.string()), (std::vector<std::string>{"eth0", "ib1", "veth7"}));
  EXPECT_TRUE(network_interfaces((root / "absent").string()).empty());
  fs::remove_all(root);
}

// The verdict line lists the stages skipped for the budget or for want of NICs, and does not say
// that anything between nodes was measured.
TEST(ScanBudget, TheVerdictLineNamesTheStagesSkippedAndWhy) {
  const std::string budget = budget_skip_reason(stage_cost("pairs", 4, 3, 0, 0), 0.5, 0.5);
  const std::string nics = no_nics_reason({"a", "b"}, {{}, {}}, false);
  const std::string line = verdict_line(0, {"inventory", "device"}, {{"pairs", nics}, {"coll", budget}}, 2);
  EXPECT_EQ(line.rfind("all OK (ran: inventory, device; skipped: pairs — no NICs: 2 of 2 nodes", 0), 0u) << line;
  EXPECT_NE(line.find("; coll — budget: its share 0.50 s"), std::string::npos) << line;
  EXPECT_NE(line.find("nothing between nodes was measured"), std::string::npos) << line;
  const Result r = skipped_result("pairs", budget);
  EXPECT_EQ(r.status, Status::waived);
  EXPECT_EQ(r.reason, "skipped: " + budget);
  EXPECT_EQ(r.params["stage"], "pairs");
}

}  // namespace
}  // namespace gcb::scan
