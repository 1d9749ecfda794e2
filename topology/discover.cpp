// Live discovery of the running Linux host from sysfs and /proc, without hwloc or NVML: NUMA
// nodes and memory, CPU packages/cores, NVIDIA GPUs and network devices on PCI, and the PCIe
// path between them from the bridge chain in /sys/devices. NVLink is not visible here. Also the
// sysfs readers the hwloc route (discover_hwloc.cpp) shares, and discover_live()'s choice of route.
#include <sys/utsname.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <stdexcept>

#include <fmt/format.h>

#include "core/error.hpp"
#include "topology/detail.hpp"
#include "topology/sysfs.hpp"
#include "topology/topology.hpp"
#include "gcb/config.hpp"

namespace gcb::topo {
namespace fs = std::filesystem;

namespace detail {

std::optional<std::string> read_attr(const fs::path& path) {
  std::ifstream in(path);
  std::string line;
  if (!in || !std::getline(in, line)) return std::nullopt;
  return std::string(trim(line));
}

int read_int(const fs::path& path, int fallback) {
  const auto text = read_attr(path);
  if (!text) return fallback;
  const auto n = parse_integer(*text);
  return n ? static_cast<int>(*n) : fallback;
}

std::vector<fs::path> list_dir(const fs::path& dir) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) out.push_back(it->path());
  std::sort(out.begin(), out.end());
  return out;
}

PcieLink read_pcie_link(const fs::path& pci_function) {
  PcieLink link;
  link.gen = pcie_gen_from_speed(read_attr(pci_function / "current_link_speed").value_or(""));
  link.max_gen = pcie_gen_from_speed(read_attr(pci_function / "max_link_speed").value_or(""));
  link.width = read_int(pci_function / "current_link_width", 0);
  link.max_width = read_int(pci_function / "max_link_width", 0);
  return link;
}

void read_rdma_port(const fs::path& rdma_device, Nic& nic) {
  // The first port: "200 Gb/sec (4X HDR)", "4: ACTIVE", "InfiniBand".
  const std::vector<fs::path> ports = list_dir(rdma_device / "ports");
  if (ports.empty()) return;
  const fs::path& port = ports.front();
  nic.port = label_number(port.filename().string(), "").value_or(0);
  const auto words = split_whitespace(read_attr(port / "rate").value_or(""));
  if (!words.empty()) nic.rate_gbps = std::strtod(words[0].c_str(), nullptr);
  const std::string state = read_attr(port / "state").value_or("");
  const std::size_t colon = state.find(':');
  nic.state = std::string(trim(colon == std::string::npos ? state : state.substr(colon + 1)));
  nic.link_layer = read_attr(port / "link_layer").value_or("");
}

void read_netdev(const fs::path& netdev, Nic& nic) {
  const int mbps = read_int(netdev / "speed", -1);  // Mb/s; -1 or unreadable when the link is down
  if (mbps > 0) nic.rate_gbps = mbps / 1000.0;
  nic.state = read_attr(netdev / "operstate").value_or("");
  nic.link_layer = "Ethernet";
}

std::string pci_gpu_name(const std::string& pci_device) { return fmt::format("NVIDIA PCI device {}", pci_device); }

std::vector<std::string> switches_from_bridges(const std::vector<std::string>& bridges) {
  std::vector<std::string> switches;
  for (std::size_t i = 1; i < bridges.size(); i += 2) switches.push_back(bridges[i]);
  return switches;
}

void finish_discovered(Topology& topo) {
  if (topo.numa.empty()) {
    // Kernels without NUMA support still have one node holding every CPU.
    NumaNode all;
    all.cpulist = topo.cpu.threads > 0 ? fmt::format("0-{}", topo.cpu.threads - 1) : "";
    topo.numa.push_back(all);
  }
  // A node that is not NUMA reports numa_node -1 for its devices; the CPUs are still one node.
  if (topo.numa.size() == 1) {
    for (Gpu& gpu : topo.gpus)
      if (gpu.numa_node < 0) gpu.numa_node = topo.numa.front().id;
    for (Nic& nic : topo.nics)
      if (nic.numa_node < 0) nic.numa_node = topo.numa.front().id;
  }
  derive_links_from_pci(topo);
}

}  // namespace detail

