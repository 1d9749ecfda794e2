// Discovery through hwloc 2.x (compiled only when GCB_HAVE_HWLOC): the CPU side from hwloc's
// object tree, the PCIe tree from its I/O objects, either live or from an hwloc XML export.
// API facts used here: open-mpi/hwloc (include/hwloc.h and
// include/hwloc/helper.h @hwloc-2.9.0) -- I/O objects are filtered out unless
// hwloc_topology_set_io_types_filter() keeps them before hwloc_topology_load(); PCI bridges are
// Bridge objects (host bridges upstream type HOST), PCI functions PCIDev with pcidev.linkspeed in
// GB/s, OS devices below them; hwloc_get_non_io_ancestor_obj() gives a device's CPU locality.
#include <hwloc.h>

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <set>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/input_file.hpp"
#include "topology/detail.hpp"
#include "topology/sysfs.hpp"
#include "topology/topology.hpp"
#include "topology/xml.hpp"

namespace gcb::topo {
namespace {

namespace fs = std::filesystem;

using TopologyPtr = std::unique_ptr<hwloc_topology, decltype(&hwloc_topology_destroy)>;
using PciAttr = hwloc_obj_attr_u::hwloc_pcidev_attr_s;  // C's struct nested in the attr union

// hwloc's libxml2 importer dereferences a DOCTYPE's SYSTEM id without checking it, so
// `<!DOCTYPE topology>` crashes the process inside hwloc 2.9 (topology-xml-libxml.c compares
// dtd->SystemID with strcmp). Its own minimal parser reads every hwloc export, expands no
// entities and has no such path. hwloc reads this choice from the environment once per process,
// at the first XML import (HWLOC_LIBXML wins over HWLOC_LIBXML_IMPORT), so it is set before any.
// Chosen over checking the DOCTYPE ourselves: it removes the whole libxml2 route (DTDs,
// entities) instead of guessing which of its inputs crash. The minimal parser cannot skip
// comments or a DOCTYPE that is not on its own line, so those are removed first.
void use_hwloc_minimal_xml_parser() {
  ::unsetenv("HWLOC_LIBXML");
  ::setenv("HWLOC_LIBXML_IMPORT", "0", 1);
}

TopologyPtr load(const std::string& xml_path) {
  std::string xml;  // read by us: regular file, bounded size and nesting (hwloc's parser recurses)
  if (!xml_path.empty()) {
    xml = xml::without_comments_and_doctype(read_input_file(xml_path, "hwloc XML"),
                                            fmt::format("hwloc XML '{}'", xml_path));
    use_hwloc_minimal_xml_parser();
  }
  hwloc_topology_t raw = nullptr;
  GCB_CHECK(hwloc_topology_init(&raw) == 0, "hwloc: hwloc_topology_init failed");  // a library failure, no input
  TopologyPtr topo(raw, &hwloc_topology_destroy);
  // Every CPU and NUMA node of the machine, as sysfs lists them, not only this process's cgroup.
  hwloc_topology_set_flags(raw, HWLOC_TOPOLOGY_FLAG_INCLUDE_DISALLOWED);
  // KEEP_IMPORTANT: GPUs, network and OpenFabrics functions and the bridges above them.
  hwloc_topology_set_io_types_filter(raw, HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
  // The size given includes the terminating NUL, as hwloc_topology_set_xmlbuffer() documents.
  if (!xml_path.empty() && hwloc_topology_set_xmlbuffer(raw, xml.c_str(), static_cast<int>(xml.size() + 1)) != 0)
    throw UsageError(fmt::format("hwloc cannot read XML '{}'", xml_path));
  if (hwloc_topology_load(raw) != 0)
    throw UsageError(xml_path.empty() ? std::string("hwloc could not load this machine")
                                      : fmt::format("hwloc could not load XML '{}'", xml_path));
  return topo;
}

std::string info(hwloc_obj_t obj, const char* name) {
  const char* value = obj ? hwloc_obj_get_info_by_name(obj, name) : nullptr;
  return value ? value : "";
}

std::string cpulist(hwloc_const_bitmap_t set) {  // "0-47,96-143"
  char* text = nullptr;
  if (!set || hwloc_bitmap_list_asprintf(&text, set) < 0 || !text) return "";
  std::string out(text);
  std::free(text);
  return out;
}

int count(hwloc_topology_t topo, hwloc_obj_type_t type) { return std::max(0, hwloc_get_nbobjs_by_type(topo, type)); }

void read_cpu(hwloc_topology_t topo, Topology& out) {
  out.cpu.packages = count(topo, HWLOC_OBJ_PACKAGE);
  out.cpu.cores = count(topo, HWLOC_OBJ_CORE);
  out.cpu.threads = count(topo, HWLOC_OBJ_PU);
  const hwloc_obj_t package = hwloc_get_obj_by_type(topo, HWLOC_OBJ_PACKAGE, 0);
  out.cpu.vendor = info(package, "CPUVendor");
  out.cpu.model_name = info(package, "CPUModel");
  out.cpu.family = static_cast<int>(detail::parse_integer(info(package, "CPUFamilyNumber")).value_or(0));
  out.cpu.model = static_cast<int>(detail::parse_integer(info(package, "CPUModelNumber")).value_or(0));
  out.cpu.arch = info(hwloc_get_root_obj(topo), "Architecture");
  for (hwloc_obj_t node = nullptr; (node = hwloc_get_next_obj_by_type(topo, HWLOC_OBJ_NUMANODE, node)) != nullptr;) {
    NumaNode n;
    n.id = static_cast<int>(node->os_index);
    n.memory_bytes = node->attr ? node->attr->numanode.local_memory : 0;
    n.cpulist = cpulist(node->cpuset);
    out.numa.push_back(std::move(n));
  }
  std::sort(out.numa.begin(), out.numa.end(), [](const NumaNode& a, const NumaNode& b) { return a.id < b.id; });
}

bool is_pci_bridge(hwloc_obj_t obj) {
  return obj->type == HWLOC_OBJ_BRIDGE && obj->attr->bridge.upstream_type == HWLOC_OBJ_BRIDGE_PCI;
}

std::string bus_id(const PciAttr& pci) {  // "0000:a4:00.0", as sysfs names it
  return fmt::format("{:04x}:{:02x}:{:02x}.{:x}", static_cast<unsigned>(pci.domain), static_cast<unsigned>(pci.bus),
                     static_cast<unsigned>(pci.dev), static_cast<unsigned>(pci.func));
}

// The same convention as discover.cpp's placement_of: the host bridge is named as Linux names it
// ("pci0000:00": domain and root bus), and the PCI bridges from the root port down are root port,
// then upstream/downstream port pairs of each switch; a switch is named by its upstream port.
PciPlacement placement_of(hwloc_obj_t pcidev) {
  PciPlacement placement;
  std::vector<std::string> bridges;  // nearest first
  for (hwloc_obj_t up = pcidev->parent; up && up->type == HWLOC_OBJ_BRIDGE; up = up->parent) {
    if (is_pci_bridge(up)) {
      bridges.push_back(bus_id(up->attr->bridge.upstream.pci));
    } else if (up->attr->bridge.downstream_type == HWLOC_OBJ_BRIDGE_PCI) {
      const auto& down = up->attr->bridge.downstream.pci;
      placement.host_bridge = fmt::format("pci{:04x}:{:02x}", static_cast<unsigned>(down.domain),
                                          static_cast<unsigned>(down.secondary_bus));
    }
  }
  std::reverse(bridges.begin(), bridges.end());
  placement.switches = detail::switches_from_bridges(bridges);
  return placement;
}

// NUMA node of the CPUs nearest the device; -1 when that set spans several nodes.
int numa_of(hwloc_topology_t topo, hwloc_obj_t io) {
  const hwloc_obj_t cpu_side = hwloc_get_non_io_ancestor_obj(topo, io);
  if (!cpu_side || !cpu_side->nodeset || hwloc_bitmap_weight(cpu_side->nodeset) != 1) return -1;
  return hwloc_bitmap_first(cpu_side->nodeset);
}

// PCIe from sysfs where the function is on this machine, else only hwloc's bandwidth.
PcieLink pcie_of(hwloc_obj_t pcidev, const std::string& bus, bool live) {
  PcieLink link = live ? detail::read_pcie_link(fs::path("/sys/bus/pci/devices") / bus) : PcieLink{};
  link.speed_gbs = static_cast<double>(pcidev->attr->pcidev.linkspeed);
  return link;
}

void read_gpus(hwloc_topology_t topo, bool live, Topology& out) {
  for (hwloc_obj_t dev = nullptr; (dev = hwloc_get_next_pcidev(topo, dev)) != nullptr;) {
    const PciAttr& pci = dev->attr->pcidev;
    // Vendor 0x10de NVIDIA; class 0x0302 3D controller (datacenter GPUs), 0x0300 VGA.
    if (pci.vendor_id != 0x10de || (pci.class_id != 0x0302 && pci.class_id != 0x0300)) continue;
    Gpu gpu;
    gpu.bus_id = bus_id(pci);
    gpu.pci_device = fmt::format("0x{:04x}", static_cast<unsigned>(pci.device_id));
    gpu.name = detail::pci_gpu_name(gpu.pci_device);
    gpu.numa_node = numa_of(topo, dev);
    const hwloc_obj_t cpu_side = hwloc_get_non_io_ancestor_obj(topo, dev);
    gpu.cpu_affinity = cpu_side ? cpulist(cpu_side->cpuset) : "";
    gpu.pcie = pcie_of(dev, gpu.bus_id, live);
    gpu.pci = placement_of(dev);
    out.gpus.push_back(std::move(gpu));
  }
  // sysfs order (bus id), so that both routes number the GPUs alike.
  std::sort(out.gpus.begin(), out.gpus.end(), [](const Gpu& a, const Gpu& b) { return a.bus_id < b.bus_id; });
  for (std::size_t i = 0; i < out.gpus.size(); ++i) out.gpus[i].index = static_cast<int>(i);
}

// An OpenFabrics port's state from hwloc's "Port<N>State" info (the IB PortInfo PortState:
// 1 DOWN, 2 INIT, 3 ARMED, 4 ACTIVE, 5 ACTIVE_DEFER), for XML exports of another machine.
void rdma_port_from_info(hwloc_obj_t osdev, Nic& nic) {
  static constexpr const char* kStates[] = {"", "DOWN", "INIT", "ARMED", "ACTIVE", "ACTIVE_DEFER"};
  for (int port = 1; port <= 8; ++port) {
    const auto state = detail::parse_integer(info(osdev, fmt::format("Port{}State", port).c_str()));
    if (!state) continue;
    nic.port = port;
    if (*state >= 1 && *state <= 5) nic.state = kStates[*state];
    return;
  }
}

void read_nics(hwloc_topology_t topo, bool live, Topology& out) {
  std::vector<Nic> rdma, net;
  for (hwloc_obj_t os = nullptr; (os = hwloc_get_next_osdev(topo, os)) != nullptr;) {
    const hwloc_obj_osdev_type_e type = os->attr->osdev.type;
    if (type != HWLOC_OBJ_OSDEV_OPENFABRICS && type != HWLOC_OBJ_OSDEV_NETWORK) continue;
    // On PCI only, like the sysfs route: virtual interfaces have no PCI function.
    if (!os->parent || os->parent->type != HWLOC_OBJ_PCI_DEVICE || !os->name) continue;
    const hwloc_obj_t dev = os->parent;
    Nic nic;
    nic.name = os->name;
    nic.bus_id = bus_id(dev->attr->pcidev);
    nic.numa_node = numa_of(topo, dev);
    nic.pcie = pcie_of(dev, nic.bus_id, live);
    nic.pci = placement_of(dev);
    if (type == HWLOC_OBJ_OSDEV_OPENFABRICS) {
      if (live)
        detail::read_rdma_port(fs::path("/sys/class/infiniband") / nic.name, nic);
      else
        rdma_port_from_info(os, nic);
      rdma.push_back(std::move(nic));
    } else {
      if (live) detail::read_netdev(fs::path("/sys/class/net") / nic.name, nic);
      net.push_back(std::move(nic));
    }
  }
  // RDMA devices first, then netdevs that are not an RDMA device's PCI function (ib0 beside
  // mlx5_0), each by name -- the sysfs route's order.
  const auto by_name = [](const Nic& a, const Nic& b) { return a.name < b.name; };
  std::sort(rdma.begin(), rdma.end(), by_name);
  std::sort(net.begin(), net.end(), by_name);
  std::set<std::string> rdma_buses;
  for (Nic& nic : rdma) {
    rdma_buses.insert(nic.bus_id);
    out.nics.push_back(std::move(nic));
  }
  for (Nic& nic : net)
    if (!rdma_buses.count(nic.bus_id)) out.nics.push_back(std::move(nic));
}

}  // namespace

Topology discover_hwloc(const std::string& xml_path) {
  const TopologyPtr topo = load(xml_path);
  const bool live = xml_path.empty();
  Topology out;
  out.source = live ? "live" : "hwloc-xml";
  out.discovery = "hwloc";
  out.hostname = live ? host_name() : info(hwloc_get_root_obj(topo.get()), "HostName");
  read_cpu(topo.get(), out);
  read_gpus(topo.get(), live, out);
  read_nics(topo.get(), live, out);
  detail::finish_discovered(out);
  return out;
}

}  // namespace gcb::topo
