// Stage 4: inter-node pairs. The steps of PairSearch (pair_search.hpp) — rounds of disjoint node
// pairs, confirmations, probes, the bisection — each measured at once, every rank pair
// rail-aligned in its own two-rank sub-world running p2p's rank-pair measures (send bandwidth both
// ways, bidirectional bandwidth and ping-pong latency once; bidirectional only for the bisection).
#include <fmt/format.h>

#include <algorithm>

#include "bench/p2p/p2p.hpp"
#include "bench/scan/exchange.hpp"
#include "bench/scan/judge.hpp"
#include "bench/scan/pair_search.hpp"
#include "bench/scan/plan.hpp"
#include "bench/scan/scan_run.hpp"

namespace gcb::scan {

void ScanRun::pairs() {
  const int nodes = static_cast<int>(layout_.nodes.size());
  const int rounds = pair_rounds_for(nodes, o_.pair_rounds);
  // Sequential measurements per rank (budget.hpp stage_cost): per round, send both ways +
  // bidirectional + latency; one bidirectional for the bisection; a confirmation round or two.
  // 70 % of the budget is sampling, the rest set-up and warm-up.
  const StageCost cost = stage_cost("pairs", nodes, rounds, 0, 0);
  const double budget = begin_stage("pairs",
                                    "rank-pair bandwidth and latency between nodes in rounds of disjoint "
                                    "pairs, rail-aligned, then half against half",
                                    cost);
  if (nodes < 2) {
    skip_stage("pairs", "one node: no inter-node pair");
    return;
  }
  if (const std::string& why = no_nics(); !why.empty()) {
    skip_stage("pairs", why);
    return;
  }
  if (skipped_for_budget("pairs")) return;
  // Every rank drives the same search (pair_search.hpp); rank 0 decides what comes after each
  // step from its results and broadcasts the step, so all ranks measure the same pairs.
  PairSearch search(layout_.nodes, o_.rule, o_.pair_rounds);
  const HarnessOptions h = transfer_harness(per_measurement_seconds(cost, budget));
  const uint64_t bytes = transfer_bytes(o_.pair_size);
  while (true) {
    nlohmann::json step;
    if (leader() && !search.done())
      step = {{"purpose", search.next().purpose}, {"pairs", search.next().pairs}, {"index", search.next().index}};
    step = broadcast_json(ctx_.host_comm, step);
    if (step.is_null()) break;
    const Round round = step.at("pairs").get<Round>();
    const std::string purpose = step.at("purpose").get<std::string>();
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
      if (purpose == "bisection" || purpose == "bisection confirm") p2p.rank_measures = {"bidir_bandwidth"};
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
        r.params["rail"] = rail;
        if (nodes > kPairSamplesUpToNodes) drop_samples(r);
        mine.push_back(std::move(r));
      }
    }
    auto all = gather(mine);
    if (!leader()) continue;
    for (auto& r : all) search.tag(r);
    std::string pairs_text;
    for (const auto& [a, b] : round)
      pairs_text += fmt::format("{}{}-{}", pairs_text.empty() ? "" : " ", layout_.nodes[static_cast<size_t>(a)],
                                layout_.nodes[static_cast<size_t>(b)]);
    const int index = step.at("index").get<int>();
    if (purpose == "round")
      say("      round {}/{}: {} ({:.1f} s)\n", index + 1, search.rounds(), pairs_text, elapsed() - t0);
    else if (purpose == "bisection")
      say("      bisection 1/1: {} ({:.1f} s)\n", pairs_text, elapsed() - t0);
    else
      say("      {}: {} ({:.1f} s)\n", purpose, pairs_text, elapsed() - t0);
    search.record(std::move(all));
  }
  if (!leader()) return;
  if (search.rounds() < (nodes % 2 == 0 ? nodes - 1 : nodes))
    say("      {} of {} rounds (--pair-rounds): each node met {} partners; other links were not measured\n",
        search.rounds(), nodes % 2 == 0 ? nodes - 1 : nodes, search.rounds());
  auto findings = search.findings();
  end_stage("pairs", search.results(), std::move(findings));
}

}  // namespace gcb::scan
