// Verdicts of the inter-node stages: every link judged against the fleet, then attribution — a
// node is the culprit when more than half of its links of one kind are SLOW, or when its median
// over its links is SLOW against the other nodes' medians (a slow NIC or cable slows every pair it
// is in, and with four nodes half of all pairs touch it, so the links alone cannot tell), and a
// re-measurement with a node that is not SLOW confirms it; a SLOW link whose ends are both fine is
// itself the culprit.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "bench/scan/judge.hpp"
#include "core/stats.hpp"

namespace gcb::scan {

namespace {

constexpr size_t kIntermittentMin = 8;

struct LinkKind {
  const char* key;     // result key
  const char* stage;   // pairs | bisection
  const char* figure;  // judged figure
  bool directional;    // src → dst differs from dst → src
};
constexpr LinkKind kKinds[] = {
    {"p2p/bandwidth", "pairs", "send bandwidth", true},
    {"p2p/bidir_bandwidth", "pairs", "bidirectional bandwidth", false},
    {"p2p/latency", "pairs", "latency", false},
    {"p2p/bidir_bandwidth", "bisection", "bisection bidirectional bandwidth", false},
};

// One link of `kind` (key, stage, both nodes, rail): the result it is judged on — the failed one
// if any failed, else the best by the judged metric — how many measured it, and the best value of
// its re-measurements (confirmation or probe), which confirm or clear a node.
struct LinkMeasurements {
  const Result* kept = nullptr;
  size_t count = 0;
  std::optional<double> again;  // best value among the re-measurements
  std::vector<double> all;      // every passed measurement's value
};

bool better(const Metric& a, double b) { return a.higher_is_better ? b > *a.value : b < *a.value; }

std::vector<LinkMeasurements> best_per_link(const std::vector<Result>& results, const LinkKind& kind) {
  std::vector<LinkMeasurements> out;
  std::map<std::string, size_t> index;
  for (const auto& r : results) {
    if (r.key != kind.key || param_text(r.params, "stage") != kind.stage) continue;
    const std::string id =
        param_text(r.params, "src_node") + "|" + param_text(r.params, "dst_node") + "|" + param_text(r.params, "rail");
    const bool again = r.params.value("confirm", false) || r.params.value("probe", false);
    const Metric* m = r.status == Status::pass ? judged_metric(r) : nullptr;
    auto it = index.find(id);
    if (it == index.end()) {
      it = index.emplace(id, out.size()).first;
      out.push_back({&r, 0, std::nullopt, {}});
    } else {
      LinkMeasurements& l = out[it->second];
      if (l.kept->status == Status::pass) {  // a failure stands
        const Metric* a = judged_metric(*l.kept);
        if (r.status != Status::pass || !a || (m && better(*a, *m->value))) l.kept = &r;
      }
    }
    LinkMeasurements& l = out[it->second];
    ++l.count;
    if (m) l.all.push_back(*m->value);
    if (again && m) {
      if (!l.again || (m->higher_is_better ? *m->value > *l.again : *m->value < *l.again)) l.again = *m->value;
    }
  }
  return out;
}

// A judged link with its re-measurement (best of them), for the confirmation of its nodes.
struct JudgedLink {
  Finding finding;
  std::optional<double> again;
  std::vector<double> all;
};

double shortfall_of(double value, double median, bool higher_is_better) {
  if (higher_is_better) return median > 0 ? 1 - value / median : 0;
  return value > 0 ? 1 - median / value : 1;
}

// Per-endpoint rule: each (node, rail)'s median over its links of one side against every other
// endpoint's median, by the rule of robust.hpp (needs min_peers endpoints: 3 nodes on one rail).
// A slow NIC or cable slows every pair it is in, so its median drops with it; a healthy node's
// median stays with the fleet while fewer than half of its partners are slow. Returns, per node,
// its worst SLOW endpoint finding (nodes absent when none is SLOW).
std::map<std::string, Finding> endpoint_rule(const LinkKind& kind, const char* side_name,
                                             const std::vector<JudgedLink>& links, bool outgoing, bool incoming,
                                             const RobustRule& rule) {
  std::map<std::pair<std::string, int>, std::vector<double>> values;
  std::map<std::pair<std::string, int>, std::set<std::string>> partners;
  const Finding* any = nullptr;
  for (const auto& jl : links) {
    const Finding& l = jl.finding;
    if (l.verdict == Verdict::fail || !l.value) continue;
    any = &l;
    if (outgoing) values[{l.node, l.rail}].push_back(*l.value), partners[{l.node, l.rail}].insert(l.peer);
    if (incoming) values[{l.peer, l.rail}].push_back(*l.value), partners[{l.peer, l.rail}].insert(l.node);
  }
  // One partner cannot tell which end is slow (the bisection has one per node).
  for (auto it = values.begin(); it != values.end();)
    it = partners[it->first].size() < 2 ? values.erase(it) : std::next(it);
  std::map<std::string, Finding> out;
  if (!any) return out;
  bool rails = false;
  for (const auto& [end, v] : values) rails = rails || end.second > 0;
  std::vector<Figure> group;
  for (const auto& [end, v] : values) {
    Figure fig;
    fig.subject.stage = kind.stage;
    fig.subject.kind = SubjectKind::node;
    fig.subject.node = end.first;
    fig.subject.rail = end.second;
    fig.subject.unit = any->unit;
    fig.subject.higher_is_better = any->higher_is_better;
    fig.subject.figure =
        fmt::format("{}median {}{}{} over its {} link{}", rails ? fmt::format("rail {} ", end.second) : "", side_name,
                    *side_name ? " " : "", kind.figure, v.size(), v.size() == 1 ? "" : "s");
    fig.value = percentile(v, 0.5);
    group.push_back(std::move(fig));
  }
  for (auto& f : judge_figures(group, rule)) {
    if (f.verdict != Verdict::slow) continue;
    auto it = out.find(f.node);
    if (it == out.end() || f.shortfall.value_or(0) > it->second.shortfall.value_or(0)) out[f.node] = f;
  }
  return out;
}

// Attribution of one kind's link findings to nodes; returns node findings (one per node that has
// links of this kind): FAIL when most of one side's links failed; SLOW when most of one side's
// links are SLOW, or when its median on one side is SLOW against the other nodes' medians
// (endpoint_rule); then the confirmation — a SLOW node whose link to a node that is not SLOW was
// measured again (a confirmation or a probe) keeps SLOW only when that re-measurement is also
// more than `tolerance` short of the median link between nodes that are not SLOW; otherwise it
// was a transient. Last, the intermittent rule for ends that flap.
std::vector<Finding> attribute(const LinkKind& kind, const std::vector<JudgedLink>& links,
                               const std::vector<std::string>& nodes, const RobustRule& rule) {
  std::vector<Finding> out;
  std::optional<double> fleet;  // the group median every judged link carries
  for (const auto& l : links)
    if (l.finding.median && !fleet) fleet = l.finding.median;
  struct SideRule {
    const char* name;
    bool outgoing, incoming;
  };
  std::vector<SideRule> sides;
  if (kind.directional)
    sides = {{"outgoing", true, false}, {"incoming", false, true}};
  else
    sides = {{"", true, true}};
  std::vector<int> slow_sides;  // per finding of `out`: the side that made it SLOW, or -1
  std::vector<std::map<std::string, Finding>> by_endpoint;
  for (const auto& side : sides)
    by_endpoint.push_back(endpoint_rule(kind, side.name, links, side.outgoing, side.incoming, rule));
  std::map<std::string, std::vector<const Finding*>> sent, received;  // links by source / destination node
  for (const auto& jl : links) {
    sent[jl.finding.node].push_back(&jl.finding);
    received[jl.finding.peer].push_back(&jl.finding);
  }
  for (const auto& node : nodes) {
    Finding f;
    f.stage = kind.stage;
    f.kind = SubjectKind::node;
    f.node = node;
    f.figure = kind.figure;
    size_t total = 0;
    int slow_side = -1;
    for (size_t si = 0; si < sides.size(); ++si) {
      const SideRule& side = sides[si];
      std::vector<const Finding*> mine;
      if (side.outgoing) mine = sent[node];
      if (side.incoming) mine.insert(mine.end(), received[node].begin(), received[node].end());
      total += mine.size();
      if (mine.empty()) continue;
      size_t slow = 0, failed = 0;
      std::vector<double> values;
      for (const Finding* l : mine) {
        slow += l->verdict == Verdict::slow ? 1 : 0;
        failed += l->verdict == Verdict::fail ? 1 : 0;
        if (l->value) values.push_back(*l->value);
      }
      const std::string what =
          fmt::format("{}{}{} link{}", side.name, *side.name ? " " : "", kind.figure, mine.size() == 1 ? "" : "s");
      if (2 * failed > mine.size()) {
        f.verdict = Verdict::fail;
        f.evidence = fmt::format("{} of {} {} FAILED", failed, mine.size(), what);
        slow_side = -1;
        break;
      }
      if (f.verdict != Verdict::ok) continue;
      std::set<std::string> partners;
      for (const Finding* l : mine) partners.insert(l->node == node ? l->peer : l->node);
      if (2 * slow > mine.size() && partners.size() >= 2) {  // one partner cannot tell which end is slow
        f.verdict = Verdict::slow;
        slow_side = static_cast<int>(si);
        const Finding& any = *mine.front();
        f.unit = any.unit;
        f.higher_is_better = any.higher_is_better;
        if (!values.empty()) f.value = percentile(values, 0.5);
        f.median = fleet;
        if (f.value && fleet && *fleet > 0) f.shortfall = shortfall_of(*f.value, *fleet, f.higher_is_better);
        f.evidence = fmt::format("{} of {} {} SLOW", slow, mine.size(), what);
        if (f.value) {
          f.evidence += fmt::format(": median {}", format_figure(*f.value, f.unit));
          if (fleet) f.evidence += fmt::format(" vs fleet median {}", format_figure(*fleet, f.unit));
        }
        const auto worst = std::max_element(mine.begin(), mine.end(), [](const Finding* a, const Finding* b) {
          return a->shortfall.value_or(0) < b->shortfall.value_or(0);
        });
        if ((*worst)->sigmas) f.sigmas = (*worst)->sigmas;
        f.evidence += fmt::format("; worst {}: {}", (*worst)->subject(), (*worst)->evidence);
        continue;
      }
      const auto e = by_endpoint[si].find(node);
      if (e != by_endpoint[si].end()) {
        f.verdict = Verdict::slow;
        slow_side = static_cast<int>(si);
        f.unit = e->second.unit;
        f.higher_is_better = e->second.higher_is_better;
        f.value = e->second.value;
        f.median = e->second.median;
        f.sigmas = e->second.sigmas;
        f.shortfall = e->second.shortfall;
        f.peers = e->second.peers;
        f.rail = e->second.rail;
        f.evidence = fmt::format("{} against the other nodes' medians ({} of {} {} SLOW on their own)",
                                 e->second.evidence, slow, mine.size(), what);
      }
    }
    if (total == 0) continue;
    if (f.verdict == Verdict::ok)
      f.evidence = fmt::format("{} {} link{} judged, no majority SLOW, median in line", total, kind.figure,
                               total == 1 ? "" : "s");
    out.push_back(std::move(f));
    slow_sides.push_back(slow_side);
  }
  // Confirmation of every SLOW node by a re-measured link to a node that is not SLOW.
  std::vector<std::string> slow_before;
  for (const auto& f : out)
    if (f.verdict == Verdict::slow) slow_before.push_back(f.node);
  auto slow_node = [&](const std::string& n) {
    return std::find(slow_before.begin(), slow_before.end(), n) != slow_before.end();
  };
  // The re-measurement is held against the links between nodes that are not SLOW: with few nodes,
  // the slow node's links pull the whole fleet's median halfway down.
  std::optional<double> healthy = fleet;
  {
    std::vector<double> v;
    for (const auto& jl : links)
      if (jl.finding.value && jl.finding.verdict != Verdict::fail && !slow_node(jl.finding.node) &&
          !slow_node(jl.finding.peer))
        v.push_back(*jl.finding.value);
    if (!v.empty()) healthy = percentile(v, 0.5);
  }
  for (size_t i = 0; i < out.size(); ++i) {
    Finding& f = out[i];
    if (f.verdict != Verdict::slow || slow_sides[i] < 0 || !healthy) continue;
    const SideRule& side = sides[static_cast<size_t>(slow_sides[i])];
    const Finding* best = nullptr;
    double best_short = 2;
    for (const auto& jl : links) {
      const Finding& l = jl.finding;
      if (!jl.again) continue;
      if (f.rail >= 0 && l.rail != f.rail) continue;  // a port's verdict is confirmed on its own rail
      const bool out_side = side.outgoing && l.node == f.node && !slow_node(l.peer);
      const bool in_side = side.incoming && l.peer == f.node && !slow_node(l.node);
      if (!out_side && !in_side) continue;
      const double s = shortfall_of(*jl.again, *healthy, l.higher_is_better);
      if (s < best_short) best_short = s, best = &l;
    }
    if (!best) continue;
    const std::string partner = best->node == f.node ? best->peer : best->node;
    const double v = best->higher_is_better ? (1 - best_short) * *healthy : *healthy / (1 - best_short);
    if (best_short > rule.tolerance) {
      f.evidence += fmt::format(
          "; confirmed: measured again with {}, {} ({:.0f} % short of the median link between "
          "nodes not SLOW)",
          partner, format_figure(v, best->unit), best_short * 100);
    } else {
      f.evidence = fmt::format(
          "in line once measured again with {} ({} against {} between nodes not SLOW): a transient; "
          "before: {}",
          partner, format_figure(v, best->unit), format_figure(*healthy, best->unit), f.evidence);
      f.verdict = Verdict::ok;
      f.value.reset();
      f.sigmas.reset();
      f.shortfall.reset();
      f.rail = -1;
    }
  }
  // Intermittent ports: an end (node, rail) none of the rules above named, whose measurements
  // with partners that are not SLOW were more than `tolerance` short of the fleet's link median in
  // at least a quarter of kIntermittentMin or more measurements (every measurement counts here, not
  // each link's best). A port that flaps passes the rules above — a link measured fast once is
  // forgiven and its median sits at the boundary — while a healthy end is short only with slow
  // partners, which are left out. Needs kIntermittentMin measurements on one side: nine nodes with
  // every round, or eight rounds.
  if (!fleet) return out;
  std::string unit;
  for (const auto& l : links)
    if (unit.empty()) unit = l.finding.unit;
  std::vector<std::string> slow_after;
  for (const auto& f : out)
    if (f.verdict != Verdict::ok) slow_after.push_back(f.node);
  auto named = [&](const std::string& n) {
    return std::find(slow_after.begin(), slow_after.end(), n) != slow_after.end();
  };
  for (size_t si = 0; si < sides.size(); ++si) {
    const SideRule& side = sides[si];
    std::map<std::pair<std::string, int>, std::pair<size_t, size_t>> tally;  // (short, measured)
    for (const auto& jl : links) {
      const Finding& l = jl.finding;
      if (l.verdict == Verdict::fail) continue;
      for (double v : jl.all) {
        const size_t is_short = shortfall_of(v, *fleet, l.higher_is_better) > rule.tolerance ? 1 : 0;
        if (side.outgoing && !named(l.peer)) {
          auto& t = tally[{l.node, l.rail}];
          t.first += is_short, ++t.second;
        }
        if (side.incoming && !named(l.node)) {
          auto& t = tally[{l.peer, l.rail}];
          t.first += is_short, ++t.second;
        }
      }
    }
    for (auto& f : out) {
      if (f.verdict != Verdict::ok) continue;
      for (const auto& [end, t] : tally) {
        if (end.first != f.node || t.second < kIntermittentMin || 4 * t.first < t.second) continue;
        f.verdict = Verdict::slow;
        f.rail = end.second;
        f.evidence = fmt::format(
            "intermittent: rail {} {}{}{}: {} of {} measurements with partners not SLOW more than {:.0f} % short of "
            "the fleet median {}",
            end.second, side.name, *side.name ? " " : "", kind.figure, t.first, t.second, rule.tolerance * 100,
            format_figure(*fleet, unit));
        break;
      }
    }
  }
  return out;
}

}  // namespace

std::vector<Finding> judge_pairs(const std::vector<Result>& results, const std::vector<std::string>& nodes,
                                 const RobustRule& rule) {
  std::vector<Finding> out;
  std::vector<Finding> per_node;  // attribution of every kind, merged below
  for (const auto& kind : kKinds) {
    std::vector<Figure> group;
    std::vector<std::optional<double>> group_again;
    std::vector<std::vector<double>> group_all;
    std::vector<JudgedLink> links;
    for (const auto& [best, measurements, again, every] : best_per_link(results, kind)) {
      const Result& r = *best;
      Finding s;
      s.stage = kind.stage;
      s.kind = SubjectKind::link;
      s.node = param_text(r.params, "src_node");
      s.peer = param_text(r.params, "dst_node");
      s.rail = r.params.value("rail", -1);
      s.figure = kind.figure;
      if (r.status == Status::waived) continue;
      if (r.status != Status::pass) {
        s.verdict = Verdict::fail;
        s.evidence = fmt::format("{} {}: {}", r.key, status_name(r.status), r.reason);
        links.push_back({std::move(s), std::nullopt, {}});
        continue;
      }
      const Metric* m = judged_metric(r);
      if (!m) continue;
      s.unit = m->unit;
      s.higher_is_better = m->higher_is_better;
      if (r.extra.contains("expected_gbps") && r.extra.at("expected_gbps").is_number()) {
        s.expected = r.extra.at("expected_gbps").get<double>();
        s.expected_source = r.extra.value("expected_source", "");
      }
      group.push_back({s, *m->value, measurements > 1 ? fmt::format("best of {} measurements", measurements) : ""});
      group_again.push_back(again);
      group_all.push_back(every);
    }
    auto judged = judge_figures(group, rule);
    for (size_t i = 0; i < judged.size(); ++i) links.push_back({std::move(judged[i]), group_again[i], group_all[i]});
    auto nodes_of_kind = attribute(kind, links, nodes, rule);
    per_node.insert(per_node.end(), nodes_of_kind.begin(), nodes_of_kind.end());
    for (auto& l : links) out.push_back(std::move(l.finding));
  }
  // One finding per node and stage: the worst attribution, or OK / MISSING.
  for (const char* stage : {"pairs", "bisection"}) {
    bool stage_ran = false;
    for (const auto& f : per_node) stage_ran = stage_ran || f.stage == stage;
    if (!stage_ran) continue;
    for (const auto& node : nodes) {
      const Finding* worst = nullptr;
      for (const auto& f : per_node)
        if (f.stage == stage && f.node == node &&
            (!worst || verdict_severity(f.verdict) > verdict_severity(worst->verdict)))
          worst = &f;
      if (worst) {
        out.push_back(*worst);
        continue;
      }
      if (std::string_view(stage) == "bisection") continue;  // the resting node of an odd job
      Finding m;
      m.stage = stage;
      m.node = node;
      m.verdict = Verdict::missing;
      m.evidence = "no pair result includes this node";
      out.push_back(std::move(m));
    }
  }
  return out;
}

}  // namespace gcb::scan
