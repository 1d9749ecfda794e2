// The node topology model behind `gcbench topo`: CPUs, NUMA nodes, GPUs, NICs and the path type
// between every pair of devices, plus the parsers, renderers and checks that work on it. Every
// renderer is a pure function of a Topology; nvidia-smi topo -m, NCCL topology XML, hwloc.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace gcb::topo {

// The nvidia-smi path classes, nearest first. NV carries its link count in Link::nvlinks.
enum class PathType { X, NV, PIX, PXB, PHB, NODE, SYS, unknown };

struct Link {
  PathType type = PathType::unknown;
  int nvlinks = 0;  // bonded NVLinks when type == NV, else 0

  bool operator==(const Link&) const = default;
};

// "X", "NV18", "PIX", ... and "N/A" for unknown — the cell text of `nvidia-smi topo -m`.
std::string to_string(Link link);
// Inverse of to_string; also accepts "SOC" (pre-2017 drivers' name for SYS). Throws UsageError.
Link parse_link(std::string_view cell);

// Where a PCI device hangs: the path types are derived from this, not stored separately.
struct PciPlacement {
  std::string host_bridge;            // "pci0000:00"; empty when the source does not say
  std::vector<std::string> switches;  // bus ids of the PCIe switches from the CPU downwards

  bool operator==(const PciPlacement&) const = default;
};

struct PcieLink {  // 0 = unknown
  int gen = 0, width = 0, max_gen = 0, max_width = 0;
  // Link bandwidth in GB/s as hwloc reports it (pci_link_speed: width x GT/s x encoding / 8, e.g.
  // 31.507692 for gen4 x16). It does not tell gen and width apart (gen3 x16 = gen4 x8), so those
  // stay sysfs's; 0 = unknown.
  double speed_gbs = 0;

  bool operator==(const PcieLink&) const = default;
};

struct NvLink {        // one <nvlink> of the NCCL XML: `count` links to the device at `target`
  std::string target;  // bus id of an NVSwitch or peer GPU; "fffffff:ff:ff.0" = unseen switch
  int count = 0;
  std::string target_class;  // "0x068000" NVSwitch, "0x030200" GPU

  bool operator==(const NvLink&) const = default;
};

struct Gpu {
  int index = 0;
  std::string name;        // "NVIDIA H100 80GB HBM3"; empty when the source does not say
  std::string bus_id;      // "0000:a4:00.0"
  std::string pci_device;  // PCI device id "0x2330"
  int sm = 0;              // compute capability x10 (90 = Hopper), 0 = unknown
  int rank = -1;           // NCCL rank in the XML dump, -1 = unknown
  bool gdr = false;
  int numa_node = -1;        // NUMA node of the attached CPU ("NUMA Affinity")
  std::string cpu_affinity;  // cpulist "0-47,96-143"; empty = unknown
  int gpu_numa_id = -1;      // the GPU's own memory as a NUMA node (Grace), -1 = none
  PcieLink pcie;
  std::vector<NvLink> nvlinks;
  PciPlacement pci;

  bool operator==(const Gpu&) const = default;
};

struct Nic {
  std::string name;  // "mlx5_0" (RDMA device) or "eth0" (plain netdev)
  std::string bus_id;
  int numa_node = -1;
  double rate_gbps = 0;  // port rate in Gb/s (1e9 bit/s), 0 = unknown
  int port = 0;
  std::string state;       // "ACTIVE", "DOWN", "up", ...; empty = unknown
  std::string link_layer;  // "InfiniBand" or "Ethernet"
  std::string guid;
  bool gdr = false;
  PcieLink pcie;
  PciPlacement pci;

  bool operator==(const Nic&) const = default;
};

struct NumaNode {
  int id = 0;
  std::uint64_t memory_bytes = 0;  // 0 = unknown
  std::string cpulist;             // "0-47,96-143"

  bool operator==(const NumaNode&) const = default;
};

struct CpuInfo {
  std::string vendor;  // "GenuineIntel"
  std::string model_name;
  std::string arch;  // "x86_64"
  int family = 0, model = 0;
  int packages = 0, cores = 0, threads = 0;  // 0 = unknown

  bool operator==(const CpuInfo&) const = default;
};

// Devices are numbered GPUs first, then NICs — the row/column order of `nvidia-smi topo -m`.
struct Topology {
  std::string source;     // "nvidia-smi", "nccl-xml", "hwloc-xml", "live" or "json"
  std::string discovery;  // how a live/hwloc-xml topology was read: "hwloc" or "sysfs"; else ""
  std::string hostname;
  CpuInfo cpu;
  std::vector<NumaNode> numa;
  std::vector<Gpu> gpus;
  std::vector<Nic> nics;
  std::vector<Link> links;  // device_count()^2, row-major

  std::size_t device_count() const { return gpus.size() + nics.size(); }
  std::string device_label(std::size_t device) const;  // "GPU3", "NIC0"
  Link& link(std::size_t a, std::size_t b) { return links.at(a * device_count() + b); }
  const Link& link(std::size_t a, std::size_t b) const { return links.at(a * device_count() + b); }
  // Sizes `links` to the devices, every cell unknown except the X diagonal.
  void reset_links();

