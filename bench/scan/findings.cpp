// Scan's verdicts (findings.hpp): verdict and subject names, Finding::subject, the evidence text of a figure, and
// judge_figures, robust.hpp's rule applied to a group of figures.
#include "bench/scan/findings.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "reports/render.hpp"

namespace gcb::scan {

std::string_view verdict_name(Verdict v) {
  switch (v) {
    case Verdict::ok: return "OK";
    case Verdict::slow: return "SLOW";
    case Verdict::fail: return "FAIL";
    case Verdict::missing: return "MISSING";
  }
  return "OK";
}

std::optional<Verdict> parse_verdict(std::string_view s) {
  for (Verdict v : {Verdict::ok, Verdict::slow, Verdict::fail, Verdict::missing})
    if (verdict_name(v) == s) return v;
  return std::nullopt;
}

int verdict_severity(Verdict v) {
  switch (v) {
    case Verdict::ok: return 0;
    case Verdict::slow: return 1;
    case Verdict::missing: return 2;
    case Verdict::fail: return 3;
  }
  return 0;
}

std::string_view subject_kind_name(SubjectKind k) {
  switch (k) {
    case SubjectKind::job: return "job";
    case SubjectKind::node: return "node";
    case SubjectKind::gpu: return "gpu";
    case SubjectKind::link: return "link";
    case SubjectKind::subset: return "subset";
  }
  return "node";
}

std::string Finding::subject() const {
  switch (kind) {
    case SubjectKind::job: return "job";
    case SubjectKind::node: return node;
    case SubjectKind::gpu: return gpu >= 0 ? fmt::format("{} GPU{}", node, gpu) : node + " host";
    case SubjectKind::link:
      if (gpu >= 0 && peer.rfind("GPU", 0) == 0) return fmt::format("{} GPU{} -> {}", node, gpu, peer);
      return rail >= 0 ? fmt::format("{} -> {} rail {}", node, peer, rail) : fmt::format("{} -> {}", node, peer);
    case SubjectKind::subset: return fmt::format("{{{}}}", peer);
  }
  return node;
}

std::string format_figure(double value, const std::string& unit) {
  // Bandwidths above 1000 GB/s read better in TB/s (the "2.41 TB/s").
  if (unit == "GB/s" && std::fabs(value) >= 1000) return format_value(value / 1000) + " TB/s";
  if (unit == "GB/s" && std::fabs(value) < 0.1 && value != 0) return format_value(value * 1000) + " MB/s";
  if (unit == "s") return format_seconds(value);
  // A CPU GEMM's 0.0008662 TFLOP/s reads 866.2 MFLOP/s (readable_rate, as every console table).
  if (unit.ends_with("FLOP/s")) {
    const auto [v, u] = readable_rate(value, unit);
    return format_value(v) + " " + u;
  }
  return format_value(value) + (unit.empty() ? "" : " " + unit);
}

namespace {

std::string figure_evidence(const Finding& f, const GroupStats& g, const Deviation& d, const std::string& note) {
  std::string e = fmt::format("{} {}", f.figure, format_figure(*f.value, f.unit));
  if (g.n >= 3)
    e += fmt::format(", fleet median {} ({} peers), {}", format_figure(g.median, f.unit), g.n,
                     describe_sigmas(d, f.higher_is_better));
  else
    e += fmt::format(" ({} peer{}: too few for the median/MAD rule)", g.n, g.n == 1 ? "" : "s");
  if (f.percent_of_expected)
    e += fmt::format(", {:.0f} % of expected {} ({})", *f.percent_of_expected, format_figure(*f.expected, f.unit),
                     f.expected_source);
  if (!note.empty()) e += "; " + note;
  return e;
}

}  // namespace

std::vector<Finding> judge_figures(const std::vector<Figure>& group, const RobustRule& rule) {
  std::vector<double> values;
  for (const auto& f : group) values.push_back(f.value);
  const GroupStats g = group_stats(values);
  std::vector<Finding> out;
  for (const auto& fig : group) {
    Finding f = fig.subject;
    f.value = fig.value;
    const Deviation d = deviation(fig.value, f.higher_is_better, g);
    f.peers = g.n;
    if (g.n >= rule.min_peers) {
      f.median = g.median;
      f.sigmas = d.sigmas;
      f.shortfall = d.shortfall;
    }
    bool slow = slow_against_peers(d, g, rule);
    if (f.expected && *f.expected > 0) {
      f.percent_of_expected = percent_of_expected(fig.value, *f.expected, f.higher_is_better);
      slow = slow || slow_against_expected(fig.value, *f.expected, f.higher_is_better, rule);
    }
    f.verdict = slow ? Verdict::slow : Verdict::ok;
    f.evidence = figure_evidence(f, g, d, fig.note);
    out.push_back(std::move(f));
  }
  return out;
}

std::vector<Finding> node_rollup(const std::string& stage, const std::vector<std::string>& nodes,
                                 const std::vector<Finding>& findings) {
  std::vector<Finding> out;
  for (const auto& node : nodes) {
    const Finding* worst = nullptr;
    size_t count = 0;
    for (const auto& f : findings) {
      if (f.node != node || (f.kind != SubjectKind::node && f.kind != SubjectKind::gpu)) continue;
      ++count;
      if (!worst || verdict_severity(f.verdict) > verdict_severity(worst->verdict) ||
          (f.verdict == worst->verdict && f.shortfall.value_or(0) > worst->shortfall.value_or(0)))
        worst = &f;
    }
    Finding n;
    n.stage = stage;
    n.kind = SubjectKind::node;
    n.node = node;
    if (!worst) {
      n.verdict = Verdict::missing;
      n.evidence = "no result from this node in this stage";
    } else if (worst->verdict == Verdict::ok) {
      n.evidence = fmt::format("{} figure{} OK", count, count == 1 ? "" : "s");
      n.figure = worst->figure;
    } else {
      n = *worst;
      n.kind = SubjectKind::node;
      n.evidence = (worst->kind == SubjectKind::gpu ? worst->subject() + ": " : std::string()) + worst->evidence;
    }
    out.push_back(std::move(n));
  }
  return out;
}

Culprits rank_culprits(const std::vector<Finding>& findings) {
  Culprits c;
  std::vector<std::pair<std::string, std::string>> culprit_nodes;  // (stage, node)
  for (const auto& f : findings)
    if (f.verdict != Verdict::ok && f.kind == SubjectKind::node) culprit_nodes.emplace_back(f.stage, f.node);
  auto explained = [&](const Finding& f) {
    if (f.kind != SubjectKind::link) return false;
    for (const auto& [stage, node] : culprit_nodes)
      if (stage == f.stage && (node == f.node || node == f.peer)) return true;
    return false;
  };
  // A node's rollup repeats its worst GPU (or host) finding: list the device, not both.
  auto repeats_device = [&](const Finding& f) {
    if (f.kind != SubjectKind::node) return false;
    return std::any_of(findings.begin(), findings.end(), [&](const Finding& g) {
      return g.kind == SubjectKind::gpu && g.verdict != Verdict::ok && g.stage == f.stage && g.node == f.node;
    });
  };
  auto& out = c.ranked;
  for (const auto& f : findings) {
    if (f.verdict == Verdict::ok || repeats_device(f)) continue;
    if (explained(f)) {
      ++c.explained_links;
      continue;
    }
    out.push_back(f);
  }
  auto kind_order = [](SubjectKind k) {
    switch (k) {
      case SubjectKind::node:
      case SubjectKind::gpu: return 0;
      case SubjectKind::job: return 1;
      case SubjectKind::subset: return 2;
      case SubjectKind::link: return 3;
    }
    return 3;
  };
  std::stable_sort(out.begin(), out.end(), [&](const Finding& a, const Finding& b) {
    if (verdict_severity(a.verdict) != verdict_severity(b.verdict))
      return verdict_severity(a.verdict) > verdict_severity(b.verdict);
    if (kind_order(a.kind) != kind_order(b.kind)) return kind_order(a.kind) < kind_order(b.kind);
    return a.shortfall.value_or(0) > b.shortfall.value_or(0);
  });
  return c;
}

std::string render_culprits(const Culprits& culprits, const RobustRule& rule) {
  const auto& ranked = culprits.ranked;
  std::string out = fmt::format(
      "\n# culprits, ranked (SLOW = more than {} MAD worse than the peer median on a log scale (MAD × {} = σ) and "
      "more than {:.0f} % short of it, or below {:.0f} % of the expected value)\n",
      rule.mad_threshold, kMadToSigma, rule.tolerance * 100, rule.min_percent_of_expected);
  if (ranked.empty()) return out + "  none: every node, GPU and link is OK\n";
  size_t i = 0;
  for (const auto& f : ranked)
    out += fmt::format("{:>3}. {:<7} {:<10} {}: {}\n", ++i, verdict_name(f.verdict), f.stage, f.subject(), f.evidence);
  if (culprits.explained_links > 0)
    out += fmt::format("     (+ {} SLOW/FAIL link{} explained by the nodes above; all in the JSON)\n",
                       culprits.explained_links, culprits.explained_links == 1 ? "" : "s");
  return out;
}

Result to_result(const Finding& f, int culprit_rank) {
  Result r;
  r.key = std::string(kVerdictKey);
  r.params = {{"stage", f.stage}, {"subject", f.subject()}, {"kind", subject_kind_name(f.kind)}, {"node", f.node}};
  if (f.gpu >= 0) r.params["gpu"] = f.gpu;
  if (!f.peer.empty()) r.params["peer"] = f.peer;
  if (f.rail >= 0) r.params["rail"] = f.rail;
  if (!f.figure.empty()) r.params["figure"] = f.figure;
  r.status = f.verdict == Verdict::ok ? Status::pass : Status::fail;
  if (f.verdict != Verdict::ok) r.reason = fmt::format("{}: {}", verdict_name(f.verdict), f.evidence);
  if (f.value) {
    Metric m{"value", f.value, f.unit, f.higher_is_better, f.expected, f.expected_source};
    r.metrics.push_back(std::move(m));
  }
  auto opt = [](const std::optional<double>& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); };
  r.extra = {{"verdict", verdict_name(f.verdict)},
             {"evidence", f.evidence},
             {"median", opt(f.median)},
             {"sigmas", opt(f.sigmas)},
             {"shortfall", opt(f.shortfall)},
             {"peers", f.peers},
             {"percent_of_expected", opt(f.percent_of_expected)}};
  if (culprit_rank > 0) r.extra["culprit_rank"] = culprit_rank;
  return r;
}

