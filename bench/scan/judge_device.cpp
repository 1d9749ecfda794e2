// Verdicts of the per-device, intra-node-link and reference stages: figures grouped by what
// makes them comparable (key, dtype, SKU; engine and link type), judged by the peer rule.
#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <map>

#include "bench/scan/judge.hpp"
#include "core/nvml.hpp"
#include "core/stats.hpp"

namespace gcb::scan {

namespace {

std::string device_figure_name(const Result& r) {
  if (r.key == "mem/hbm/triad") return "HBM triad bandwidth";
  if (r.key == "mem/host/triad") return "host triad bandwidth";
  if (r.family() == "gemm") return param_text(r.params, "dtype") + " GEMM";
  return r.key;
}

// "throttle: HW slowdown in 40 % of samples" from the per-sample NVML flags; `abnormal` says
// whether the abnormal reasons reach kThrottleShareSlow.
std::string throttle_note(const Result& r, bool& abnormal) {
  abnormal = false;
  if (r.sample_flags.empty()) return {};
  constexpr uint64_t kAbnormal =
      nvml::kHwSlowdown | nvml::kHwThermalSlowdown | nvml::kSwThermalSlowdown | nvml::kHwPowerBrakeSlowdown;
  uint64_t seen = 0;
  size_t flagged = 0, bad = 0;
  for (uint64_t f : r.sample_flags) {
    seen |= f;
    flagged += f != 0 ? 1 : 0;
    bad += (f & kAbnormal) != 0 ? 1 : 0;
  }
  if (flagged == 0) return {};
  const double n = static_cast<double>(r.sample_flags.size());
  abnormal = static_cast<double>(bad) / n >= kThrottleShareSlow;
  std::string names;
  for (const auto& s : nvml::throttle_reason_names(seen)) {
    if (!names.empty()) names += ", ";
    names += s;
  }
  return fmt::format("throttle: {} in {:.0f} % of samples", names, 100.0 * static_cast<double>(flagged) / n);
}

Finding failed(const std::string& stage, const Result& r, SubjectKind kind) {
  Finding f;
  f.stage = stage;
  f.kind = kind;
  f.node = param_text(r.params, "node");
  f.gpu = param_int(r.params, "gpu");
  f.figure = r.key;
  f.verdict = Verdict::fail;
  f.evidence = fmt::format("{} {}: {}", r.key, status_name(r.status), r.reason);
  return f;
}

Finding waived(const std::string& stage, const Result& r) {
  Finding f;
  f.stage = stage;
  f.kind = SubjectKind::gpu;
  f.node = param_text(r.params, "node");
  f.gpu = param_int(r.params, "gpu");
  f.figure = r.key;
  f.evidence = fmt::format("{} WAIVED: {}", r.key, r.reason);
  return f;
}

// Judges every group of figures and appends the findings.
void judge_groups(const std::map<std::string, std::vector<Figure>>& groups, const RobustRule& rule,
                  std::vector<Finding>& out) {
  for (const auto& [key, figures] : groups) {
    auto judged = judge_figures(figures, rule);
    out.insert(out.end(), judged.begin(), judged.end());
  }
}

// A GPU's (or the host's) figure of `stage`, from a result tagged with node and gpu.
Figure device_figure(const std::string& stage, const Result& r, const std::string& figure, const Metric& m) {
  Figure fig;
  Finding& s = fig.subject;
  s.stage = stage;
  s.kind = SubjectKind::gpu;
  s.node = param_text(r.params, "node");
  s.gpu = param_int(r.params, "gpu");
  s.figure = figure;
  s.unit = m.unit;
  s.higher_is_better = m.higher_is_better;
  s.expected = m.peak;
  s.expected_source = m.peak_source;
  fig.value = *m.value;
  return fig;
}

}  // namespace

std::string param_text(const nlohmann::json& p, const char* k) {
  if (!p.contains(k)) return {};
  return p.at(k).is_string() ? p.at(k).get<std::string>() : p.at(k).dump();
}

int param_int(const nlohmann::json& p, const char* k, int fallback) {
  return p.contains(k) && p.at(k).is_number_integer() ? p.at(k).get<int>() : fallback;
}

const Metric* judged_metric(const Result& r) {
  for (const char* name : {"bandwidth_median", "tflops", "latency", "busbw", "step_time"})
    if (const Metric* m = r.metric(name); m && m->value) return m;
  return nullptr;
}

std::vector<Finding> judge_device(const std::vector<Result>& results, const std::vector<std::string>& nodes,
                                  const RobustRule& rule) {
  std::vector<Finding> out;
  std::map<std::string, std::vector<Figure>> groups;
  std::vector<Finding> throttled;
  for (const auto& r : results) {
    if (param_text(r.params, "stage") != "device") continue;
    if (r.status == Status::waived) {
      out.push_back(waived("device", r));
      continue;
    }
    if (r.status != Status::pass) {
      out.push_back(failed("device", r, SubjectKind::gpu));
      continue;
    }
    const Metric* m = judged_metric(r);
    if (!m) continue;
    Figure fig = device_figure("device", r, device_figure_name(r), *m);
    const Finding& s = fig.subject;
    bool abnormal = false;
    fig.note = throttle_note(r, abnormal);
    groups[r.key + "|" + param_text(r.params, "dtype") + "|" + param_text(r.params, "sku")].push_back(fig);
    if (abnormal) {
      Finding t = s;
      t.verdict = Verdict::slow;
      t.figure = s.figure + " clocks";
      t.evidence = fig.note + fmt::format(" (abnormal reasons in ≥ {:.0f} % of samples)", kThrottleShareSlow * 100);
      throttled.push_back(std::move(t));
    }
  }
  judge_groups(groups, rule, out);
  out.insert(out.end(), throttled.begin(), throttled.end());
  auto rollup = node_rollup("device", nodes, out);
  out.insert(out.end(), rollup.begin(), rollup.end());
  return out;
}

std::vector<Finding> judge_links(const std::vector<Result>& results, const std::vector<std::string>& nodes,
                                 const RobustRule& rule) {
  std::vector<Finding> out;
  std::map<std::string, std::vector<Figure>> groups;
  std::vector<std::string> judged_nodes;
  for (const auto& r : results) {
    if (param_text(r.params, "stage") != "links") continue;
    const int src = param_int(r.params, "src"), dst = param_int(r.params, "dst");
    if (r.status == Status::waived || src < 0 || dst < 0) continue;  // no pair on this node
    judged_nodes.push_back(param_text(r.params, "node"));
    Figure fig;
    Finding& s = fig.subject;
    s.stage = "links";
    s.kind = SubjectKind::link;
    s.node = param_text(r.params, "node");
    s.gpu = src;
    s.peer = fmt::format("GPU{}", dst);
    if (r.status != Status::pass) {
      Finding f = failed("links", r, SubjectKind::link);
      f.gpu = src;
      f.peer = s.peer;
      out.push_back(std::move(f));
      continue;
    }
    const Metric* m = judged_metric(r);
    if (!m) continue;
    const std::string link_type = r.extra.value("expected_source", "unknown link");
    s.figure = fmt::format("{} copy{} bandwidth ({})", param_text(r.params, "engine"),
                           r.key == "p2p/bidir_bandwidth" ? " bidirectional" : "", link_type);
    s.unit = m->unit;
    s.higher_is_better = m->higher_is_better;
    if (r.extra.contains("expected_gbps") && r.extra.at("expected_gbps").is_number()) {
      s.expected = r.extra.at("expected_gbps").get<double>();
      s.expected_source = link_type;
    }
    fig.value = *m->value;
    groups[r.key + "|" + param_text(r.params, "engine") + "|" + param_text(r.params, "peer_access") + "|" + link_type]
        .push_back(fig);
  }
  judge_groups(groups, rule, out);
  // Per GPU: its median over the GPU pairs it is in (either end), against every other GPU's median
  // of the same figure (link type and engine), by the same rule — a GPU in every slow pair is the
  // culprit, not its pairs; needs two partners per GPU (three GPUs on a node) and min_peers GPUs
  // across the fleet.
  std::map<std::string, std::map<std::pair<std::string, int>, std::vector<double>>> per_gpu;  // figure → GPU → values
  for (const auto& f : out)
    if (f.kind == SubjectKind::link && f.value && f.verdict != Verdict::fail) {
      const int peer = std::atoi(f.peer.c_str() + 3);  // "GPU<n>"
      per_gpu[f.figure][{f.node, f.gpu}].push_back(*f.value);
      per_gpu[f.figure][{f.node, peer}].push_back(*f.value);
    }
  std::vector<Finding> gpus;
  for (const auto& [figure, ends] : per_gpu) {
    std::vector<Figure> group;
    for (const auto& [end, values] : ends) {
      if (values.size() < 4) continue;  // both directions of two pairs at least
      Figure fig;
      fig.subject.stage = "links";
      fig.subject.kind = SubjectKind::gpu;
      fig.subject.node = end.first;
      fig.subject.gpu = end.second;
      fig.subject.figure = fmt::format("median {} over its {} GPU-pair links", figure, values.size());
      for (const auto& f : out)
        if (f.kind == SubjectKind::link && f.figure == figure) {
          fig.subject.unit = f.unit;
          fig.subject.higher_is_better = f.higher_is_better;
          break;
        }
      fig.value = percentile(values, 0.5);
      group.push_back(std::move(fig));
    }
    for (auto& f : judge_figures(group, rule))
      if (f.verdict != Verdict::ok) gpus.push_back(std::move(f));
  }
  out.insert(out.end(), gpus.begin(), gpus.end());
  // A node's verdict is its slowest GPU, else its worst link; nodes with fewer than two GPUs have
  // none to judge.
  for (const auto& node : nodes) {
    if (std::find(judged_nodes.begin(), judged_nodes.end(), node) == judged_nodes.end()) continue;
    const Finding* worst = nullptr;
    size_t n = 0;
    for (const auto& f : out)
      if (f.node == node && f.kind == SubjectKind::link) {
        ++n;
        if (!worst || verdict_severity(f.verdict) > verdict_severity(worst->verdict)) worst = &f;
      }
    for (const auto& f : out)
      if (f.node == node && f.kind == SubjectKind::gpu && worst &&
          verdict_severity(f.verdict) >= verdict_severity(worst->verdict))
        worst = &f;
    Finding roll;
    roll.stage = "links";
    roll.node = node;
    if (worst && worst->verdict != Verdict::ok) {
      roll = *worst;
      roll.kind = SubjectKind::node;
      roll.evidence = worst->subject() + ": " + worst->evidence;
    } else {
      roll.kind = SubjectKind::node;
      roll.evidence = fmt::format("{} GPU-pair figure{} OK", n, n == 1 ? "" : "s");
    }
    out.push_back(std::move(roll));
  }
  return out;
}

std::vector<Finding> judge_reference(const std::vector<Result>& results, const std::vector<std::string>& nodes,
                                     const RobustRule& rule) {
  std::vector<Finding> out;
  std::vector<Figure> group;
  for (const auto& r : results) {
    if (param_text(r.params, "stage") != "reference") continue;
    if (r.status != Status::pass) {
      out.push_back(failed("reference", r, SubjectKind::gpu));
      continue;
    }
    const Metric* m = r.metric("step_time");
    if (!m || !m->value) continue;
    group.push_back(
        device_figure("reference", r, fmt::format("rank {} step time", param_int(r.params, "rank", 0)), *m));
  }
  auto judged = judge_figures(group, rule);
  out.insert(out.end(), judged.begin(), judged.end());
  auto rollup = node_rollup("reference", nodes, out);
  out.insert(out.end(), rollup.begin(), rollup.end());
  return out;
}

}  // namespace gcb::scan
