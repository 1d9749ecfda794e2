// Live topology, second pass: what sysfs cannot see comes from NVML (loaded at run time) —
// GPU marketing names, NVLink peers and PCIe link state. Compiles everywhere; on a machine
// without a driver it changes nothing. Unvalidated on a GPU machine so far.
#include <cstdio>
#include <fmt/format.h>
#include <map>

#include "core/nvml.hpp"
#include "topology/detail.hpp"
#include "topology/topology.hpp"

namespace gcb::topo {

namespace {

// NVML prints "00000000:1B:00.0" (8-digit domain, upper case); sysfs "0000:1b:00.0".
std::string canonical_bus_id(const std::string& id) {
  unsigned domain = 0, bus = 0, dev = 0, fn = 0;
  if (std::sscanf(id.c_str(), "%x:%x:%x.%x", &domain, &bus, &dev, &fn) != 4) return id;
  return fmt::format("{:04x}:{:02x}:{:02x}.{:x}", domain, bus, dev, fn);
}

}  // namespace

bool enrich_with_nvml(Topology& topo) {
  if (!nvml::available()) return false;
  for (Gpu& g : topo.gpus) {
    if (const auto name = nvml::device_name(g.bus_id)) g.name = *name;
    if (const auto s = nvml::static_info(g.bus_id)) {
      g.pcie.gen = static_cast<int>(s->pcie_gen_current.value_or(0));
      g.pcie.width = static_cast<int>(s->pcie_width_current.value_or(0));
      g.pcie.max_gen = static_cast<int>(s->pcie_gen_max.value_or(0));
      g.pcie.max_width = static_cast<int>(s->pcie_width_max.value_or(0));
    }
    // Aggregate active links per remote device, as NCCL's XML does (<nvlink target count tclass>).
    std::map<std::string, NvLink> by_target;
    for (const auto& peer : nvml::nvlink_peers(g.bus_id)) {
      NvLink& l = by_target[canonical_bus_id(peer.remote_bus_id)];
      l.target = canonical_bus_id(peer.remote_bus_id);
      l.target_class = peer.remote_type == 2 ? "0x068000" : "0x030200";
      ++l.count;
    }
    if (!by_target.empty()) {
      g.nvlinks.clear();
      for (auto& [target, link] : by_target) g.nvlinks.push_back(link);
    }
  }
  detail::derive_links_from_pci(topo);
  return true;
}

Topology live_topology() {
  Topology t = discover_live();
  enrich_with_nvml(t);
  return t;
}

}  // namespace gcb::topo
