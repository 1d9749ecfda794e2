// What the drawn renderings (Markdown/mermaid, DOT, SVG) share: devices grouped by NUMA node
// and the edges worth drawing. Internal to topology.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "topology/topology.hpp"

namespace gcb::topo::detail {

struct GraphEdge {
  std::size_t a = 0, b = 0;  // model device indices, a < b
  Link link;
};

struct GraphView {
  std::map<int, std::vector<std::size_t>> devices_by_numa;  // NUMA -1 = unknown
  int nvlink_hub = 0;            // NV# when every GPU pair has the same one: drawn as one fabric node
  std::vector<GraphEdge> edges;  // NVLink pairs (without a hub) and PIX/PXB links
};

GraphView graph_view(const Topology& topo);
std::string numa_title(const Topology& topo, int numa);
std::string device_caption(const Topology& topo, std::size_t device);

}  // namespace gcb::topo::detail
