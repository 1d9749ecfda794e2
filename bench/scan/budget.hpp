// How `gcbench scan` spends its budget and when a stage is skipped for it: each stage's share of
// what is left (fixed weights, renormalised over the stages still to run), the sequential
// measurements that share is divided among, and the reasons a stage does not run at all —
// "budget" (nothing left, or a share below kMinMeasurementSeconds per measurement) and "no NICs"
// (nodes with no network interface besides loopback, so no path between nodes). Pure functions of
// counts and times, so that the decisions are tested without a cluster (test_scan_rules).
#pragma once

#include <string>
#include <vector>

namespace gcb::scan {

// Sampling time one measurement gets at least: the floor of the harness's time limit in the
// scan (ScanRun::harness_for clamps every measurement's --max-time to it). A stage whose share
// would give its measurements less is skipped with reason "budget" rather than run on samples
// that are all set-up.
inline constexpr double kMinMeasurementSeconds = 0.05;

// Share of the budget per stage before renormalisation: inventory 2 %, device 25 %, links 13 %,
// pairs 35 %, coll 20 %, reference 5 %.
double stage_weight(const std::string& stage);

// Seconds the stage gets: what is left of `budget_s` after `elapsed_s`, times its weight over the
// weights of `stages_left` (the stage itself and those after it). 0 when nothing is left.
double stage_share(const std::string& stage, const std::vector<std::string>& stages_left, double budget_s,
                   double elapsed_s);

// What a stage's share is divided among: `measurements` in a row on every rank, of which
// `sampling` (a fraction of the share) is sampling — the rest is set-up and warm-up.
struct StageCost {
  double measurements = 0;  // 0: the stage samples nothing under the budget (inventory, reference)
  double sampling = 1;
};
// Per stage, for a job of `nodes` nodes: device 2 (STREAM triad, GEMM) at 80 %; links
// `link_cases` (the GPU-pair cases of rank 0's node) at 80 %; pairs (rounds + 1) × 4 + 1 (send
// both ways, bidirectional and latency per round and for a confirmation; one for the bisection)
// at 70 %; coll `coll_ops` + ⌊log₂⌋ levels above 3 nodes + 2 (the whole job, the halves, the
// probes) at 70 %; inventory and reference nothing.
StageCost stage_cost(const std::string& stage, int nodes, int pair_rounds, int coll_ops, int link_cases);
// Seconds one measurement of the stage gets from `share_s`.
double per_measurement_seconds(const StageCost& cost, double share_s);
// The least share that gives every measurement kMinMeasurementSeconds.
double min_stage_seconds(const StageCost& cost);

// Why the stage cannot run in `share_s` of the `left_s` seconds left ("budget: …"), or "" when it
// fits. A stage that samples nothing runs while any time is left.
std::string budget_skip_reason(const StageCost& cost, double share_s, double left_s);

// Why the stages between nodes cannot run: "" for fewer than two nodes (their own reason) or a
// rehearsal (every "node" is a rank on one host, joined by shared memory or loopback) or when
// every node has a network interface besides loopback; else "no NICs: …" naming the nodes that
// have none. `interfaces[i]` are node i's interfaces (loopback and those down left out).
std::string no_nics_reason(const std::vector<std::string>& nodes,
                           const std::vector<std::vector<std::string>>& interfaces, bool rehearse);

// The network interfaces of this host under `sys_class_net` (/sys/class/net): every entry that is
// not a loopback (type 772, ARPHRD_LOOPBACK in linux/if_arp.h) and whose operstate is not "down";
// virtual ones (veth, bridges) count, as they may be the only path between nodes. Sorted by name.
std::vector<std::string> network_interfaces(const std::string& sys_class_net = "/sys/class/net");

}  // namespace gcb::scan
