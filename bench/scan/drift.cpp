// `gcbench scan --baseline` (drift.hpp): results reduced to what identifies them across jobs (drift_view), paired with
// the previous scan's and judged by compare's statistics and robust.hpp's peer rule into SLOW (drift) findings.
#include "bench/scan/drift.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "bench/scan/judge.hpp"
#include "bench/scan/robust.hpp"
#include "core/error.hpp"
#include "core/stats.hpp"
#include "reports/compare.hpp"

namespace gcb::scan {

namespace {

// Params that name the same thing in two different jobs.
constexpr const char* kIdentity[] = {"stage",  "node", "gpu",   "src_node", "dst_node",    "rail",
                                     "subset", "op",   "dtype", "engine",   "peer_access", "inplace",
                                     "bytes",  "m",    "n",     "k",        "array_bytes"};

std::set<std::string> nodes_in(const std::vector<Result>& results) {
  std::set<std::string> out;
  for (const auto& r : results)
    for (const char* k : {"node", "src_node", "dst_node"})
      if (r.params.contains(k) && r.params.at(k).is_string() && !r.params.at(k).get<std::string>().empty())
        out.insert(r.params.at(k).get<std::string>());
  return out;
}

}  // namespace

ResultDocument drift_view(const std::vector<Result>& results) {
  ResultDocument doc;
  for (const auto& r : results) {
    if (r.key.rfind("scan/", 0) == 0 || !r.params.contains("stage")) continue;
    Result v = r;
    v.params = nlohmann::json::object();
    for (const char* k : kIdentity)
      if (r.params.contains(k)) v.params[k] = r.params.at(k);
    // Inside a node, src/dst are GPU indices and identify the link; between nodes they are world
    // ranks and do not.
    if (r.params.value("stage", "") == "links")
      for (const char* k : {"src", "dst"})
        if (r.params.contains(k)) v.params[k] = r.params.at(k);
    doc.results.push_back(std::move(v));
  }
  return doc;
}

std::vector<Finding> judge_drift(const ResultDocument& baseline, const std::vector<Result>& now,
                                 const std::vector<std::string>& nodes, const RobustRule& rule) {
  std::vector<Finding> out;
  const ResultDocument base = drift_view(baseline.results), mine = drift_view(now);
  CompareOptions co;
  co.threshold = rule.tolerance;
  co.metrics = {"bandwidth_median", "tflops", "latency", "busbw", "step_time"};
  CompareReport report;
  try {
    report = compare_documents(base, mine, co);
  } catch (const UsageError& e) {
    Finding f;
    f.stage = "drift";
    f.kind = SubjectKind::job;
    f.evidence = std::string("nothing to compare with the baseline: ") + e.what();
    out.push_back(std::move(f));
    return out;
  }
  // How far each figure moved: ln(now / before), signed so that negative is slower, grouped by
  // figure across nodes (key, metric and every identity param but the node, GPU, rail and
  // subset). Within a group of min_peers or more, a figure moved against the others when its move
  // is SLOW against theirs (the others' alone) by the rule of robust.hpp; the group's median move
  // is the cluster's. A
  // cluster-wide shift (a driver, a firmware, a warmer room, a host slowed as a whole) moves every
  // node alike and blames none of them; with fewer than min_peers nodes per figure the two cannot
  // be told apart and every significant slowdown stands.
  std::map<std::string, std::vector<size_t>> groups;  // figure → comparison indices
  auto group_of = [](const Comparison& c) {
    nlohmann::json p = c.params;
    for (const char* k : {"node", "src_node", "dst_node", "gpu", "rail", "subset"}) p.erase(k);
    return c.key + "|" + c.metric + "|" + p.dump();
  };
  const auto& cs = report.comparisons;
  for (size_t i = 0; i < cs.size(); ++i)
    if (cs[i].base && cs[i].contender && *cs[i].base > 0 && *cs[i].contender > 0) groups[group_of(cs[i])].push_back(i);
  std::set<size_t> against, with_cluster;  // comparisons that moved against / with their group
  std::optional<double> cluster;           // the median move of the most-moved separable group
  std::string cluster_figure;
  size_t separable = 0;
  for (const auto& [g, idx] : groups) {
    if (idx.size() < rule.min_peers) continue;
    ++separable;
    std::vector<double> factors;
    for (size_t i : idx) {
      const double up = *cs[i].contender / *cs[i].base;
      factors.push_back(cs[i].higher_is_better ? up : 1 / up);
    }
    // Each move against the others' moves (leave one out): in a small group the node under
    // suspicion would otherwise widen the spread it is measured by — with three nodes, one that
    // slowed 100× beside two whose noise differs by 3× sits under 2 MAD of a median it helped make.
    RobustRule others_rule = rule;
    others_rule.min_peers = rule.min_peers - 1;
    for (size_t k = 0; k < idx.size(); ++k) {
      std::vector<double> others;
      for (size_t j = 0; j < idx.size(); ++j)
        if (j != k) others.push_back(factors[j]);
      const GroupStats peers = group_stats(others);
      const bool slow = slow_against_peers(deviation(factors[k], true, peers), peers, others_rule);
      (slow ? against : with_cluster).insert(idx[k]);
    }
    const double m = percentile(factors, 0.5);
    if (!cluster || m < *cluster) cluster = m, cluster_figure = cs[idx.front()].key + " " + cs[idx.front()].metric;
  }
  std::set<std::string> blamed;
  size_t moved_with = 0;
  for (size_t ci = 0; ci < cs.size(); ++ci) {
    const Comparison& c = cs[ci];
    if (c.verdict != gcb::Verdict::slower && c.verdict != gcb::Verdict::failed) continue;
    Finding f;
    f.stage = "drift";
    const auto& p = c.params;
    f.node = p.value("node", p.value("src_node", ""));
    f.peer = p.value("dst_node", "");
    f.gpu = p.value("gpu", -1);
    f.rail = p.value("rail", -1);
    f.kind = !f.peer.empty() ? SubjectKind::link : p.contains("subset") ? SubjectKind::subset : SubjectKind::gpu;
    if (f.kind == SubjectKind::subset) f.peer = p.value("subset", "");
    f.figure = c.key + " " + c.metric;
    f.verdict = c.verdict == gcb::Verdict::failed ? Verdict::fail : Verdict::slow;
    f.value = c.contender;
    f.unit = c.unit;
    f.higher_is_better = c.higher_is_better;
    f.median = c.base;
    if (c.change) f.shortfall = c.higher_is_better ? -*c.change : *c.change;
    f.evidence = fmt::format("{} {} → {} ({}{:.1f} %), {}", f.figure, c.base ? format_figure(*c.base, c.unit) : "-",
                             c.contender ? format_figure(*c.contender, c.unit) : "-",
                             c.change && *c.change > 0 ? "+" : "", c.change ? *c.change * 100 : 0.0, c.reason);
    // A slowdown the figure shares with the same figure of the other nodes is the cluster's.
    if (f.verdict == Verdict::slow && with_cluster.count(ci)) {
      f.verdict = Verdict::ok;
      f.evidence = "with the cluster: " + f.evidence;
      ++moved_with;
    } else if (against.count(ci)) {
      f.evidence += "; moved against the same figure of the other nodes";
    } else if (f.verdict == Verdict::slow) {
      f.evidence += "; too few nodes with this figure to separate it from a cluster-wide shift";
    }
    if (f.verdict != Verdict::ok) blamed.insert(f.node);
    out.push_back(std::move(f));
  }
  if (separable > 0 && cluster) {
    Finding j;
    j.stage = "drift";
    j.kind = SubjectKind::job;
    j.figure = "cluster-wide speed against the baseline";
    j.value = cluster;
    j.unit = "x";
    j.shortfall = 1 - *cluster;
    const bool shifted = 1 - *cluster > rule.tolerance && moved_with > 0;
    j.verdict = shifted ? Verdict::slow : Verdict::ok;
    j.evidence = fmt::format(
        "{}: {} of the median node at {:.3f}× its baseline ({:+.1f} %); {} significant "
        "slowdown{} shared by the other nodes; {}",
        shifted ? "cluster-wide shift" : "no cluster-wide shift", cluster_figure, *cluster, (*cluster - 1) * 100,
        moved_with, moved_with == 1 ? "" : "s",
        blamed.empty()
            ? "no node moved against the others"
            : fmt::format("{} node{} moved against the others", blamed.size(), blamed.size() == 1 ? "" : "s"));
    out.push_back(std::move(j));
  }
  // Per node: the worst drift naming it, MISSING when the baseline had it and this scan does not.
  const std::set<std::string> before = nodes_in(baseline.results);
  std::vector<std::string> all = nodes;
  for (const auto& n : before)
    if (std::find(all.begin(), all.end(), n) == all.end()) all.push_back(n);
  for (const auto& n : all) {
    Finding f;
    f.stage = "drift";
    f.kind = SubjectKind::node;
    f.node = n;
    if (std::find(nodes.begin(), nodes.end(), n) == nodes.end()) {
      f.verdict = Verdict::missing;
      f.evidence = "in the baseline, absent from this scan";
    } else if (!before.count(n)) {
      f.evidence = "not in the baseline: nothing to compare";
    } else {
      const Finding* worst = nullptr;
      for (const auto& d : out)  // a link's drift counts against its sending node; SLOW before OK
        if (d.node == n && d.kind != SubjectKind::job)
          if (!worst || verdict_severity(d.verdict) > verdict_severity(worst->verdict) ||
              (d.verdict == worst->verdict && d.shortfall.value_or(0) > worst->shortfall.value_or(0)))
            worst = &d;
      if (worst && worst->verdict != Verdict::ok) {
        f.verdict = worst->verdict;
        f.value = worst->value;
        f.unit = worst->unit;
        f.shortfall = worst->shortfall;
        f.evidence = worst->subject() + ": " + worst->evidence;
      } else if (worst) {
        f.evidence = "slower with the rest of the cluster, not against it: " + worst->evidence;
      } else {
        f.evidence = "no significant slowdown against the baseline";
      }
    }
    out.push_back(std::move(f));
  }
  return out;
}

}  // namespace gcb::scan