namespace {

using detail::list_dir;
using detail::read_attr;
using detail::read_int;

bool is_bdf(const std::string& s) {  // "0000:3b:00.0"
  return s.size() == 12 && s[4] == ':' && s[7] == ':' && s[10] == '.';
}

void read_numa(const fs::path& sys, Topology& topo) {
  for (const fs::path& node : list_dir(sys / "devices/system/node")) {
    const auto id = detail::label_number(node.filename().string(), "node");
    if (!id) continue;
    NumaNode n;
    n.id = *id;
    n.cpulist = read_attr(node / "cpulist").value_or("");
    // "Node 0 MemTotal:       131811712 kB"
    std::ifstream meminfo(node / "meminfo");
    for (std::string line; std::getline(meminfo, line);) {
      const auto words = detail::split_whitespace(line);
      if (words.size() >= 4 && words[2] == "MemTotal:")
        if (const auto kb = detail::parse_integer(words[3]); kb && *kb > 0)
          n.memory_bytes = static_cast<std::uint64_t>(*kb) * 1024U;
    }
    topo.numa.push_back(std::move(n));
  }
  std::sort(topo.numa.begin(), topo.numa.end(), [](const NumaNode& a, const NumaNode& b) { return a.id < b.id; });
}

void read_cpu(const fs::path& proc, Topology& topo) {
  std::ifstream in(proc / "cpuinfo");
  std::set<std::string> packages;
  std::set<std::pair<std::string, std::string>> cores;
  std::string physical_id;
  for (std::string line; std::getline(in, line);) {
    const std::size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    const std::string key(detail::trim(std::string_view(line).substr(0, colon)));
    const std::string value(detail::trim(std::string_view(line).substr(colon + 1)));
    const auto number = [&] { return static_cast<int>(detail::parse_integer(value).value_or(0)); };
    if (key == "processor") {
      ++topo.cpu.threads;
    } else if (key == "vendor_id" && topo.cpu.vendor.empty()) {
      topo.cpu.vendor = value;
    } else if (key == "model name" && topo.cpu.model_name.empty()) {
      topo.cpu.model_name = value;
    } else if (key == "cpu family" && topo.cpu.family == 0) {
      topo.cpu.family = number();
    } else if (key == "model" && topo.cpu.model == 0) {
      topo.cpu.model = number();
    } else if (key == "physical id") {
      physical_id = value;
      packages.insert(value);
    } else if (key == "core id") {
      cores.emplace(physical_id, value);
    }
  }
  // Without "physical id" (many ARM and VM kernels) the package and core counts stay unknown.
  topo.cpu.packages = static_cast<int>(packages.size());
  topo.cpu.cores = static_cast<int>(cores.size());
  utsname uts{};
  if (uname(&uts) == 0) topo.cpu.arch = uts.machine;
}

// The bridge chain from /sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:00.0/<dev>:
// host bridge pci0000:00, root port 00:01.0, then switch upstream/downstream port pairs. A
// switch is named by its upstream port, matching one nested <pci> in NCCL's XML.
PciPlacement placement_of(const fs::path& device_link) {
  PciPlacement placement;
  std::error_code ec;
  const fs::path real = fs::canonical(device_link, ec);
  if (ec) return placement;
  std::vector<std::string> bridges;
  for (const fs::path& part : real) {
    const std::string name = part.string();
    if (detail::starts_with(name, "pci") && name.size() > 3 && name.find(':') != std::string::npos)
      placement.host_bridge = name;
    else if (is_bdf(name))
      bridges.push_back(name);
  }
  if (bridges.empty()) return placement;
  bridges.pop_back();  // the device itself
  placement.switches = detail::switches_from_bridges(bridges);
  return placement;
}

void read_gpus(const fs::path& sys, Topology& topo) {
  for (const fs::path& dev : list_dir(sys / "bus/pci/devices")) {
    const int vendor = read_int(dev / "vendor", 0);
    const int pci_class = read_int(dev / "class", 0);
    // 0x0302xx 3D controller (datacenter GPUs), 0x0300xx VGA controller; vendor 0x10de NVIDIA.
    if (vendor != 0x10de || ((pci_class >> 8) != 0x0302 && (pci_class >> 8) != 0x0300)) continue;
    Gpu gpu;
    gpu.index = static_cast<int>(topo.gpus.size());
    gpu.bus_id = dev.filename().string();
    gpu.pci_device = read_attr(dev / "device").value_or("");
    // The marketing name ("NVIDIA H100 80GB HBM3") needs NVML.
    gpu.name = detail::pci_gpu_name(gpu.pci_device);
    gpu.numa_node = read_int(dev / "numa_node", -1);
    gpu.cpu_affinity = read_attr(dev / "local_cpulist").value_or("");
    gpu.pcie = detail::read_pcie_link(dev);
    gpu.pci = placement_of(dev);
    topo.gpus.push_back(std::move(gpu));
  }
}

// The PCI function behind a class device link; virtio NICs sit one level below it
// (.../0000:00:03.0/virtio2).
std::optional<fs::path> pci_function_of(const fs::path& device_link) {
  std::error_code ec;
  fs::path path = fs::canonical(device_link, ec);
  if (ec) return std::nullopt;
  for (int up = 0; up < 2 && !path.empty(); ++up, path = path.parent_path())
    if (is_bdf(path.filename().string())) return path;
  return std::nullopt;
}

Nic nic_at(const fs::path& device_link) {
  Nic nic;
  const auto pci = pci_function_of(device_link);
  if (!pci) return nic;
  nic.bus_id = pci->filename().string();
  nic.numa_node = read_int(*pci / "numa_node", -1);
  nic.pcie = detail::read_pcie_link(*pci);
  nic.pci = placement_of(*pci);
  return nic;
}

void read_nics(const fs::path& sys, Topology& topo) {
  std::set<std::string> rdma_buses;
  for (const fs::path& ib : list_dir(sys / "class/infiniband")) {
    Nic nic = nic_at(ib / "device");
    nic.name = ib.filename().string();
    detail::read_rdma_port(ib, nic);
    if (!nic.bus_id.empty()) rdma_buses.insert(nic.bus_id);
    topo.nics.push_back(std::move(nic));
  }
  // Plain netdevs on PCI that are not already an RDMA device's function.
  for (const fs::path& net : list_dir(sys / "class/net")) {
    if (!fs::exists(net / "device")) continue;  // virtual interfaces: lo, bridges, veth
    Nic nic = nic_at(net / "device");
    if (nic.bus_id.empty() || rdma_buses.count(nic.bus_id)) continue;
    nic.name = net.filename().string();
    detail::read_netdev(net, nic);
    topo.nics.push_back(std::move(nic));
  }
}

}  // namespace

