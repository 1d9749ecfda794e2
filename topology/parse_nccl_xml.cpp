// Parser for NCCL topology XML (NCCL_TOPO_DUMP_FILE / NCCL_TOPO_FILE, NVIDIA/nccl
// src/graph/xml.cc): <system><cpu><pci>...<gpu>/<nic><net/></nic></pci></cpu></system>. Path types
// are derived from the PCI nesting (nested <pci> elements are switches) and from the <nvlink>
// children of the GPUs, the way nvidia-smi would classify them.
#include <algorithm>
#include <cctype>
#include <map>

#include <fmt/format.h>

#include "core/error.hpp"
#include "topology/detail.hpp"
#include "topology/topology.hpp"
#include "topology/xml.hpp"

namespace gcb::topo {
namespace {

constexpr std::string_view kWhat = "NCCL topology XML";
constexpr std::string_view kNvSwitchClass = "0x068000";

[[noreturn]] void fail(const xml::Element& e, std::string_view why) {
  throw UsageError(fmt::format("{}: line {}: <{}> {}", kWhat, e.line, e.name, why));
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

long long int_attr(const xml::Element& e, std::string_view name, long long fallback) {
  const std::string* value = e.find(name);
  if (!value) return fallback;
  const auto n = detail::parse_integer(*value);
  if (!n) fail(e, fmt::format("has a non-integer {}=\"{}\"", name, *value));
  return *n;
}

long long required_int(const xml::Element& e, std::string_view name) {
  if (!e.find(name)) fail(e, fmt::format("lacks the {} attribute", name));
  return int_attr(e, name, 0);
}

struct CpuScope {
  int numa = -1;
  std::string cpulist;
};

struct Devices {
  std::vector<Gpu> gpus;
  std::vector<std::pair<long long, Nic>> nics;  // NCCL net dev index -> NIC
};

PcieLink pcie_of(const xml::Element& pci) {
  PcieLink link;
  link.gen = detail::pcie_gen_from_speed(pci.get("link_speed"));
  link.width = static_cast<int>(int_attr(pci, "link_width", 0));
  return link;
}

std::string link_layer_of(const std::string& pci_class) {
  // PCI class 0x0207 = InfiniBand controller, 0x0200 = Ethernet controller.
  if (detail::starts_with(lower(pci_class), "0x0207")) return "InfiniBand";
  if (detail::starts_with(lower(pci_class), "0x0200")) return "Ethernet";
  return "";
}

void add_nics(const xml::Element& nic, const xml::Element* pci, const CpuScope& cpu, const PciPlacement& placement,
              Devices& out) {
  for (const xml::Element& net : nic.children) {
    if (net.name != "net") continue;
    Nic n;
    n.name = net.get("name");
    if (n.name.empty()) fail(net, "lacks the name attribute");
    n.rate_gbps = static_cast<double>(int_attr(net, "speed", 0)) / 1000.0;  // Mb/s -> Gb/s
    n.port = static_cast<int>(int_attr(net, "port", 0));
    n.guid = net.get("guid");
    n.gdr = net.get("gdr") == "1";
    n.numa_node = cpu.numa;
    n.pci = placement;
    if (pci) {
      n.bus_id = lower(pci->get("busid"));
      n.pcie = pcie_of(*pci);
      n.link_layer = link_layer_of(pci->get("class"));
    }
    out.nics.emplace_back(required_int(net, "dev"), std::move(n));
  }
}

void add_gpu(const xml::Element& gpu_element, const xml::Element& pci, const CpuScope& cpu,
             const PciPlacement& placement, Devices& out) {
  Gpu gpu;
  gpu.index = static_cast<int>(required_int(gpu_element, "dev"));
  gpu.sm = static_cast<int>(int_attr(gpu_element, "sm", 0));
  gpu.rank = static_cast<int>(int_attr(gpu_element, "rank", -1));
  gpu.gdr = gpu_element.get("gdr") == "1";
  gpu.bus_id = lower(pci.get("busid"));
  gpu.pci_device = lower(pci.get("device"));
  gpu.pcie = pcie_of(pci);
  gpu.numa_node = cpu.numa;
  gpu.cpu_affinity = cpu.cpulist;
  gpu.pci = placement;
  for (const xml::Element& link : gpu_element.children) {
    if (link.name != "nvlink") continue;
    NvLink nv;
    nv.target = lower(link.get("target"));
    nv.count = static_cast<int>(required_int(link, "count"));
    nv.target_class = lower(link.get("tclass"));
    if (nv.target.empty()) fail(link, "lacks the target attribute");
    gpu.nvlinks.push_back(std::move(nv));
  }
  out.gpus.push_back(std::move(gpu));
}

// Walks one <pci>: a GPU, a NIC, or a switch whose children are walked with it on the path.
void walk_pci(const xml::Element& pci, const CpuScope& cpu, PciPlacement placement, Devices& out) {
  if (pci.get("busid").empty()) fail(pci, "lacks the busid attribute");
  bool is_device = false;
  for (const xml::Element& child : pci.children) {
    if (child.name == "gpu") {
      add_gpu(child, pci, cpu, placement, out);
      is_device = true;
    } else if (child.name == "nic") {
      add_nics(child, &pci, cpu, placement, out);
      is_device = true;
    }
  }
  if (is_device) return;
  placement.switches.push_back(lower(pci.get("busid")));
  for (const xml::Element& child : pci.children)
    if (child.name == "pci") walk_pci(child, cpu, placement, out);
}

// NVLinks between two GPUs: through each NVSwitch both reach, the smaller bundle limits; plus
// direct links from a to b. HGX H100: four switches with 5+5+4+4 links -> NV18 for every pair.
int nvlinks_between(const Gpu& a, const Gpu& b) {
  int total = 0;
  for (const NvLink& la : a.nvlinks) {
    if (la.target == b.bus_id && !b.bus_id.empty()) {
      total += la.count;
      continue;
    }
    if (la.target_class != kNvSwitchClass) continue;
    for (const NvLink& lb : b.nvlinks)
      if (lb.target == la.target && lb.target_class == kNvSwitchClass) total += std::min(la.count, lb.count);
  }
  return total;
}

}  // namespace

void detail::derive_links_from_pci(Topology& topo) {
  topo.reset_links();
  const std::size_t g = topo.gpus.size();
  const auto bus = [&](std::size_t d) -> const std::string& {
    return d < g ? topo.gpus[d].bus_id : topo.nics[d - g].bus_id;
  };
  const auto placement = [&](std::size_t d) -> const PciPlacement& {
    return d < g ? topo.gpus[d].pci : topo.nics[d - g].pci;
  };
  const auto numa = [&](std::size_t d) { return d < g ? topo.gpus[d].numa_node : topo.nics[d - g].numa_node; };
  for (std::size_t a = 0; a < topo.device_count(); ++a)
    for (std::size_t b = 0; b < topo.device_count(); ++b) {
      if (a == b) continue;
      if (a < g && b < g) {
        if (const int nv = nvlinks_between(topo.gpus[a], topo.gpus[b]); nv > 0) {
          topo.link(a, b) = {PathType::NV, nv};
          continue;
        }
      }
      topo.link(a, b) = {detail::classify_pci_path(bus(a), placement(a), numa(a), bus(b), placement(b), numa(b)), 0};
    }
}

Topology parse_nccl_topo_xml(const std::string& text) {
  const xml::Element root = xml::parse(text, kWhat);
  if (root.name != "system")
    throw UsageError(fmt::format("{}: root element is <{}>, expected <system>", kWhat, root.name));

  Topology topo;
  topo.source = "nccl-xml";
  Devices devices;
  for (const xml::Element& cpu : root.children) {
    if (cpu.name != "cpu") continue;
    CpuScope scope;
    scope.numa = static_cast<int>(int_attr(cpu, "numaid", -1));
    try {
      if (const std::string* mask = cpu.find("affinity")) scope.cpulist = detail::cpumask_to_cpulist(*mask);
    } catch (const UsageError& e) {
      fail(cpu, e.what());
    }
    if (topo.cpu.vendor.empty()) {
      topo.cpu.vendor = cpu.get("vendor");
      topo.cpu.arch = cpu.get("arch");
      topo.cpu.family = static_cast<int>(int_attr(cpu, "familyid", 0));
      topo.cpu.model = static_cast<int>(int_attr(cpu, "modelid", 0));
    }
    if (scope.numa >= 0) topo.numa.push_back({scope.numa, 0, scope.cpulist});
    for (const xml::Element& child : cpu.children) {
      if (child.name == "pci") walk_pci(child, scope, {}, devices);
      if (child.name == "nic") add_nics(child, nullptr, scope, {}, devices);  // virtual NICs
    }
  }
  std::sort(topo.numa.begin(), topo.numa.end(), [](const NumaNode& a, const NumaNode& b) { return a.id < b.id; });

  std::sort(devices.gpus.begin(), devices.gpus.end(), [](const Gpu& a, const Gpu& b) { return a.index < b.index; });
  for (std::size_t i = 0; i < devices.gpus.size(); ++i)
    if (devices.gpus[i].index != static_cast<int>(i))
      throw UsageError(fmt::format("{}: GPU dev numbers are not 0..{} (found dev={})", kWhat, devices.gpus.size() - 1,
                                   devices.gpus[i].index));
  std::stable_sort(devices.nics.begin(), devices.nics.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  topo.gpus = std::move(devices.gpus);
  for (auto& [dev, nic] : devices.nics) topo.nics.push_back(std::move(nic));
  detail::derive_links_from_pci(topo);
  return topo;
}

}  // namespace gcb::topo
