// Renders a Topology as NCCL topology XML with NCCL's element and attribute names, loadable via
// NCCL_TOPO_FILE and read back by parse_nccl_topo_xml. A topology without PCI details (parsed
// from `nvidia-smi topo -m`) gets placeholder bus ids and switches that reproduce its matrix.
#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <set>

#include <fmt/format.h>

#include "reports/escape.hpp"
#include "topology/detail.hpp"
#include "topology/topology.hpp"

namespace gcb::topo {
namespace {

// One PCIe switch (or the CPU root at depth 0) and what hangs below it.
struct SwitchNode {
  std::string bus_id;
  std::vector<SwitchNode> children;
  std::vector<std::size_t> devices;  // model device indices

  SwitchNode& child(const std::string& id) {
    for (SwitchNode& c : children)
      if (c.bus_id == id) return c;
    children.push_back({id, {}, {}});
    return children.back();
  }
};

// Placeholder bus ids for sources that have none, in the style of hand-written NCCL files.
std::string placeholder_device_bus(std::size_t device) { return fmt::format("ffff:{:02x}:00.0", device); }
std::string placeholder_switch_bus(std::size_t n) { return fmt::format("ffff:ff:{:02x}.0", n + 1); }

struct Placed {
  std::vector<std::string> bus;              // per device
  std::vector<PciPlacement> pci;             // per device
  std::vector<std::vector<NvLink>> nvlinks;  // per GPU
};

// Groups of devices connected by links for which `joins` holds (union-find).
std::vector<std::size_t> components(const Topology& topo, const std::vector<std::size_t>& members,
                                    bool (*joins)(PathType)) {
  std::vector<std::size_t> parent(topo.device_count());
  std::iota(parent.begin(), parent.end(), 0);
  const auto find = [&](std::size_t x) {
    while (parent[x] != x) x = parent[x] = parent[parent[x]];
    return x;
  };
  for (const std::size_t a : members)
    for (const std::size_t b : members)
      if (a != b && joins(topo.link(a, b).type)) parent[find(a)] = find(b);
  std::vector<std::size_t> root(topo.device_count());
  for (const std::size_t a : members) root[a] = find(a);
  return root;
}

Placed place_devices(const Topology& topo) {
  const std::size_t g = topo.gpus.size();
  Placed p;
  std::vector<std::size_t> synthetic;  // devices with neither bus id nor placement
  for (std::size_t d = 0; d < topo.device_count(); ++d) {
    const std::string& bus = d < g ? topo.gpus[d].bus_id : topo.nics[d - g].bus_id;
    p.bus.push_back(bus.empty() ? placeholder_device_bus(d) : bus);
    p.pci.push_back(d < g ? topo.gpus[d].pci : topo.nics[d - g].pci);
    if (bus.empty() && p.pci.back().switches.empty()) synthetic.push_back(d);
  }
  // Outer switches join PIX/PXB neighbours, inner switches PIX neighbours.
  const auto outer = components(topo, synthetic, [](PathType t) { return t == PathType::PIX || t == PathType::PXB; });
  const auto inner = components(topo, synthetic, [](PathType t) { return t == PathType::PIX; });
  std::map<std::size_t, std::size_t> outer_size, inner_size;
  std::map<std::size_t, std::set<std::size_t>> inner_groups_of_outer;
  for (const std::size_t d : synthetic) {
    ++outer_size[outer[d]];
    ++inner_size[inner[d]];
    inner_groups_of_outer[outer[d]].insert(inner[d]);
  }
  for (const std::size_t d : synthetic) {
    if (outer_size[outer[d]] < 2) continue;  // alone: straight under the CPU
    std::vector<std::string>& sw = p.pci[d].switches;
    sw.push_back(placeholder_switch_bus(outer[d]));
    if (inner_groups_of_outer[outer[d]].size() > 1)
      sw.push_back(placeholder_switch_bus(topo.device_count() + inner[d]));
  }

  // NVLinks: keep the source's list; otherwise one unseen switch when every GPU pair has the same
  // NV#, else direct links to each peer.
  std::set<int> counts;
  bool all_nv = true;
  for (std::size_t a = 0; a < g; ++a)
    for (std::size_t b = 0; b < g; ++b) {
      if (a == b) continue;
      const Link l = topo.link(a, b);
      all_nv = all_nv && l.type == PathType::NV;
      if (l.type == PathType::NV) counts.insert(l.nvlinks);
    }
  for (std::size_t a = 0; a < g; ++a) {
    std::vector<NvLink> links = topo.gpus[a].nvlinks;
    if (links.empty() && all_nv && counts.size() == 1) {
      links.push_back({"fffffff:ff:ff.0", *counts.begin(), "0x068000"});
    } else if (links.empty()) {
      for (std::size_t b = 0; b < g; ++b)
        if (b != a && topo.link(a, b).type == PathType::NV)
          links.push_back({p.bus[b], topo.link(a, b).nvlinks, "0x030200"});
    }
    p.nvlinks.push_back(std::move(links));
  }
  return p;
}

class Writer {
 public:
  Writer(const Topology& topo, const Placed& placed) : topo_(topo), placed_(placed) {}

  void node(const SwitchNode& n, int depth) {
    for (const SwitchNode& sw : n.children) {
      line(depth, fmt::format("<pci busid=\"{}\" class=\"0x060400\">", xml_escape(sw.bus_id)));
      node(sw, depth + 1);
      line(depth, "</pci>");
    }
    // Ports of one NIC share a <pci> and its <nic>.
    std::vector<std::string> done;
    for (const std::size_t d : n.devices) {
      const std::string& bus = placed_.bus[d];
      if (std::find(done.begin(), done.end(), bus) != done.end()) continue;
      done.push_back(bus);
      device(d, bus, n.devices, depth);
    }
  }

