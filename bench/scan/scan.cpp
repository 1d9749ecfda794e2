// `gcbench scan`'s entry: option validation, the stage list, the time budget (default_budget_s, parse_budget_s),
// run_scan, scans of saved inventory files and the subcommand's registration; one rank's scan is scan_run.cpp.
#include "bench/scan/scan.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <system_error>
#include <filesystem>

#include "bench/coll/coll.hpp"
#include "bench/scan/findings.hpp"
#include "bench/scan/inventory.hpp"
#include "bench/scan/reference_step.hpp"
#include "bench/scan/scan_run.hpp"
#include "collectives/factory.hpp"
#include "topology/topology.hpp"
#include "core/error.hpp"

namespace gcb::scan {

void validate(const ScanOptions& o) {
  validate(o.rule);
  if (o.stages.empty()) throw UsageError("--stages: give at least one stage");
  for (const auto& s : o.stages)
    if (std::find(kStageNames.begin(), kStageNames.end(), s) == kStageNames.end())
      throw UsageError(fmt::format("--stages {}: expected inventory, device, links, pairs, coll, reference or all", s));
  if (o.budget_s < 0) throw UsageError("--budget must be ≥ 0 seconds (0 = the default for the job's size)");
  if (o.coll_ops.empty()) throw UsageError("--coll-ops: give at least one collective");
  for (const auto& op : o.coll_ops) {
    const auto c = parse_coll_op(op);
    if (!c || (*c != CollOp::all_reduce && *c != CollOp::all_gather && *c != CollOp::reduce_scatter))
      throw UsageError(fmt::format("--coll-ops {}: expected all_reduce, all_gather or reduce_scatter", op));
  }
  if (o.coll_iters < 1) throw UsageError("--coll-iters must be ≥ 1");
  if (o.pair_rounds < 0) throw UsageError("--pair-rounds must be ≥ 0 (0 = all, at most 32)");
  if (o.reference_steps < 1) throw UsageError("--reference-steps must be ≥ 1");
  if (std::find(o.stages.begin(), o.stages.end(), "reference") != o.stages.end()) {
    models::validate(reference_config(o.reference_model));  // an unknown name or a bad file: exit 2 now
  }
  if (o.gemm_size < 0) throw UsageError("--gemm-size must be ≥ 0");
  if (o.burn < 0) throw UsageError("--burn must be ≥ 0 seconds");
  if (o.link_size == 0) throw UsageError("--link-size must be at least 1 byte");
  if (o.ranks < 0) throw UsageError("--ranks must be ≥ 0");
  if (!(o.timeout > 0)) throw UsageError("--timeout must be positive");
  if (!o.backend.empty() && !communicator_backend_known(o.backend))
    throw UsageError(fmt::format("--backend {}: expected one of {}", o.backend, communicator_backend_names()));
}

bool has_stage(const ScanOptions& o, const std::string& stage) {
  return std::find(o.stages.begin(), o.stages.end(), stage) != o.stages.end();
}

// 2 minutes plus half a minute per node: a 2-node scan in 3 minutes, 64 nodes in 34 (the pair
// stage grows with the N−1 rounds; the other stages run on every node at once).
double default_budget_s(int nodes, bool rehearse) {
  return rehearse ? 30 + 4.0 * std::max(nodes, 1) : 120 + 30.0 * std::max(nodes, 1);
}

double parse_budget_s(std::string_view text) {
  std::string_view number = text;
  double unit = 1;
  if (!number.empty() && (number.back() == 's' || number.back() == 'm')) {
    unit = number.back() == 'm' ? 60 : 1;
    number.remove_suffix(1);
  }
  double value = 0;
  const auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), value);
  if (number.empty() || ec != std::errc() || end != number.data() + number.size() || !std::isfinite(value) || value < 0)
    throw UsageError(fmt::format("--budget {}: expected seconds ≥ 0, optionally with s or m (600, 600s, 10m)", text));
  return value * unit;
}

ScanOptions rehearsal_rule(const ScanOptions& o, int ranks_on_host, long host_cpus) {
  ScanOptions out = o;
  if (!o.rehearse || o.tolerance_given || host_cpus <= 0 || ranks_on_host <= host_cpus ||
      o.rule.tolerance >= kSharedCpuTolerance)
    return out;
  out.rule.tolerance = kSharedCpuTolerance;
  out.rule_note = fmt::format(
      "# rehearsal: {} ranks share this host's {} CPUs, so they time each other's scheduling: SLOW needs a "
      "shortfall over {:.0f} % here (--tolerance sets it; {:.0f} % between real nodes)\n",
      ranks_on_host, host_cpus, 100 * kSharedCpuTolerance, 100 * o.rule.tolerance);
  return out;
}

int run_scan(const ScanOptions& o, const bench::CommonOptions& common, bench::Runner& runner,
             const std::vector<std::string>& args) {
  WorldOptions w;
  w.backend = o.backend.empty() ? default_coll_backend() : o.backend;
  w.ranks = o.ranks;
  w.timeout = std::chrono::milliseconds(static_cast<long long>(o.timeout * 1e3));
  w.args = args;
  return run_world(w, [&](RankContext& ctx) {
    const ScanOptions mine = rehearsal_rule(o, ctx.local_size, ::sysconf(_SC_NPROCESSORS_ONLN));
    ScanRun run(mine, common.harness, common.seed, common.quiet, ctx, &runner);
    return run.run();
  });
}

int run_inventory_files(const ScanOptions& o, bench::Runner& runner, bool quiet) {
  std::vector<std::string> nodes;
  std::vector<Inventory> inventories;
  std::vector<std::vector<std::string>> health;
  for (const auto& entry : o.inventory_from) {
    // NAME=FILE, or FILE (named by the host in the dump, else the file's stem).
    std::string name, path = entry;
    if (const auto eq = entry.find('=');
        eq != std::string::npos && entry.substr(0, eq).find('/') == std::string::npos) {
      name = entry.substr(0, eq);
      path = entry.substr(eq + 1);
    }
    const topo::Topology t = topo::load_topology(path);
    if (name.empty()) name = !t.hostname.empty() ? t.hostname : std::filesystem::path(path).stem().string();
    if (std::find(nodes.begin(), nodes.end(), name) != nodes.end())
      throw UsageError(fmt::format("--inventory-from: two files name node '{}'; give NAME=FILE", name));
    nodes.push_back(name);
    inventories.push_back(inventory_from_topology(t));
    health.push_back(topo::health_checks(t));
    runner.add(inventory_result(name, inventories.back(), health.back()));
  }
  const auto findings = judge_inventory(nodes, inventories, health);
  int code = 0;
  for (const auto& f : findings) {
    if (!quiet) fmt::print("{:<8} {}: {}\n", verdict_name(f.verdict), f.subject(), f.evidence);
    code = f.verdict == Verdict::ok ? code : 1;
  }
  const Culprits culprits = rank_culprits(findings);
  if (!quiet) fmt::print("{}", render_culprits(culprits, o.rule));
  for (const auto& f : findings) runner.add(to_result(f));
  return code;
}

}  // namespace gcb::scan