std::optional<Finding> finding_from_result(const Result& r) {
  if (r.key != kVerdictKey) return std::nullopt;
  Finding f;
  const auto& p = r.params;
  f.stage = p.value("stage", "");
  const std::string kind = p.value("kind", "node");
  for (SubjectKind k : {SubjectKind::job, SubjectKind::node, SubjectKind::gpu, SubjectKind::link, SubjectKind::subset})
    if (subject_kind_name(k) == kind) f.kind = k;
  f.node = p.value("node", "");
  f.gpu = p.value("gpu", -1);
  f.peer = p.value("peer", "");
  f.rail = p.value("rail", -1);
  f.figure = p.value("figure", "");
  const auto& x = r.extra;
  f.verdict = parse_verdict(x.value("verdict", "OK")).value_or(Verdict::ok);
  f.evidence = x.value("evidence", "");
  auto opt = [&](const char* k) -> std::optional<double> {
    if (!x.contains(k) || !x.at(k).is_number()) return std::nullopt;
    return x.at(k).get<double>();
  };
  f.median = opt("median");
  f.sigmas = opt("sigmas");
  f.shortfall = opt("shortfall");
  f.percent_of_expected = opt("percent_of_expected");
  f.peers = x.value("peers", size_t{0});
  if (const Metric* m = r.metric("value")) {
    f.value = m->value;
    f.unit = m->unit;
    f.higher_is_better = m->higher_is_better;
    f.expected = m->peak;
    f.expected_source = m->peak_source;
  }
  return f;
}

}  // namespace gcb::scan
