// Verdicts of the inter-node stages: every link judged against the fleet, then attribution — a
// node is the culprit when more than half of its links of one kind are SLOW (a slow NIC or cable
// slows every pair it is in); a SLOW link whose ends are both mostly fine is itself the culprit.
#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "bench/scan/judge.hpp"
#include "core/stats.hpp"

namespace gcb::scan {

namespace {

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

// One result per link of `kind` (key, stage, both nodes, rail) with how many measured it: the
// failed one if any failed, else the best by the judged metric.
std::vector<std::pair<const Result*, size_t>> best_per_link(const std::vector<Result>& results, const LinkKind& kind) {
  std::vector<std::pair<const Result*, size_t>> out;
  std::map<std::string, size_t> index;
  for (const auto& r : results) {
    if (r.key != kind.key || param_text(r.params, "stage") != kind.stage) continue;
    const std::string id =
        param_text(r.params, "src_node") + "|" + param_text(r.params, "dst_node") + "|" + param_text(r.params, "rail");
    const auto it = index.find(id);
    if (it == index.end()) {
      index[id] = out.size();
      out.emplace_back(&r, 1);
      continue;
    }
    auto& [kept, count] = out[it->second];
    ++count;
    if (kept->status != Status::pass) continue;  // a failure stands
    if (r.status != Status::pass) {
      kept = &r;
      continue;
    }
    const Metric* a = judged_metric(*kept);
    const Metric* b = judged_metric(r);
    if (!a || (b && (b->higher_is_better ? *b->value > *a->value : *b->value < *a->value))) kept = &r;
  }
  return out;
}

// Attribution of one kind's link findings to nodes; returns node findings (one per node that has
// links of this kind) with the verdict SLOW when a majority of the node's links are SLOW.
std::vector<Finding> attribute(const LinkKind& kind, const std::vector<Finding>& links,
                               const std::vector<std::string>& nodes) {
  std::vector<Finding> out;
  std::optional<double> fleet;  // the group median every judged link carries
  for (const auto& l : links)
    if (l.median && !fleet) fleet = l.median;
  for (const auto& node : nodes) {
    // Directional kinds: outgoing and incoming separately (a slow sender vs a slow receiver).
    struct Side {
      const char* name;
      std::vector<const Finding*> links;
    };
    std::vector<Side> sides;
    if (kind.directional)
      sides = {{"outgoing", {}}, {"incoming", {}}};
    else
      sides = {{"", {}}};
    for (const auto& l : links) {
      if (kind.directional) {
        if (l.node == node) sides[0].links.push_back(&l);
        if (l.peer == node) sides[1].links.push_back(&l);
      } else if (l.node == node || l.peer == node) {
        sides[0].links.push_back(&l);
      }
    }
    Finding f;
    f.stage = kind.stage;
    f.kind = SubjectKind::node;
    f.node = node;
    f.figure = kind.figure;
    size_t total = 0;
    for (const auto& side : sides) {
      total += side.links.size();
      if (side.links.empty()) continue;
      size_t slow = 0, failed = 0;
      std::vector<double> values;
      for (const Finding* l : side.links) {
        slow += l->verdict == Verdict::slow ? 1 : 0;
        failed += l->verdict == Verdict::fail ? 1 : 0;
        if (l->value) values.push_back(*l->value);
      }
      const std::string what = fmt::format("{}{}{} link{}", side.name, *side.name ? " " : "", kind.figure,
                                           side.links.size() == 1 ? "" : "s");
      if (2 * failed > side.links.size()) {
        f.verdict = Verdict::fail;
        f.evidence = fmt::format("{} of {} {} FAILED", failed, side.links.size(), what);
        break;
      }
      if (2 * slow > side.links.size() && f.verdict == Verdict::ok) {
        f.verdict = Verdict::slow;
        const Finding& any = *side.links.front();
        f.unit = any.unit;
        f.higher_is_better = any.higher_is_better;
        if (!values.empty()) f.value = percentile(values, 0.5);
        f.median = fleet;
        if (f.value && fleet && *fleet > 0)
          f.shortfall = f.higher_is_better ? 1 - *f.value / *fleet : 1 - *fleet / *f.value;
        f.evidence = fmt::format("{} of {} {} SLOW", slow, side.links.size(), what);
        if (f.value) {
          f.evidence += fmt::format(": median {}", format_figure(*f.value, f.unit));
          if (fleet) f.evidence += fmt::format(" vs fleet median {}", format_figure(*fleet, f.unit));
        }
        const auto worst = std::max_element(
            side.links.begin(), side.links.end(),
            [](const Finding* a, const Finding* b) { return a->shortfall.value_or(0) < b->shortfall.value_or(0); });
        if ((*worst)->sigmas) f.sigmas = (*worst)->sigmas;
        f.evidence += fmt::format("; worst {}: {}", (*worst)->subject(), (*worst)->evidence);
      }
    }
    if (total == 0) continue;
    if (f.verdict == Verdict::ok)
      f.evidence = fmt::format("{} {} link{} judged, no majority SLOW", total, kind.figure, total == 1 ? "" : "s");
    out.push_back(std::move(f));
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
    std::vector<Finding> links;
    for (const auto& [best, measurements] : best_per_link(results, kind)) {
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
        links.push_back(std::move(s));
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
    }
    auto judged = judge_figures(group, rule);
    links.insert(links.end(), judged.begin(), judged.end());
    auto nodes_of_kind = attribute(kind, links, nodes);
    per_node.insert(per_node.end(), nodes_of_kind.begin(), nodes_of_kind.end());
    out.insert(out.end(), links.begin(), links.end());
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
