// The plain-text view of `gcbench topo` and the dispatch over every format, plus the topology
// facts each result document records in its context (topology.hpp).
#include <fmt/format.h>

#include "core/size.hpp"
#include "topology/sysfs.hpp"
#include "topology/topology.hpp"

namespace gcb::topo {

namespace {

// "PCIe gen5 x16 (max gen5 x16)", leaving out what the source left at 0 (NCCL's XML in a VM
// gives link_width="0"); "" when the generation is unknown.
std::string pcie_text(const PcieLink& l) {
  if (!l.gen) return "";
  std::string out = fmt::format(" PCIe gen{}", l.gen);
  if (l.width) out += fmt::format(" x{}", l.width);
  if (l.max_gen)
    out +=
        l.max_width ? fmt::format(" (max gen{} x{})", l.max_gen, l.max_width) : fmt::format(" (max gen{})", l.max_gen);
  return out;
}

std::string summary_text(const Topology& t) {
  std::string out = fmt::format("host: {}   source: {}{}\n", t.hostname.empty() ? "?" : t.hostname, t.source,
                                t.discovery.empty() ? "" : fmt::format(" ({})", t.discovery));
  if (!t.cpu.model_name.empty())
    out += fmt::format("CPU: {} ({} package(s), {} cores, {} threads)\n", t.cpu.model_name, t.cpu.packages, t.cpu.cores,
                       t.cpu.threads);
  for (const auto& n : t.numa)
    out += fmt::format(
        "NUMA node {}: cpus {}{}\n", n.id, n.cpulist.empty() ? "?" : n.cpulist,
        n.memory_bytes ? fmt::format(", memory {}", format_bytes(static_cast<double>(n.memory_bytes))) : "");
  if (t.gpus.empty()) out += "GPUs: none found\n";
  for (const auto& g : t.gpus)
    out += fmt::format("GPU{}: {}{}{}\n", g.index,
                       !g.name.empty()         ? g.name
                       : !g.pci_device.empty() ? detail::pci_gpu_name(g.pci_device)  // NCCL's XML has no name
                                               : "(name unknown)",
                       g.bus_id.empty() ? "" : fmt::format(" {}", g.bus_id), pcie_text(g.pcie));
  for (const auto& n : t.nics)
    out += fmt::format("NIC {}: {}{}{}{}\n", n.name, n.bus_id.empty() ? "(no PCI address)" : n.bus_id,
                       n.rate_gbps > 0 ? fmt::format(" {} Gb/s", n.rate_gbps) : "",
                       n.link_layer.empty() ? "" : fmt::format(" {}", n.link_layer),
                       n.state.empty() ? "" : fmt::format(" {}", n.state));
  return out;
}

}  // namespace

nlohmann::json topology_context(const Topology& t) {
  return {{"fingerprint", topology_fingerprint(t)},
          {"source", t.source},
          {"gpus", t.gpus.size()},
          {"nics", t.nics.size()},
          {"numa_nodes", t.numa.size()}};
}

std::string render_topology(const Topology& t, const std::string& format) {
  const auto warnings = health_checks(t);
  if (format == "json") {
    nlohmann::json j = to_json(t);
    j["fingerprint"] = topology_fingerprint(t);
    j["warnings"] = warnings;
    return fmt::format("{}\n", j.dump(2));
  }
  if (format == "md") return render_markdown(t);
  if (format == "dot") return render_dot(t);
  if (format == "svg") return render_svg(t);
  if (format == "nccl-xml") return render_nccl_xml(t);
  std::string out = summary_text(t);
  if (t.device_count() > 0) out += fmt::format("\n{}", render_nvidia_smi(t));
  for (const auto& w : warnings) out += fmt::format("WARNING: {}\n", w);
  out += fmt::format("topology fingerprint: {}\n", topology_fingerprint(t));
  return out;
}

}  // namespace gcb::topo
