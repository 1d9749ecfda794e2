#include "bench/scan/drift.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "bench/scan/judge.hpp"
#include "core/error.hpp"
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
  for (const auto& c : report.comparisons) {
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
    out.push_back(std::move(f));
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
      for (const auto& d : out)  // a link's drift counts against its sending node
        if (d.node == n)
          if (!worst || d.shortfall.value_or(0) > worst->shortfall.value_or(0)) worst = &d;
      if (worst) {
        f.verdict = worst->verdict;
        f.value = worst->value;
        f.unit = worst->unit;
        f.shortfall = worst->shortfall;
        f.evidence = worst->subject() + ": " + worst->evidence;
      } else {
        f.evidence = "no significant slowdown against the baseline";
      }
    }
    out.push_back(std::move(f));
  }
  return out;
}

}  // namespace gcb::scan
