// Stage 1 of `gcbench scan`: what each node is. A node's inventory is a flat map of fields
// ("gpu3.pcie" → "gen5 x16", "driver" → "550.54.15") read from its topology (GPUs, PCIe, NVLink,
// NICs, CPU, NUMA; topology) and, on a live node, its run context (driver, CUDA, NCCL,
// ECC, clocks, throttle reasons now). Nodes whose value of a field differs from the majority's
// are named with both values: "node-17: gpu3.pcie gen4 x16, others gen5 x16".
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bench/scan/findings.hpp"
#include "topology/topology.hpp"

namespace gcb::scan {

using Inventory = std::map<std::string, std::string>;

// Fields a topology gives (a saved dump has only these).
Inventory inventory_from_topology(const topo::Topology& t);
// Fields of the run context (collect_run_context's "gpus", "cuda", "nvml", "libraries", "cpu",
// "memory_bytes"), merged into `inv`.
void add_context_fields(const nlohmann::json& context, Inventory& inv);

// How a field that differs from the majority is judged: fewer GPUs or NICs, or a NIC not
// active → MISSING; a slower PCIe link, fewer NVLinks, a lower clock limit or a throttle reason
// → SLOW; anything else (versions, models, topology fingerprint) → FAIL.
Verdict verdict_of_difference(const std::string& field, const std::string& value, const std::string& majority);
// Fields where more (or faster) is better and a lower value is a fault.
bool ordered_field(const std::string& field);

// One finding per node: OK ("N fields match the majority"), or every differing field with the
// majority's value. Where no value has a majority (e.g. two nodes), every node's value is named:
// for ordered fields (counts, PCIe, NVLinks, port rates, clock limits) the lower values are judged
// against the highest, whose holder stays OK; any other field fails on every node. The topology
// fingerprint is named only when no other field explains it. `health` holds a node's own
// topology warnings (health_checks), shown as notes.
std::vector<Finding> judge_inventory(const std::vector<std::string>& nodes, const std::vector<Inventory>& inventories,
                                     const std::vector<std::vector<std::string>>& health = {});

// The inventory as a result ("scan/inventory", params node) so it lands in the JSON.
Result inventory_result(const std::string& node, const Inventory& inv, const std::vector<std::string>& health);

}  // namespace gcb::scan
