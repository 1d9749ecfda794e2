// Stage 4: inter-node pairs. Rounds of disjoint node pairs (plan.hpp) measured at the same time,
// each rank pair rail-aligned in its own two-rank sub-world running p2p's rank-pair measures
// (send bandwidth both ways, bidirectional bandwidth and ping-pong latency once); then the
// bisection: every node of the first half against its partner in the second, bidirectional, all
// at once.
#include <fmt/format.h>

#include <algorithm>

#include "bench/p2p/p2p.hpp"
#include "bench/scan/exchange.hpp"
#include "bench/scan/judge.hpp"
#include "bench/scan/plan.hpp"
#include "bench/scan/scan_run.hpp"

namespace gcb::scan {

namespace {
constexpr int kConfirmationPasses = 3;
}  // namespace

void ScanRun::pairs() {
  const int nodes = static_cast<int>(layout_.nodes.size());
  const double budget = begin_stage("pairs",
                                    "rank-pair bandwidth and latency between nodes in rounds of disjoint "
                                    "pairs, rail-aligned, then half against half");
  if (nodes < 2) {
    skip_stage("pairs", "one node: no inter-node pair");
    return;
  }
  const std::vector<Round> rounds = round_robin_rounds(nodes);
  const Round bisection = bisection_pairs(nodes);
  // Sequential measurements per rank: per round, send both ways + bidirectional + latency; one
  // bidirectional for the bisection; a confirmation round or two. 70 % of the budget is sampling,
  // the rest set-up and warm-up.
  const double count = static_cast<double>(rounds.size() + 1) * 4 + 1;
  const HarnessOptions h = transfer_harness(budget * 0.7 / count);
  const uint64_t bytes = transfer_bytes(o_.pair_size);
  std::vector<Result> results;
  auto measure_round = [&](const Round& round, const std::string& stage, int index, int total, bool confirm = false) {
    const double t0 = leader() ? elapsed() : 0;
    // My pair, if any: color = the rank pair's number in the round, key 0 on the lower node.
    int color = -1, key = 0, rail = -1, partner = -1;
    int slot = 0;
    for (const auto& [a, b] : round) {
      const auto rp =
          rail_pairs(layout_.ranks_of_node[static_cast<size_t>(a)], layout_.ranks_of_node[static_cast<size_t>(b)]);
      for (size_t i = 0; i < rp.size(); ++i, ++slot) {
        if (rp[i].first == ctx_.rank) color = slot, key = 0, rail = static_cast<int>(i), partner = rp[i].second;
        if (rp[i].second == ctx_.rank) color = slot, key = 1, rail = static_cast<int>(i), partner = rp[i].first;
      }
    }
    SubWorld sub(ctx_, color, key, 2);
    std::vector<Result> mine;
    if (sub.member()) {
      bench::P2pOptions p2p;
      p2p.modes = {"rank"};
      p2p.size = bytes;
      p2p.latency_size = 8;
      p2p.symmetric_once = true;
      if (stage == "bisection") p2p.rank_measures = {"bidir_bandwidth"};
      bench::validate(p2p);
      bench::Runner local(bench::RunnerOptions{h, false, true}, nullptr);
      bench::run_p2p_ranks_on_rank(p2p, h, sub.ctx(), &local, seed_);
      const int world_of[2] = {key == 0 ? ctx_.rank : partner, key == 0 ? partner : ctx_.rank};
      for (Result r : local.results()) {
        const int s = r.params.value("src", -1), d = r.params.value("dst", -1);
        if (s >= 0 && d >= 0) {
          // Nodes and rail name the link; world ranks change with every launch, so they are kept
          // out of the params (which pair results across scans) and recorded beside them.
          r.params.erase("src");
          r.params.erase("dst");
          r.extra["src_rank"] = world_of[s];
          r.extra["dst_rank"] = world_of[d];
          tag(r, {{"src_node", layout_.ranks[static_cast<size_t>(world_of[s])].node},
                  {"dst_node", layout_.ranks[static_cast<size_t>(world_of[d])].node}});
        }
        tag(r, {{"stage", stage}, {"rail", rail}, {"round", index}});
        if (confirm) r.params["confirm"] = true;
        mine.push_back(std::move(r));
      }
    }
    auto all = gather(mine);
    if (leader()) {
      std::string pairs_text;
      for (const auto& [a, b] : round)
        pairs_text += fmt::format("{}{}-{}", pairs_text.empty() ? "" : " ", layout_.nodes[static_cast<size_t>(a)],
                                  layout_.nodes[static_cast<size_t>(b)]);
      if (confirm)
        say("      confirm: {} ({:.1f} s)\n", pairs_text, elapsed() - t0);
      else
        say("      {} {}/{}: {} ({:.1f} s)\n", stage == "bisection" ? "bisection" : "round", index + 1, total,
            pairs_text, elapsed() - t0);
      results.insert(results.end(), all.begin(), all.end());
    }
  };
  for (size_t r = 0; r < rounds.size(); ++r)
    measure_round(rounds[r], "pairs", static_cast<int>(r), static_cast<int>(rounds.size()));
  // Confirmation: the pairs of every link that looked SLOW or failed are measured once more (in
  // rounds of disjoint pairs); judge_pairs keeps each link's best, so a transient is forgiven
  // and a fault is seen twice.
  // Replacing a transient by its better value moves the fleet's median and spread, which can tip
  // another link over: up to three passes, each re-measuring only pairs not yet confirmed.
  std::vector<NodePair> confirmed;
  int next_round = static_cast<int>(rounds.size());
  for (int pass = 0; pass < kConfirmationPasses; ++pass) {
    nlohmann::json recheck = nlohmann::json::array();
    if (leader()) {
      std::vector<NodePair> suspects;
      for (const auto& f : judge_pairs(results, layout_.nodes, o_.rule)) {
        if (f.kind != SubjectKind::link || f.stage != "pairs" || f.verdict == Verdict::ok) continue;
        const int a = layout_.index_of(f.node), b = layout_.index_of(f.peer);
        const NodePair p{std::min(a, b), std::max(a, b)};
        if (std::find(confirmed.begin(), confirmed.end(), p) != confirmed.end()) continue;
        if (std::find(suspects.begin(), suspects.end(), p) == suspects.end()) suspects.push_back(p);
      }
      confirmed.insert(confirmed.end(), suspects.begin(), suspects.end());
      for (const auto& round : pack_rounds(suspects)) recheck.push_back(round);
    }
    recheck = broadcast_json(ctx_.host_comm, recheck);
    if (recheck.empty()) break;
    for (const auto& round : recheck)
      measure_round(round.get<Round>(), "pairs", next_round++, static_cast<int>(rounds.size()), true);
  }
  if (!bisection.empty()) measure_round(bisection, "bisection", 0, 1);
  if (!leader()) return;
  auto findings = judge_pairs(results, layout_.nodes, o_.rule);
  end_stage("pairs", std::move(results), std::move(findings));
}

}  // namespace gcb::scan
