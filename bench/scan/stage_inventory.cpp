// Stage 1: each node's first rank reads its inventory (inventory.hpp); rank 0 names the nodes
// that differ from the majority.
#include "bench/scan/exchange.hpp"
#include "bench/scan/inventory.hpp"
#include "bench/scan/scan_run.hpp"
#include "topology/topology.hpp"
#include "core/context.hpp"

namespace gcb::scan {

void ScanRun::inventory() {
  begin_stage("inventory", "topology, GPUs, PCIe, NVLink, NICs, driver/CUDA/NCCL, clocks per node");
  if (skipped_for_budget("inventory")) return;
  nlohmann::json mine = nullptr;
  if (me().local == 0) {
    const topo::Topology t = topo::live_topology();
    Inventory inv = inventory_from_topology(t);
    add_context_fields(collect_run_context({}), inv);
    mine = {{"node", me().node}, {"fields", inv}, {"health", topo::health_checks(t)}};
  }
  const auto all = all_gather_strings(ctx_.host_comm, mine.dump());
  if (!leader()) return;
  std::vector<Inventory> inventories(layout_.nodes.size());
  std::vector<std::vector<std::string>> health(layout_.nodes.size());
  std::vector<Result> results;
  for (const auto& text : all) {
    const auto j = nlohmann::json::parse(text);
    if (j.is_null()) continue;
    const int n = layout_.index_of(j.at("node").get<std::string>());
    inventories[static_cast<size_t>(n)] = j.at("fields").get<Inventory>();
    health[static_cast<size_t>(n)] = j.at("health").get<std::vector<std::string>>();
    results.push_back(inventory_result(layout_.nodes[static_cast<size_t>(n)], inventories[static_cast<size_t>(n)],
                                       health[static_cast<size_t>(n)]));
  }
  end_stage("inventory", std::move(results), judge_inventory(layout_.nodes, inventories, health));
}

}  // namespace gcb::scan
