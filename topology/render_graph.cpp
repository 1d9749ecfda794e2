// Graph-shaped renderings of a topology: Markdown (summary, matrix table and a mermaid graph,
// which GitHub renders in PR comments) and Graphviz DOT. Both draw the same edges: the NVLink
// fabric (one hub when every GPU pair has the same NV#), and each device's close PCIe links.
#include <map>

#include <fmt/format.h>

#include "reports/escape.hpp"
#include "topology/detail.hpp"
#include "topology/render_graph.hpp"
#include "topology/topology.hpp"

namespace gcb::topo {

namespace detail {

GraphView graph_view(const Topology& topo) {
  GraphView v;
  const std::size_t g = topo.gpus.size();
  for (std::size_t d = 0; d < topo.device_count(); ++d) {
    const int numa = d < g ? topo.gpus[d].numa_node : topo.nics[d - g].numa_node;
    v.devices_by_numa[numa].push_back(d);
  }
  std::map<int, int> nv_counts;  // NV# -> pairs
  bool all_nv = g > 1;
  for (std::size_t a = 0; a < g; ++a)
    for (std::size_t b = 0; b < g; ++b)
      if (a != b) {
        const Link l = topo.link(a, b);
        all_nv = all_nv && l.type == PathType::NV;
        if (l.type == PathType::NV) ++nv_counts[l.nvlinks];
      }
  if (all_nv && nv_counts.size() == 1) v.nvlink_hub = nv_counts.begin()->first;
  for (std::size_t a = 0; a < topo.device_count(); ++a)
    for (std::size_t b = a + 1; b < topo.device_count(); ++b) {
      const Link l = topo.link(a, b);
      const bool nv_pair = l.type == PathType::NV && v.nvlink_hub == 0;
      // PHB and beyond go through the CPU: drawn as membership of the NUMA box, not as edges.
      const bool close_pci = l.type == PathType::PIX || l.type == PathType::PXB;
      if (nv_pair || close_pci) v.edges.push_back({a, b, l});
    }
  return v;
}

std::string numa_title(const Topology& topo, int numa) {
  if (numa < 0) return "NUMA unknown";
  for (const NumaNode& n : topo.numa)
    if (n.id == numa && !n.cpulist.empty()) return fmt::format("NUMA {} (CPUs {})", numa, n.cpulist);
  return fmt::format("NUMA {}", numa);
}

std::string device_caption(const Topology& topo, std::size_t d) {
  const std::size_t g = topo.gpus.size();
  if (d < g) {
    const Gpu& gpu = topo.gpus[d];
    return gpu.name.empty() ? topo.device_label(d) : fmt::format("{} {}", topo.device_label(d), gpu.name);
  }
  const Nic& nic = topo.nics[d - g];
  std::string caption = fmt::format("{} {}", topo.device_label(d), nic.name);
  if (nic.rate_gbps > 0) caption += fmt::format(" {} Gb/s", format_double(nic.rate_gbps));
  return caption;
}

}  // namespace detail

std::string render_markdown(const Topology& topo) {
  const detail::GraphView view = detail::graph_view(topo);
  const std::size_t n = topo.device_count();
  std::string out =
      fmt::format("### Topology{}{}\n\n", topo.hostname.empty() ? "" : " of ", markdown_text(topo.hostname));
  out += fmt::format("{} GPUs, {} NICs, {} NUMA nodes; source {}; fingerprint `{}`\n\n", topo.gpus.size(),
                     topo.nics.size(), topo.numa.size(), markdown_text(topo.source), topology_fingerprint(topo));
  out += "| |";
  for (std::size_t d = 0; d < n; ++d) out += fmt::format(" {} |", topo.device_label(d));
  out += " CPU Affinity | NUMA Affinity |\n|---|";
  for (std::size_t d = 0; d < n + 2; ++d) out += "---|";
  out += "\n";
  for (std::size_t a = 0; a < n; ++a) {
    out += fmt::format("| {} |", topo.device_label(a));
    for (std::size_t b = 0; b < n; ++b) out += fmt::format(" {} |", to_string(topo.link(a, b)));
    if (a < topo.gpus.size()) {
      const Gpu& gpu = topo.gpus[a];
      out += fmt::format(" {} | {} |", gpu.cpu_affinity.empty() ? "N/A" : markdown_text(gpu.cpu_affinity),
                         gpu.numa_node < 0 ? std::string("N/A") : std::to_string(gpu.numa_node));
    } else {
      out += " | |";
    }
    out += "\n";
  }
  if (!topo.nics.empty()) {
    out += "\n";
    for (std::size_t k = 0; k < topo.nics.size(); ++k)
      out += fmt::format("{}NIC{}: {}", k ? ", " : "NICs: ", k, markdown_text(topo.nics[k].name));
    out += "\n";
  }

  out += "\n```mermaid\ngraph LR\n";
  for (const auto& [numa, devices] : view.devices_by_numa) {
    out += fmt::format("  subgraph numa{}[\"{}\"]\n", numa < 0 ? 99999 : numa,
                       mermaid_label(detail::numa_title(topo, numa)));
    for (const std::size_t d : devices)
      out += fmt::format("    {}[\"{}\"]\n", topo.device_label(d), mermaid_label(detail::device_caption(topo, d)));
    out += "  end\n";
  }
  if (view.nvlink_hub > 0) {
    out += fmt::format("  nvlink{{{{\"NVLink NV{}\"}}}}\n", view.nvlink_hub);
    for (std::size_t g = 0; g < topo.gpus.size(); ++g) out += fmt::format("  {} === nvlink\n", topo.device_label(g));
  }
  for (const detail::GraphEdge& e : view.edges)
    out += fmt::format("  {} {}|{}| {}\n", topo.device_label(e.a), e.link.type == PathType::NV ? "===" : "---",
                       to_string(e.link), topo.device_label(e.b));
  out += "```\n";
  return out;
}

std::string render_dot(const Topology& topo) {
  const detail::GraphView view = detail::graph_view(topo);
  std::string out = "graph topology {\n  node [shape=box, fontname=\"Helvetica\"];\n";
  for (const auto& [numa, devices] : view.devices_by_numa) {
    out += fmt::format("  subgraph cluster_numa{} {{\n    label=\"{}\";\n", numa < 0 ? 99999 : numa,
                       dot_label(detail::numa_title(topo, numa)));
    for (const std::size_t d : devices)
      out += fmt::format("    {} [label=\"{}\"{}];\n", topo.device_label(d), dot_label(detail::device_caption(topo, d)),
                         d < topo.gpus.size() ? ", style=filled, fillcolor=\"#d9f2d9\"" : "");
    out += "  }\n";
  }
  if (view.nvlink_hub > 0) {
    out += fmt::format("  nvlink [shape=hexagon, label=\"NVLink NV{}\"];\n", view.nvlink_hub);
    for (std::size_t g = 0; g < topo.gpus.size(); ++g)
      out += fmt::format("  {} -- nvlink [penwidth=2];\n", topo.device_label(g));
  }
  for (const detail::GraphEdge& e : view.edges)
    out += fmt::format("  {} -- {} [label=\"{}\"{}];\n", topo.device_label(e.a), topo.device_label(e.b),
                       to_string(e.link), e.link.type == PathType::NV ? ", penwidth=2" : "");
  out += "}\n";
  return out;
}

}  // namespace gcb::topo
