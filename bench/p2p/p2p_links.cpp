// The expected link of each `gcbench p2p` measurement (p2p_links.hpp): device pair, device–host and host network, from
// the live topology read once and the spec table's NVLink rate; unknown rather than guessed.
#include "bench/p2p/p2p_links.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>

#include "core/gpu.hpp"
#include "reports/specs.hpp"
#include "topology/topology.hpp"

namespace gcb::bench {

namespace {

// Discovered once per process: the link queries below run per rank pair.
const topo::Topology& cached_topology() {
  static const topo::Topology t = topo::live_topology();
  return t;
}

// "00000000:1B:00.0" and "0000:1b:00.0" name the same device: compare the domain as a number
// and the "bb:dd.f" tail case-insensitively.
bool same_bus_id(const std::string& a, const std::string& b) {
  auto split = [](const std::string& s) -> std::pair<unsigned long, std::string> {
    const auto colon = s.find(':');
    if (colon == std::string::npos) return {0, s};
    std::string tail = s.substr(colon + 1);
    std::transform(tail.begin(), tail.end(), tail.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return {std::strtoul(s.substr(0, colon).c_str(), nullptr, 16), tail};
  };
  return !a.empty() && !b.empty() && split(a) == split(b);
}

// Index of CUDA device `gpu` in the live topology, or -1.
int topo_index(int gpu) {
  if (gpu < 0 || gpu >= gpu::device_count()) return -1;
  const auto& bus = gpu::runtime().devices[static_cast<size_t>(gpu)].pci_bus_id;
  const auto& gpus = cached_topology().gpus;
  for (size_t i = 0; i < gpus.size(); ++i)
    if (same_bus_id(gpus[i].bus_id, bus)) return static_cast<int>(i);
  return -1;
}

LinkRate pcie_of(int t) {
  if (t < 0) return {};
  const auto& p = cached_topology().gpus[static_cast<size_t>(t)].pcie;
  return p.max_gen > 0 && p.max_width > 0 ? pcie_rate(p.max_gen, p.max_width) : pcie_rate(p.gen, p.width);
}

}  // namespace

LinkRate device_pair_link(int src, int dst, bool peer_access) {
  const int a = topo_index(src), b = topo_index(dst);
  if (a < 0 || b < 0) return {};
  const topo::Topology& t = cached_topology();
  if (peer_access) {
    const topo::Link link = t.link(static_cast<size_t>(a), static_cast<size_t>(b));
    if (link.type == topo::PathType::NV && link.nvlinks > 0) {
      const auto spec = find_gpu_spec(gpu::runtime().devices[static_cast<size_t>(src)].name);
      if (!spec || !(spec->nvlink_link_gbps > 0)) return {};
      return nvlink_rate(link.nvlinks, spec->nvlink_link_gbps);
    }
  }
  return slower(pcie_of(a), pcie_of(b));
}

LinkRate device_host_link(int gpu) { return pcie_of(topo_index(gpu)); }

LinkRate host_network_link() {
  LinkRate best;
  for (const auto& n : cached_topology().nics) {
    std::string state = n.state;
    std::transform(state.begin(), state.end(), state.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    if (state != "active" && state != "up") continue;
    const LinkRate r = network_rate(n.rate_gbps, n.name);
    if (r.gbps && (!best.gbps || *r.gbps > *best.gbps)) best = r;
  }
  return best;
}

}  // namespace gcb::bench
