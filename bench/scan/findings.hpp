// What `gcbench scan` concludes: one Finding per node, GPU, link or subset and stage, with a
// verdict (OK / SLOW / FAIL / MISSING) and the evidence behind it; the ranked culprit list on the
// console; and findings as results ("scan/verdict") in the result document.
//   OK       the figure is in line with its peers and its expected value
//   SLOW     it is not (robust.hpp states the rule)
//   FAIL     a measurement failed (wrong bytes, an error) or the configuration differs from the
//            majority (driver, CUDA, NCCL, GPU model, topology)
//   MISSING  something that should report did not (a GPU fewer than the majority, a NIC down,
//            a node with no result in a stage, a node the baseline had)
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "bench/scan/robust.hpp"
#include "reports/result.hpp"

namespace gcb::scan {

enum class Verdict { ok, slow, fail, missing };
std::string_view verdict_name(Verdict v);  // "OK", "SLOW", "FAIL", "MISSING"
std::optional<Verdict> parse_verdict(std::string_view s);
// FAIL and MISSING outrank SLOW, which outranks OK.
int verdict_severity(Verdict v);

enum class SubjectKind { job, node, gpu, link, subset };
std::string_view subject_kind_name(SubjectKind k);

struct Finding {
  std::string stage;  // inventory, device, links, pairs, bisection, coll, reference, drift
  SubjectKind kind = SubjectKind::node;
  std::string node;    // the node (a link's source node)
  int gpu = -1;        // GPU index on the node, or a link's source GPU inside a node
  std::string peer;    // a link's destination node (or destination GPU as "GPU<n>"); a subset's members
  int rail = -1;       // inter-node links: the local rank index on both ends
  std::string figure;  // what was judged: "host triad bandwidth", "send bandwidth", ...
  Verdict verdict = Verdict::ok;
  std::optional<double> value;
  std::string unit;
  bool higher_is_better = true;
  std::optional<double> median;     // of the peer group
  std::optional<double> sigmas;     // (median − value)/σ̂ toward worse
  std::optional<double> shortfall;  // 1 − value/median toward worse
  size_t peers = 0;                 // size of the peer group
  std::optional<double> expected;   // spec / topology value in `unit`
  std::string expected_source;
  std::optional<double> percent_of_expected;
  std::string evidence;  // one line, shown on the console and stored

  // "node-3", "node-3 GPU2", "node-1 -> node-3 rail 0", "node-2 GPU0 -> GPU1", "{node-2,node-3}", "job"
  std::string subject() const;
};

// A figure of one subject to be judged against the other figures of its peer group.
struct Figure {
  Finding subject;  // everything but verdict, statistics and evidence
  double value = 0;
  std::string note;  // appended to the evidence ("throttle: HW slowdown in 40 % of samples")
};
// Applies the rule of robust.hpp to every figure of one peer group (same figure, SKU, link type).
std::vector<Finding> judge_figures(const std::vector<Figure>& group, const RobustRule& rule);

// A number with its unit, four significant digits; GB/s becomes TB/s from 1000 and MB/s below
// 0.1 ("2.41 TB/s", "0.9515 MB/s"); seconds read as s/ms/us/ns.
std::string format_figure(double value, const std::string& unit);

// One finding per node of `nodes` for `stage`: the worst of `findings` that names the node as
// its subject (node or GPU kind) — a node with none is MISSING — or OK with a count.
std::vector<Finding> node_rollup(const std::string& stage, const std::vector<std::string>& nodes,
                                 const std::vector<Finding>& findings);

// Findings that are not OK, most severe first: FAIL and MISSING, then SLOW; nodes and GPUs before
// the job, subsets and links; larger shortfalls first. A link whose end is a culprit node of the
// same stage is explained by it: counted, not listed (it stays in the JSON); a node's rollup of a
// GPU finding is not listed beside that GPU.
struct Culprits {
  std::vector<Finding> ranked;
  size_t explained_links = 0;
};
Culprits rank_culprits(const std::vector<Finding>& findings);
std::string render_culprits(const Culprits& culprits, const RobustRule& rule);

// The result form of a finding: key "scan/verdict", params naming stage and subject, status PASS
// (OK) or FAIL (SLOW, FAIL, MISSING; reason = "VERDICT: evidence"), the judged value as metric
// "value", and the statistics in extra.
inline constexpr std::string_view kVerdictKey = "scan/verdict";
Result to_result(const Finding& f, int culprit_rank = 0);
// Reads a "scan/verdict" result back (for reports and baselines); nullopt for other results.
std::optional<Finding> finding_from_result(const Result& r);

}  // namespace gcb::scan
