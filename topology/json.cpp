// The topology as JSON, schema "gcbench.topology/1": every model field, plus the path matrix as
// nvidia-smi cell strings ("NV18", "PIX") so the document reads like `topo -m`. from_json is
// the exact inverse (the fingerprint field is informational and not read back).
#include <fmt/format.h>

#include "core/error.hpp"
#include "topology/topology.hpp"

namespace gcb::topo {
namespace {

using nlohmann::json;

constexpr const char* kSchema = "gcbench.topology/1";

json pcie_json(const PcieLink& p) {
  return {{"gen", p.gen},
          {"width", p.width},
          {"max_gen", p.max_gen},
          {"max_width", p.max_width},
          {"speed_gbs", p.speed_gbs}};
}
PcieLink pcie_from(const json& j) {
  // speed_gbs came with the hwloc route; documents written before it have none.
  return {j.at("gen").get<int>(), j.at("width").get<int>(), j.at("max_gen").get<int>(), j.at("max_width").get<int>(),
          j.value("speed_gbs", 0.0)};
}
json placement_json(const PciPlacement& p) { return {{"host_bridge", p.host_bridge}, {"switches", p.switches}}; }
PciPlacement placement_from(const json& j) {
  return {j.at("host_bridge").get<std::string>(), j.at("switches").get<std::vector<std::string>>()};
}

json gpu_json(const Gpu& g) {
  json nvlinks = json::array();
  for (const NvLink& l : g.nvlinks)
    nvlinks.push_back({{"target", l.target}, {"count", l.count}, {"tclass", l.target_class}});
  return {{"index", g.index},
          {"name", g.name},
          {"bus_id", g.bus_id},
          {"pci_device", g.pci_device},
          {"sm", g.sm},
          {"rank", g.rank},
          {"gdr", g.gdr},
          {"numa_node", g.numa_node},
          {"cpu_affinity", g.cpu_affinity},
          {"gpu_numa_id", g.gpu_numa_id},
          {"pcie", pcie_json(g.pcie)},
          {"nvlinks", nvlinks},
          {"pci", placement_json(g.pci)}};
}
Gpu gpu_from(const json& j) {
  Gpu g;
  g.index = j.at("index").get<int>();
  g.name = j.at("name").get<std::string>();
  g.bus_id = j.at("bus_id").get<std::string>();
  g.pci_device = j.at("pci_device").get<std::string>();
  g.sm = j.at("sm").get<int>();
  g.rank = j.at("rank").get<int>();
  g.gdr = j.at("gdr").get<bool>();
  g.numa_node = j.at("numa_node").get<int>();
  g.cpu_affinity = j.at("cpu_affinity").get<std::string>();
  g.gpu_numa_id = j.at("gpu_numa_id").get<int>();
  g.pcie = pcie_from(j.at("pcie"));
  for (const json& l : j.at("nvlinks"))
    g.nvlinks.push_back(
        {l.at("target").get<std::string>(), l.at("count").get<int>(), l.at("tclass").get<std::string>()});
  g.pci = placement_from(j.at("pci"));
  return g;
}

json nic_json(const Nic& n) {
  return {{"name", n.name}, {"bus_id", n.bus_id},        {"numa_node", n.numa_node},    {"rate_gbps", n.rate_gbps},
          {"port", n.port}, {"state", n.state},          {"link_layer", n.link_layer},  {"guid", n.guid},
          {"gdr", n.gdr},   {"pcie", pcie_json(n.pcie)}, {"pci", placement_json(n.pci)}};
}
Nic nic_from(const json& j) {
  Nic n;
  n.name = j.at("name").get<std::string>();
  n.bus_id = j.at("bus_id").get<std::string>();
  n.numa_node = j.at("numa_node").get<int>();
  n.rate_gbps = j.at("rate_gbps").get<double>();
  n.port = j.at("port").get<int>();
  n.state = j.at("state").get<std::string>();
  n.link_layer = j.at("link_layer").get<std::string>();
  n.guid = j.at("guid").get<std::string>();
  n.gdr = j.at("gdr").get<bool>();
  n.pcie = pcie_from(j.at("pcie"));
  n.pci = placement_from(j.at("pci"));
  return n;
}

}  // namespace

json to_json(const Topology& topo) {
  json doc;
  doc["schema"] = kSchema;
  doc["source"] = topo.source;
  doc["discovery"] = topo.discovery;
  doc["hostname"] = topo.hostname;
  doc["fingerprint"] = topology_fingerprint(topo);
  const CpuInfo& c = topo.cpu;
  doc["cpu"] = {{"vendor", c.vendor}, {"model_name", c.model_name}, {"arch", c.arch},   {"family", c.family},
                {"model", c.model},   {"packages", c.packages},     {"cores", c.cores}, {"threads", c.threads}};
  doc["numa"] = json::array();
  for (const NumaNode& n : topo.numa)
    doc["numa"].push_back({{"id", n.id}, {"memory_bytes", n.memory_bytes}, {"cpulist", n.cpulist}});
  doc["gpus"] = json::array();
  for (const Gpu& g : topo.gpus) doc["gpus"].push_back(gpu_json(g));
  doc["nics"] = json::array();
  for (const Nic& n : topo.nics) doc["nics"].push_back(nic_json(n));
  json devices = json::array();
  json matrix = json::array();
  for (std::size_t a = 0; a < topo.device_count(); ++a) {
    devices.push_back(topo.device_label(a));
    json row = json::array();
    for (std::size_t b = 0; b < topo.device_count(); ++b) row.push_back(to_string(topo.link(a, b)));
    matrix.push_back(std::move(row));
  }
  doc["devices"] = std::move(devices);
  doc["matrix"] = std::move(matrix);
  return doc;
}

Topology from_json(const json& doc) {
  try {
    if (!doc.is_object() || doc.value("schema", "") != kSchema)
      throw UsageError(fmt::format("topology JSON: expected \"schema\": \"{}\"", kSchema));
    Topology topo;
    topo.source = doc.at("source").get<std::string>();
    topo.discovery = doc.value("discovery", "");  // absent in documents from before the field
    topo.hostname = doc.at("hostname").get<std::string>();
    const json& c = doc.at("cpu");
    topo.cpu = {c.at("vendor").get<std::string>(), c.at("model_name").get<std::string>(),
                c.at("arch").get<std::string>(),   c.at("family").get<int>(),
                c.at("model").get<int>(),          c.at("packages").get<int>(),
                c.at("cores").get<int>(),          c.at("threads").get<int>()};
    for (const json& n : doc.at("numa"))
      topo.numa.push_back(
          {n.at("id").get<int>(), n.at("memory_bytes").get<std::uint64_t>(), n.at("cpulist").get<std::string>()});
    for (const json& g : doc.at("gpus")) topo.gpus.push_back(gpu_from(g));
    for (const json& n : doc.at("nics")) topo.nics.push_back(nic_from(n));
    topo.reset_links();
    const json& matrix = doc.at("matrix");
    const std::size_t n = topo.device_count();
    if (!matrix.is_array() || matrix.size() != n)
      throw UsageError(fmt::format("topology JSON: matrix has {} rows for {} devices", matrix.size(), n));
    for (std::size_t a = 0; a < n; ++a) {
      if (!matrix[a].is_array() || matrix[a].size() != n)
        throw UsageError(fmt::format("topology JSON: matrix row {} does not have {} cells", a, n));
      for (std::size_t b = 0; b < n; ++b) topo.link(a, b) = parse_link(matrix[a][b].get<std::string>());
    }
    return topo;
  } catch (const json::exception& e) {
    throw UsageError(fmt::format("topology JSON: {}", e.what()));
  }
}

}  // namespace gcb::topo