  bool operator==(const Topology&) const = default;
};

// ---- parsers: malformed input throws gcb::UsageError with one line that says what and where.

// `nvidia-smi topo -m` text: tabs or spaces, ANSI escapes, with or without NIC legend and
// affinity columns, surrounding text ignored.
Topology parse_nvidia_smi_topo(const std::string& text);
// NCCL topology XML (NCCL_TOPO_DUMP_FILE output or a hand-written NCCL_TOPO_FILE).
Topology parse_nccl_topo_xml(const std::string& text);
// The document of to_json.
Topology from_json(const nlohmann::json& doc);

// ---- renderers: pure functions of the topology.

struct SmiRenderOptions {
  bool tabs = false;            // the driver writes tabs; captures usually show them expanded
  bool ansi_underline = false;  // the driver underlines the header on a terminal
};
// Matrix, legend and NIC legend laid out exactly as `nvidia-smi topo -m` prints them.
std::string render_nvidia_smi(const Topology& topo, const SmiRenderOptions& options = {});
nlohmann::json to_json(const Topology& topo);       // schema "gcbench.topology/1"
std::string render_markdown(const Topology& topo);  // summary, matrix table, mermaid graph
std::string render_dot(const Topology& topo);       // Graphviz
std::string render_svg(const Topology& topo);       // self-contained SVG drawing
std::string render_nccl_xml(const Topology& topo);  // loadable through NCCL_TOPO_FILE

// ---- identity and checks.

// FNV-1a 64 over a canonical string (GPU names, path matrix, NIC names and rates, NUMA count) as
// 16 hex digits. Independent of hostname, source format and whitespace inside names.
std::string topology_fingerprint(const Topology& topo);

// Things worth a warning on a healthy-looking node: downtrained PCIe links, GPUs without a
// PIX/PXB NIC, asymmetric NVLink counts. Empty = nothing found.
std::vector<std::string> health_checks(const Topology& topo);

// Differences between an expected topology (e.g. `--expect FILE`) and the one found, one line
// each; empty = same. Hostname, source and live-only details (memory, link state) are ignored.
std::vector<std::string> compare_topology(const Topology& expected, const Topology& actual);

// ---- discovery.

// Reads the running host: through hwloc (discover_hwloc) when gcbench is built with it, else --
// or when hwloc fails to load, after a one-line warning on stderr -- from sysfs and /proc.
// source = "live" either way; `discovery` says which route ran.
Topology discover_live();

// The sysfs route: CPUs from /proc/cpuinfo, NUMA nodes, NVIDIA GPUs by PCI class, RDMA and PCI
// network devices, and PCIe-derived path types. NVLink is invisible to sysfs, so GPU pairs get
// their PCIe path type. Never throws for a missing file: a CPU-only box yields NUMA nodes and zero
// GPUs. The roots let tests point at a fake tree.
Topology discover_live(const std::string& sysfs_root, const std::string& proc_root);

// The hwloc route (open-mpi/hwloc include/hwloc.h): packages, cores, PUs, NUMA nodes and
// memory, and the PCI tree -- GPUs are NVIDIA PCI functions of class 0x0300/0x0302 matched by bus
// id (Debian's hwloc has no CUDA/NVML plugin), NICs are OpenFabrics and PCI Network OS devices.
// With `xml_path` it reads an hwloc XML v1/v2 export instead of this machine (source
// "hwloc-xml"); live, it adds from sysfs what hwloc does not export (PCIe gen/width, RDMA port
// rate/state/link layer, netdev speed). Throws UsageError when hwloc cannot load, and always in a
// build without hwloc.
Topology discover_hwloc(const std::string& xml_path = "");

// The format version of an hwloc XML export ("2.0"; "1" for v1 files, whose <topology> has no
// version), or "" when `text` is not one (its first element is not <topology>).
std::string hwloc_xml_version(std::string_view text);

// Adds what only the driver knows, when NVML is available (else leaves `topo` unchanged and
// returns false): GPU names, active NVLinks (remote bus ids, switch or GPU) → NV# path types,
// current and maximum PCIe generation and width.
bool enrich_with_nvml(Topology& topo);

// This machine as the subcommands record it: discover_live(), then enrich_with_nvml() where a
// driver exists.
Topology live_topology();

// A saved topology: NCCL XML (starts with '<'), hwloc XML v1/v2, gcbench JSON ('{') or
// `nvidia-smi topo -m` text. Throws UsageError for an unreadable file or an hwloc export of
// another major version.
Topology load_topology(const std::string& path);
// {fingerprint, source, gpus, nics, numa_nodes}: stored in every result document's context so
// `compare` never pairs runs from different topologies silently.
nlohmann::json topology_context(const Topology& t);
// `gcbench topo --format`: text (summary, the nvidia-smi matrix, warnings, fingerprint), json,
// md, dot, svg or nccl-xml.
std::string render_topology(const Topology& t, const std::string& format);

}  // namespace gcb::topo