Topology discover_live(const std::string& sysfs_root, const std::string& proc_root) {
  Topology topo;
  topo.source = "live";
  topo.discovery = "sysfs";
  topo.hostname = host_name();
  const fs::path sys(sysfs_root);
  read_numa(sys, topo);
  read_cpu(fs::path(proc_root), topo);
  read_gpus(sys, topo);
  read_nics(sys, topo);
  detail::finish_discovered(topo);
  return topo;
}

Topology discover_live() {
#if GCB_HAVE_HWLOC
  try {
    return discover_hwloc();
  } catch (const std::exception& e) {
    fmt::print(stderr, "warning: hwloc discovery failed ({}); reading sysfs instead\n", e.what());
  }
#endif
  return discover_live("/sys", "/proc");
}

std::string hwloc_xml_version(std::string_view text) {
  // Skip the declaration, comments and the DOCTYPE: the first element must be <topology>.
  std::size_t pos = 0;
  while ((pos = text.find('<', pos)) != std::string_view::npos) {
    const std::string_view rest = text.substr(pos);
    if (!detail::starts_with(rest, "<?") && !detail::starts_with(rest, "<!")) break;
    pos = detail::starts_with(rest, "<!--") ? text.find("-->", pos) : text.find('>', pos);
    if (pos == std::string_view::npos) return "";
  }
  if (pos == std::string_view::npos) return "";
  const std::string_view tag = text.substr(pos, text.find('>', pos) - pos);
  if (!detail::starts_with(tag, "<topology") ||
      (tag.size() > 9 && tag[9] != ' ' && tag[9] != '\t' && tag[9] != '\n' && tag[9] != '\r'))
    return "";
  const std::size_t attr = tag.find("version=\"");
  if (attr == std::string_view::npos) return "1";
  const std::size_t start = attr + 9;
  return std::string(tag.substr(start, tag.find('"', start) - start));
}

#if !GCB_HAVE_HWLOC
Topology discover_hwloc(const std::string& xml_path) {
  throw UsageError(xml_path.empty() ? std::string("this gcbench was built without hwloc")
                                    : fmt::format("cannot read hwloc XML '{}': this gcbench was built without "
                                                  "hwloc (install libhwloc-dev and reconfigure)",
                                                  xml_path));
}
#endif

}  // namespace gcb::topo