  std::string take() { return std::move(out_); }
  void line(int depth, const std::string& text) {
    out_ += std::string(static_cast<std::size_t>(depth) * 2, ' ') + text + "\n";
  }

 private:
  static std::string pcie_attrs(const PcieLink& p) {
    const std::string speed = detail::pcie_speed_name(p.gen);
    return (speed.empty() ? "" : fmt::format(" link_speed=\"{}\"", speed)) + fmt::format(" link_width=\"{}\"", p.width);
  }

  void device(std::size_t d, const std::string& bus, const std::vector<std::size_t>& siblings, int depth) {
    const std::size_t g = topo_.gpus.size();
    if (d < g) {
      const Gpu& gpu = topo_.gpus[d];
      const std::string device_attr =
          gpu.pci_device.empty() ? "" : fmt::format(" device=\"{}\"", xml_escape(gpu.pci_device));
      line(depth, fmt::format("<pci busid=\"{}\" class=\"0x030200\" vendor=\"0x10de\"{}{}>", xml_escape(bus),
                              device_attr, pcie_attrs(gpu.pcie)));
      std::string attrs = fmt::format("dev=\"{}\"", gpu.index);
      if (gpu.sm > 0) attrs += fmt::format(" sm=\"{}\"", gpu.sm);
      if (gpu.rank >= 0) attrs += fmt::format(" rank=\"{}\"", gpu.rank);
      attrs += fmt::format(" gdr=\"{}\"", gpu.gdr ? 1 : 0);
      line(depth + 1, fmt::format("<gpu {}>", attrs));
      for (const NvLink& l : placed_.nvlinks[d])
        line(depth + 2, fmt::format("<nvlink target=\"{}\" count=\"{}\" tclass=\"{}\"/>", xml_escape(l.target), l.count,
                                    xml_escape(l.target_class)));
      line(depth + 1, "</gpu>");
      line(depth, "</pci>");
      return;
    }
    const Nic& first = topo_.nics[d - g];
    // PCI class 0x0207 InfiniBand controller, 0x0200 Ethernet controller.
    const char* pci_class = first.link_layer == "InfiniBand" ? "0x020700" : "0x020000";
    line(depth, fmt::format("<pci busid=\"{}\" class=\"{}\"{}>", xml_escape(bus), pci_class, pcie_attrs(first.pcie)));
    line(depth + 1, "<nic>");
    for (const std::size_t s : siblings) {
      if (s < g || placed_.bus[s] != bus) continue;
      const Nic& nic = topo_.nics[s - g];
      std::string attrs = fmt::format("name=\"{}\" dev=\"{}\" speed=\"{}\"", xml_escape(nic.name), s - g,
                                      std::llround(nic.rate_gbps * 1000.0));  // Mb/s
      if (nic.port > 0) attrs += fmt::format(" port=\"{}\"", nic.port);
      if (!nic.guid.empty()) attrs += fmt::format(" guid=\"{}\"", xml_escape(nic.guid));
      attrs += fmt::format(" gdr=\"{}\"", nic.gdr ? 1 : 0);
      line(depth + 2, fmt::format("<net {}/>", attrs));
    }
    line(depth + 1, "</nic>");
    line(depth, "</pci>");
  }

  const Topology& topo_;
  const Placed& placed_;
  std::string out_;
};

}  // namespace

std::string render_nccl_xml(const Topology& topo) {
  const Placed placed = place_devices(topo);
  const std::size_t g = topo.gpus.size();

  // One <cpu> per NUMA node, plus one per device NUMA value the node list lacks.
  std::map<int, std::string> cpus;  // numaid -> cpulist
  for (const NumaNode& n : topo.numa) cpus[n.id] = n.cpulist;
  std::map<int, SwitchNode> roots;
  for (std::size_t d = 0; d < topo.device_count(); ++d) {
    const int numa = d < g ? topo.gpus[d].numa_node : topo.nics[d - g].numa_node;
    if (!cpus.count(numa)) cpus[numa] = d < g ? topo.gpus[d].cpu_affinity : "";
    SwitchNode* at = &roots[numa];
    for (const std::string& sw : placed.pci[d].switches) at = &at->child(sw);
    at->devices.push_back(d);
  }
  // Every mask as wide as the widest, as NCCL writes them (one group per 32 CPUs of the host).
  int groups = 1;
  for (const auto& [id, cpulist] : cpus) {
    const auto list = detail::cpulist_to_cpus(cpulist);
    if (!list.empty()) groups = std::max(groups, list.back() / 32 + 1);
  }

  Writer w(topo, placed);
  w.line(0, "<system version=\"1\">");
  for (const auto& [numa, cpulist] : cpus) {
    std::string attrs = fmt::format("numaid=\"{}\"", numa);
    if (!cpulist.empty()) attrs += fmt::format(" affinity=\"{}\"", detail::cpulist_to_cpumask(cpulist, groups));
    if (!topo.cpu.arch.empty()) attrs += fmt::format(" arch=\"{}\"", xml_escape(topo.cpu.arch));
    if (!topo.cpu.vendor.empty()) attrs += fmt::format(" vendor=\"{}\"", xml_escape(topo.cpu.vendor));
    if (topo.cpu.family > 0) attrs += fmt::format(" familyid=\"{}\"", topo.cpu.family);
    if (topo.cpu.model > 0) attrs += fmt::format(" modelid=\"{}\"", topo.cpu.model);
    w.line(1, fmt::format("<cpu {}>", attrs));
    w.node(roots[numa], 2);
    w.line(1, "</cpu>");
  }
  w.line(0, "</system>");
  return w.take();
}

}  // namespace gcb::topo
