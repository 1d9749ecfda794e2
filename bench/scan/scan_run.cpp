// ScanRun (scan_run.hpp), one scan on one rank: each stage measured on every node through the mem, gemm, p2p, coll and
// train families, gathered and judged on rank 0, with the budget shared out among the stages.
#include "bench/scan/scan_run.hpp"

#include <algorithm>
#include <map>

#include "bench/scan/budget.hpp"
#include "bench/scan/drift.hpp"
#include "bench/scan/exchange.hpp"
#include "core/error.hpp"
#include "core/gpu.hpp"

namespace gcb::scan {

namespace {

std::string describe_stage(const std::string& stage) {
  if (stage == "inventory") return "inventory";
  if (stage == "device") return "per device";
  if (stage == "links") return "intra-node links";
  if (stage == "pairs") return "inter-node pairs";
  if (stage == "coll") return "collectives";
  return "reference step";
}

}  // namespace

Result skipped_result(const std::string& stage, const std::string& why) {
  Result r;
  r.key = std::string(kSkippedKey);
  r.params = {{"stage", stage}};
  r.status = Status::waived;
  r.reason = "skipped: " + why;
  return r;
}

std::string verdict_line(int code, const std::vector<std::string>& ran,
                         const std::vector<std::pair<std::string, std::string>>& skipped, int nodes) {
  std::string line = code == 0 ? "all OK" : "NOT OK (exit 1)";
  std::string ran_text;
  for (const auto& s : ran) ran_text += (ran_text.empty() ? "" : ", ") + s;
  line += fmt::format(" (ran: {}", ran_text.empty() ? "nothing" : ran_text);
  if (!skipped.empty()) {
    line += "; skipped: ";
    for (size_t i = 0; i < skipped.size(); ++i)
      line += fmt::format("{}{} — {}", i ? "; " : "", skipped[i].first, skipped[i].second);
  }
  line += ")";
  const bool between =
      std::any_of(ran.begin(), ran.end(), [](const std::string& s) { return s == "pairs" || s == "coll"; });
  if (!between)
    line += nodes < 2 ? "; nothing between nodes was measured (one node: run it under a launcher on every node, or "
                        "--rehearse on one host)"
                      : "; nothing between nodes was measured";
  return line;
}

ScanRun::ScanRun(const ScanOptions& o, const HarnessOptions& harness, uint64_t seed, bool quiet, RankContext& ctx,
                 bench::Runner* runner)
    : o_(o), harness_(harness), seed_(seed), quiet_(quiet), ctx_(ctx), runner_(ctx.rank == 0 ? runner : nullptr) {
  for (const auto& s : kStageNames)
    if (has_stage(o, s)) stages_.push_back(s);
  if (!o.rehearse) {
    if (ctx.device >= 0)
      gpu_ = ctx.device;
    else if (ctx.local_rank < gpu::device_count())
      gpu_ = ctx.local_rank;
  }
}

double ScanRun::elapsed() const { return steady_clock().now() - start_; }

void ScanRun::tag(Result& r, const nlohmann::json& params) {
  for (auto it = params.begin(); it != params.end(); ++it) r.params[it.key()] = it.value();
}

HarnessOptions ScanRun::harness_for(double seconds, int min_samples) const {
  HarnessOptions h = harness_;
  h.max_time = std::clamp(seconds, kMinMeasurementSeconds, 600.0);
  h.min_samples = std::max(1, std::min(min_samples, h.min_samples));
  h.min_time = std::min(h.min_time, h.max_time);
  h.max_samples = std::max(h.max_samples, h.min_samples);
  return h;
}

HarnessOptions ScanRun::transfer_harness(double seconds) const {
  HarnessOptions h = harness_for(seconds, 3);
  h.warmup = std::min(h.warmup, 1);
  return h;
}

uint64_t ScanRun::transfer_bytes(uint64_t requested) const {
  if (requested > 0) return requested;
  return ctx_.world_comm.memory() == MemorySpace::device ? uint64_t{256} << 20 : uint64_t{8} << 20;
}

std::vector<Result> ScanRun::gather(const std::vector<Result>& mine) {
  return all_gather_results(ctx_.host_comm, mine);
}

double ScanRun::begin_stage(const std::string& stage, const std::string& what, const StageCost& cost) {
  ++stage_index_;
  nlohmann::json plan;
  if (leader()) {
    const std::vector<std::string> left_stages(stages_.begin() + static_cast<std::ptrdiff_t>(stage_index_ - 1),
                                               stages_.end());
    const double left = budget_s_ - elapsed();
    const double share = stage_share(stage, left_stages, budget_s_, elapsed());
    plan = {{"share", share}, {"budget_skip", budget_skip_reason(cost, share, left)}};
    stage_start_ = elapsed();
  }
  // Rank 0's clock decides for every rank, so all of them skip or run the stage alike.
  plan = broadcast_json(ctx_.host_comm, plan);
  budget_skip_ = plan.at("budget_skip").get<std::string>();
  const double share = plan.at("share").get<double>();
  say("[{}/{}] {}: {} (budget {:.0f} s, {:.0f} s elapsed)\n", stage_index_, stages_.size(), describe_stage(stage), what,
      share, leader() ? elapsed() : 0.0);
  return share;
}

bool ScanRun::skipped_for_budget(const std::string& stage) {
  if (budget_skip_.empty()) return false;
  skip_stage(stage, budget_skip_);
  return true;
}

const std::string& ScanRun::no_nics() {
  if (no_nics_) return *no_nics_;
  std::vector<std::vector<std::string>> interfaces(layout_.nodes.size());
  if (!o_.rehearse && layout_.nodes.size() >= 2) {
    // Each node's first rank reads its interfaces; every rank gets all of them and decides alike.
    const nlohmann::json mine = me().local == 0
                                    ? nlohmann::json{{"node", me().node}, {"interfaces", network_interfaces()}}
                                    : nlohmann::json(nullptr);
    for (const auto& text : all_gather_strings(ctx_.host_comm, mine.dump())) {
      const auto j = nlohmann::json::parse(text);
      if (j.is_null()) continue;
      const int n = layout_.index_of(j.at("node").get<std::string>());
      if (n >= 0) interfaces[static_cast<size_t>(n)] = j.at("interfaces").get<std::vector<std::string>>();
    }
  }
  no_nics_ = no_nics_reason(layout_.nodes, interfaces, o_.rehearse);
  return *no_nics_;
}

void ScanRun::skip_stage(const std::string& stage, const std::string& why) {
  say("      skipped: {}\n", why);
  if (!leader()) return;
  skipped_.emplace_back(stage, why);
  if (runner_) runner_->add(skipped_result(stage, why));
}

void ScanRun::end_stage(const std::string& stage, std::vector<Result> results, std::vector<Finding> findings) {
  if (!leader()) return;
  for (auto& r : results) {
    if (runner_) runner_->add(r);
    measured_.push_back(std::move(r));
  }
  std::map<Verdict, size_t> counts;
  for (const auto& f : findings)
    if (f.kind == SubjectKind::node || f.kind == SubjectKind::job) ++counts[f.verdict];
  std::string line;
  for (Verdict v : {Verdict::ok, Verdict::slow, Verdict::fail, Verdict::missing})
    if (counts[v] > 0) line += fmt::format("{}{} {}", line.empty() ? "" : ", ", counts[v], verdict_name(v));
  say("      {} ({:.1f} s)\n", line.empty() ? "no verdict" : line, elapsed() - stage_start_);
  for (const auto& f : findings)
    if (f.verdict != Verdict::ok && (f.kind == SubjectKind::node || f.kind == SubjectKind::job))
      say("      {} {}: {}\n", verdict_name(f.verdict), f.subject(), f.evidence);
  if (o_.fail_fast &&
      std::any_of(findings.begin(), findings.end(), [](const Finding& f) { return f.verdict != Verdict::ok; }))
    stop_ = true;
  findings_.insert(findings_.end(), std::make_move_iterator(findings.begin()), std::make_move_iterator(findings.end()));
  ran_.push_back(stage);
}

int ScanRun::run() {
  start_ = steady_clock().now();
  const std::string node = o_.rehearse ? fmt::format("{}-r{}", ctx_.host, ctx_.rank) : ctx_.host;
  layout_ = gather_layout(ctx_, node, gpu_);
  const int nodes = static_cast<int>(layout_.nodes.size());
  budget_s_ = o_.budget_s > 0 ? o_.budget_s : default_budget_s(nodes, o_.rehearse);
  if (leader()) {
    size_t most = 0;
    for (const auto& r : layout_.ranks_of_node) most = std::max(most, r.size());
    std::string names;
    for (size_t i = 0; i < layout_.nodes.size() && i < 8; ++i) names += (i ? ", " : "") + layout_.nodes[i];
    if (layout_.nodes.size() > 8) names += ", ...";
    say("# gcbench scan: {} node{} ({}), {} rank{} (up to {} per node, {}), backend {}, budget {:.3g} s\n", nodes,
        nodes == 1 ? "" : "s", names, ctx_.size, ctx_.size == 1 ? "" : "s", most,
        gpu_ >= 0 ? "one per GPU" : "host only", ctx_.world_comm.backend(), budget_s_);
    if (!o_.rule_note.empty()) say("{}", o_.rule_note);
  }
  for (const auto& stage : stages_) {
    if (stage == "inventory")
      inventory();
    else if (stage == "device")
      device();
    else if (stage == "links")
      links();
    else if (stage == "pairs")
      pairs();
    else if (stage == "coll")
      coll();
    else if (stage == "reference")
      reference();
    stop_ = broadcast_json(ctx_.host_comm, stop_).get<bool>();
    if (stop_) {
      say("      --fail-fast: stopping after {}\n", describe_stage(stage));
      for (auto it = std::find(stages_.begin(), stages_.end(), stage) + 1; it != stages_.end(); ++it)
        if (leader()) {
          skipped_.emplace_back(*it, "--fail-fast: stopped after " + stage);
          if (runner_) runner_->add(skipped_result(*it, skipped_.back().second));
        }
      break;
    }
  }
  int code = 0;
  if (leader()) {
    if (!o_.baseline.empty()) drift();
    const Culprits culprits = rank_culprits(findings_);
    say("{}", render_culprits(culprits, o_.rule));
    for (const auto& f : findings_) {
      int culprit_rank = 0;
      for (size_t i = 0; i < culprits.ranked.size(); ++i)
        if (culprits.ranked[i].stage == f.stage && culprits.ranked[i].subject() == f.subject() &&
            culprits.ranked[i].figure == f.figure && culprits.ranked[i].evidence == f.evidence)
          culprit_rank = static_cast<int>(i) + 1;
      if (runner_) runner_->add(to_result(f, culprit_rank));
      if (f.verdict != Verdict::ok) code = 1;
    }
    say("# scan verdict: {} ({:.1f} s)\n", verdict_line(code, ran_, skipped_, nodes), elapsed());
  }
  return broadcast_json(ctx_.host_comm, code).get<int>();
}

void ScanRun::drift() {
  say("[+] drift: every node against its own previous scan {}\n", o_.baseline);
  auto findings = judge_drift(load_document(o_.baseline), measured_, layout_.nodes, o_.rule);
  for (const auto& f : findings)
    if (f.verdict != Verdict::ok && f.kind == SubjectKind::node)
      say("      {} {}: {}\n", verdict_name(f.verdict), f.subject(), f.evidence);
  findings_.insert(findings_.end(), findings.begin(), findings.end());
}

}  // namespace gcb::scan
