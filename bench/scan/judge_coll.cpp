// Verdicts of the collective stage: the whole job against its expected bus bandwidth, then what
// the halving search found (halving.hpp) — culprit nodes, or the smallest slow subset.
#include <fmt/format.h>

#include <algorithm>

#include "bench/scan/judge.hpp"

namespace gcb::scan {

namespace {

std::string names_of(const std::vector<int>& idx, const std::vector<std::string>& nodes) {
  std::string s;
  for (int i : idx) {
    if (!s.empty()) s += ",";
    s += nodes.at(static_cast<size_t>(i));
  }
  return s;
}

// "halves {a,b} 0.21 vs {c,d} 0.0049 GB/s; probes {d,a} 0.004, {c,b} 0.19 GB/s"
std::string search_path(const HalvingOutcome& s, const std::vector<std::string>& nodes) {
  std::string out;
  for (const auto& step : s.steps) {
    if (step.purpose == "whole job") continue;
    std::string groups;
    for (size_t i = 0; i < step.groups.size(); ++i)
      groups += fmt::format("{}{{{}}} {}", i ? ", " : "", names_of(step.groups[i], nodes),
                            format_figure(step.busbw[i], "GB/s"));
    out += fmt::format("{}{} {}", out.empty() ? "" : "; ", step.purpose, groups);
  }
  return out;
}

}  // namespace

std::vector<Finding> judge_coll(const std::vector<Result>& results, const HalvingOutcome& search,
                                const std::vector<std::string>& nodes, std::optional<double> expected_busbw,
                                const std::string& expected_source, const RobustRule& rule) {
  std::vector<Finding> out;
  const std::string everyone = names_of(
      [&] {
        std::vector<int> all(nodes.size());
        for (size_t i = 0; i < nodes.size(); ++i) all[i] = static_cast<int>(i);
        return all;
      }(),
      nodes);
  bool any = false;
  for (const auto& r : results) {
    if (param_text(r.params, "stage") != "coll" || param_text(r.params, "subset") != everyone ||
        r.key.ends_with("/fit"))
      continue;
    any = true;
    Finding f;
    f.stage = "coll";
    f.kind = SubjectKind::job;
    f.figure = param_text(r.params, "op") + " busbw";
    if (r.status != Status::pass) {
      f.verdict = Verdict::fail;
      f.evidence = fmt::format("{} {}: {}", r.key, status_name(r.status), r.reason);
      out.push_back(std::move(f));
      continue;
    }
    const Metric* m = r.metric("busbw");
    if (!m || !m->value) continue;
    f.value = m->value;
    f.unit = m->unit;
    f.evidence = fmt::format("{} {} over {} nodes", f.figure, format_figure(*m->value, m->unit), nodes.size());
    if (expected_busbw) {
      f.expected = expected_busbw;
      f.expected_source = expected_source;
      f.percent_of_expected = percent_of_expected(*m->value, *expected_busbw, true);
      f.evidence += fmt::format(", {:.0f} % of expected {} ({})", *f.percent_of_expected,
                                format_figure(*expected_busbw, "GB/s"), expected_source);
      if (slow_against_expected(*m->value, *expected_busbw, true, rule)) f.verdict = Verdict::slow;
    }
    out.push_back(std::move(f));
  }
  if (!any) {
    Finding f;
    f.stage = "coll";
    f.kind = SubjectKind::job;
    f.verdict = Verdict::missing;
    f.evidence = "no whole-job collective result";
    out.push_back(std::move(f));
  }
  if (!out.empty() && out.front().verdict != Verdict::fail) out.front().evidence += "; search: " + search.note;

  const std::string path = search_path(search, nodes);
  if (!search.slow_subset.empty()) {
    Finding f;
    f.stage = "coll";
    f.kind = SubjectKind::subset;
    f.peer = names_of(search.slow_subset, nodes);
    f.figure = "busbw";
    f.verdict = Verdict::slow;
    f.evidence = fmt::format("{}: {}", search.note, path);
    out.push_back(std::move(f));
  }
  for (size_t i = 0; i < nodes.size(); ++i) {
    const int n = static_cast<int>(i);
    Finding f;
    f.stage = "coll";
    f.kind = SubjectKind::node;
    f.node = nodes[i];
    f.figure = "busbw";
    if (std::find(search.culprits.begin(), search.culprits.end(), n) != search.culprits.end()) {
      f.verdict = Verdict::slow;
      // The probe that named it: its value against the best probe.
      for (const auto& step : search.steps)
        for (size_t g = 0; g < step.groups.size(); ++g)
          if (step.purpose == "probes" && step.groups[g].front() == n) {
            f.value = step.busbw[g];
            f.unit = "GB/s";
          }
      double best = 0;
      for (const auto& step : search.steps)
        if (step.purpose == "probes") best = std::max(best, *std::max_element(step.busbw.begin(), step.busbw.end()));
      if (f.value && best > 0) {
        f.median = best;
        f.shortfall = 1 - *f.value / best;
      }
      f.evidence = fmt::format("in the slower subset at every step and its probe slow: {}", path);
    } else if (std::find(search.slow_subset.begin(), search.slow_subset.end(), n) != search.slow_subset.end()) {
      f.evidence =
          fmt::format("member of the slow subset {{{}}}, not singled out", names_of(search.slow_subset, nodes));
    } else if (std::find(search.cleared.begin(), search.cleared.end(), n) != search.cleared.end()) {
      f.evidence = "in a fast half or probe";
    } else {
      f.evidence = search.note;
    }
    out.push_back(std::move(f));
  }
  return out;
}

}  // namespace gcb::scan
