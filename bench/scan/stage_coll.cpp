// Stage 5: collectives. The whole job's bus bandwidth at a large size (coll's own sweep, one
// size), then the halving search (halving.hpp): disjoint node groups measured at the same time,
// each in its own sub-world. Every rank sees every group's result (an all-gather), so every rank
// drives an identical search and no decision has to be sent.
#include <fmt/format.h>

#include <algorithm>

#include "bench/coll/coll.hpp"
#include "bench/p2p/p2p_links.hpp"
#include "bench/scan/exchange.hpp"
#include "bench/scan/halving.hpp"
#include "bench/scan/judge.hpp"
#include "bench/scan/scan_run.hpp"
#include "core/error.hpp"
#include "reports/render.hpp"

namespace gcb::scan {

namespace {

std::string subset_name(const std::vector<int>& group, const ScanLayout& l) {
  std::string s;
  for (int n : group) {
    if (!s.empty()) s += ",";
    s += l.nodes.at(static_cast<size_t>(n));
  }
  return s;
}

// The slowest rank's NIC bounds an inter-node ring: busbw ≤ its port rate (nccl-tests
// PERFORMANCE.md: busbw is comparable to the hardware's link bandwidth). Unknown when any rank's
// port is unknown.
std::optional<double> expected_busbw(RankContext& ctx) {
  const bench::LinkRate l = bench::host_network_link();
  const double mine = l.gbps ? *l.gbps : -1;
  std::vector<double> all(static_cast<size_t>(ctx.size));
  ctx.host_comm.all_gather(&mine, all.data(), 1, DType::f64);
  const double lowest = *std::min_element(all.begin(), all.end());
  if (lowest <= 0) return std::nullopt;
  return lowest;
}

// busbw of a coll result's median and fastest sample: bytes × busbw factor / seconds (the result's
// own busbw metric divides by the mean time, as nccl-tests does, which one stall drags down).
GroupBusbw group_busbw(const Result& r) {
  GroupBusbw g;
  const double bytes = r.model.value("bytes", 0.0) * r.model.value("busbw_factor", 0.0);
  if (!r.stats || !(r.stats->median > 0) || !(r.stats->min > 0) || !(bytes > 0)) return g;
  g.busbw = bytes / r.stats->median / 1e9;
  g.best = bytes / r.stats->min / 1e9;
  return g;
}

}  // namespace

void ScanRun::coll() {
  const int nodes = static_cast<int>(layout_.nodes.size());
  std::vector<CollOp> ops;
  for (const auto& name : o_.coll_ops) ops.push_back(*parse_coll_op(name));
  // Sequential measurements (budget.hpp stage_cost): the whole job (every op, out of place), then
  // about log2(N) + 2 search steps of the first op.
  const StageCost cost = stage_cost("coll", nodes, 0, static_cast<int>(ops.size()), 0);
  const double budget = begin_stage("coll",
                                    fmt::format("{} bus bandwidth over the whole job, then over halves until "
                                                "the slow subset is found",
                                                o_.coll_ops.front()),
                                    cost);
  if (nodes < 2) {
    skip_stage("coll", "one node: no inter-node collective");
    return;
  }
  if (const std::string& why = no_nics(); !why.empty()) {
    skip_stage("coll", why);
    return;
  }
  if (skipped_for_budget("coll")) return;
  const std::optional<double> expected = expected_busbw(ctx_);
  HalvingSearch search(nodes, o_.rule.tolerance, expected);
  const HarnessOptions h = transfer_harness(per_measurement_seconds(cost, budget));
  const uint64_t bytes = transfer_bytes(o_.coll_size);
  std::vector<Result> results;
  int step = 0;
  while (!search.done()) {
    const auto groups = search.next_groups();
    const double t0 = leader() ? elapsed() : 0;
    const int my_node = layout_.node_of(ctx_.rank);
    int color = -1;
    for (size_t g = 0; g < groups.size(); ++g)
      if (std::find(groups[g].begin(), groups[g].end(), my_node) != groups[g].end()) color = static_cast<int>(g);
    const int group_nodes = color >= 0 ? static_cast<int>(groups[static_cast<size_t>(color)].size()) : 0;
    SubWorld sub(ctx_, color, ctx_.rank, group_nodes);
    std::vector<Result> mine;
    if (sub.member()) {
      bench::CollOptions co;
      co.ops = step == 0 ? ops : std::vector<CollOp>{ops.front()};
      co.min_bytes = co.max_bytes = bytes;
      co.iters = o_.coll_iters;
      co.warmup_iters = 1;
      co.check = 1;
      co.in_place = false;  // one placement is enough to find a slow subset
      bench::Runner local(bench::RunnerOptions{h, false, true}, nullptr);
      bench::run_coll_on_rank(co, h, sub.ctx(), &local, true);
      const std::string subset = subset_name(groups[static_cast<size_t>(color)], layout_);
      for (Result r : local.results()) {
        if (r.key.ends_with("/fit")) continue;  // one size: nothing to fit
        tag(r, {{"stage", "coll"}, {"subset", subset}, {"search_step", step}});
        mine.push_back(std::move(r));
      }
    }
    const auto all = gather(mine);
    // Each group's bus bandwidth of the first op, from its median and its best sample;
    // a group with no value counts as 0 (it failed), so the search takes it for the slow one.
    std::vector<GroupBusbw> busbw;
    for (const auto& g : groups) {
      GroupBusbw v;
      for (const auto& r : all)
        if (r.key == fmt::format("coll/{}", o_.coll_ops.front()) &&
            r.params.value("subset", "") == subset_name(g, layout_) && r.status == Status::pass)
          v = group_busbw(r);
      busbw.push_back(v);
    }
    search.record(busbw);
    if (leader()) {
      std::string text;
      for (size_t g = 0; g < groups.size(); ++g)
        text += fmt::format("{}{{{}}} {} (best sample {})", g ? ", " : "", subset_name(groups[g], layout_),
                            format_figure(busbw[g].busbw, "GB/s"), format_figure(busbw[g].best, "GB/s"));
      say("      {}: {} ({:.1f} s)\n", search.outcome().steps.back().purpose, text, elapsed() - t0);
      results.insert(results.end(), all.begin(), all.end());
    }
    ++step;
  }
  if (!leader()) return;
  auto findings =
      judge_coll(results, search.outcome(), layout_.nodes, expected, "slowest node's fastest network port", o_.rule);
  end_stage("coll", std::move(results), std::move(findings));
}

}  // namespace gcb::scan
