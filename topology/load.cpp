// A saved topology read by its first bytes: hwloc XML, NCCL topology XML, gcbench JSON or
// `nvidia-smi topo -m` text (topology.hpp load_topology).
#include <fmt/format.h>

#include "core/error.hpp"
#include "core/input_file.hpp"
#include "topology/topology.hpp"

namespace gcb::topo {

Topology load_topology(const std::string& path) {
  const std::string text = read_input_file(path, "topology file");
  const size_t first = text.find_first_not_of(" \t\r\n\xEF\xBB\xBF");
  if (const std::string version = hwloc_xml_version(text); !version.empty()) {
    // hwloc 2.x reads v1 and v2 exports only (open-mpi/hwloc include/hwloc.h).
    if (version.front() != '1' && version.front() != '2')
      throw UsageError(
          fmt::format("'{}' is an hwloc XML version {} export; hwloc 2.x reads only "
                      "versions 1 and 2 (export it with hwloc 2's lstopo)",
                      path, version));
    return discover_hwloc(path);
  }
  if (first != std::string::npos && text[first] == '<') return parse_nccl_topo_xml(text);
  if (first != std::string::npos && text[first] == '{') {
    return from_json(parse_json_input(text, fmt::format("'{}'", path)));
  }
  return parse_nvidia_smi_topo(text);
}

}  // namespace gcb::topo
