// Identity and verdicts on a topology: the fingerprint that keys results to a machine shape,
// the health checks `gcbench topo` warns about, and the expected-vs-found comparison behind
// `--expect FILE` (topology.hpp).
#include <algorithm>
#include <cstdint>
#include <set>

#include <fmt/format.h>

#include "core/hash.hpp"
#include "topology/detail.hpp"
#include "topology/topology.hpp"

namespace gcb::topo {
namespace {

// Collapses runs of whitespace so "NVIDIA  H100" and "NVIDIA H100 " hash alike.
std::string canonical_name(std::string_view name) {
  std::string out;
  for (const std::string& word : detail::split_whitespace(name)) {
    if (!out.empty()) out += ' ';
    out += word;
  }
  return out;
}

std::string pcie_text(const PcieLink& p) {
  return fmt::format("Gen{} x{} (max Gen{} x{})", p.gen, p.width, p.max_gen, p.max_width);
}

void check_pcie(const std::string& device, const PcieLink& p, std::vector<std::string>& out) {
  if (p.gen > 0 && p.max_gen > 0 && p.gen < p.max_gen)
    out.push_back(
        fmt::format("{}: PCIe link runs at Gen{} below its maximum Gen{} (GPUs lower the "
                    "generation when idle: re-check under load)",
                    device, p.gen, p.max_gen));
  if (p.width > 0 && p.max_width > 0 && p.width < p.max_width)
    out.push_back(fmt::format("{}: PCIe link runs at x{} below its maximum width x{} ({})", device, p.width,
                              p.max_width, pcie_text(p)));
}

// A GPU's NVLink total: from the NCCL link list when known, else the widest NV# in its row.
int nvlink_total(const Topology& topo, std::size_t g) {
  int total = 0;
  for (const NvLink& l : topo.gpus[g].nvlinks) total += l.count;
  if (total > 0) return total;
  for (std::size_t b = 0; b < topo.gpus.size(); ++b)
    if (topo.link(g, b).type == PathType::NV) total = std::max(total, topo.link(g, b).nvlinks);
  return total;
}

}  // namespace

std::string topology_fingerprint(const Topology& topo) {
  std::string canon = "gcbench.topology/1\n";
  canon += fmt::format("numa {}\n", topo.numa.size());
  for (const Gpu& g : topo.gpus) canon += fmt::format("gpu {}\n", canonical_name(g.name));
  for (const Nic& n : topo.nics)
    canon += fmt::format("nic {} {}\n", canonical_name(n.name), detail::format_double(n.rate_gbps));
  for (std::size_t a = 0; a < topo.device_count(); ++a) {
    for (std::size_t b = 0; b < topo.device_count(); ++b) canon += fmt::format("{} ", to_string(topo.link(a, b)));
    canon += '\n';
  }
  return fmt::format("{:016x}", fnv1a64(canon));
}

std::vector<std::string> health_checks(const Topology& topo) {
  std::vector<std::string> out;
  const std::size_t g = topo.gpus.size();
  for (std::size_t i = 0; i < g; ++i) check_pcie(topo.device_label(i), topo.gpus[i].pcie, out);
  for (std::size_t k = 0; k < topo.nics.size(); ++k)
    check_pcie(fmt::format("{} ({})", topo.device_label(g + k), topo.nics[k].name), topo.nics[k].pcie, out);

  // GPUDirect RDMA wants a NIC behind the same PCIe switch (PIX/PXB); further away the traffic
  // crosses the CPU root complex.
  if (g > 0 && topo.nics.empty()) out.push_back("no NICs found: inter-node traffic cannot use GPUDirect RDMA");
  for (std::size_t i = 0; i < g && !topo.nics.empty(); ++i) {
    bool close = false;
    for (std::size_t k = 0; k < topo.nics.size(); ++k) {
      const PathType t = topo.link(i, g + k).type;
      close = close || t == PathType::PIX || t == PathType::PXB;
    }
    if (!close)
      out.push_back(
          fmt::format("{}: no NIC at PIX or PXB (GPUDirect RDMA traffic crosses the "
                      "host bridge)",
                      topo.device_label(i)));
  }

  for (std::size_t a = 0; a < g; ++a)
    for (std::size_t b = a + 1; b < g; ++b) {
      const Link ab = topo.link(a, b);
      const Link ba = topo.link(b, a);
      if ((ab.type == PathType::NV || ba.type == PathType::NV) && !(ab == ba))
        out.push_back(fmt::format("{}-{}: asymmetric NVLink ({} one way, {} the other)", topo.device_label(a),
                                  topo.device_label(b), to_string(ab), to_string(ba)));
    }
  std::set<int> totals;
  for (std::size_t i = 0; i < g; ++i) totals.insert(nvlink_total(topo, i));
  if (totals.size() > 1 && *totals.rbegin() > 0) {
    std::string detail_text;
    for (std::size_t i = 0; i < g; ++i)
      detail_text += fmt::format("{}{}={}", i ? ", " : "", topo.device_label(i), nvlink_total(topo, i));
    out.push_back(fmt::format("GPUs have different NVLink totals ({}): a link may be down", detail_text));
  }
  return out;
}

std::vector<std::string> compare_topology(const Topology& expected, const Topology& actual) {
  std::vector<std::string> out;
  const auto differ = [&](std::string what, const auto& e, const auto& a) {
    if (!(e == a)) out.push_back(fmt::format("{}: expected {}, found {}", what, e, a));
  };
  differ("NUMA nodes", expected.numa.size(), actual.numa.size());
  differ("GPUs", expected.gpus.size(), actual.gpus.size());
  differ("NICs", expected.nics.size(), actual.nics.size());
  for (std::size_t i = 0; i < std::min(expected.gpus.size(), actual.gpus.size()); ++i) {
    const Gpu& e = expected.gpus[i];
    const Gpu& a = actual.gpus[i];
    const std::string label = fmt::format("GPU{}", i);
    // A side that does not know a field (empty name, NUMA -1) does not count as a difference.
    if (!e.name.empty() && !a.name.empty()) differ(label + " name", e.name, a.name);
    if (e.numa_node >= 0 && a.numa_node >= 0) differ(label + " NUMA node", e.numa_node, a.numa_node);
    if (!e.cpu_affinity.empty() && !a.cpu_affinity.empty())
      differ(label + " CPU affinity", e.cpu_affinity, a.cpu_affinity);
  }
  for (std::size_t k = 0; k < std::min(expected.nics.size(), actual.nics.size()); ++k) {
    const Nic& e = expected.nics[k];
    const Nic& a = actual.nics[k];
    const std::string label = fmt::format("NIC{}", k);
    differ(label + " name", e.name, a.name);
    if (e.rate_gbps > 0 && a.rate_gbps > 0)
      differ(label + " rate (Gb/s)", detail::format_double(e.rate_gbps), detail::format_double(a.rate_gbps));
  }
  // The matrix only where both have the device, so one missing GPU is one line, not dozens.
  const std::size_t common_gpus = std::min(expected.gpus.size(), actual.gpus.size());
  const std::size_t common = common_gpus + std::min(expected.nics.size(), actual.nics.size());
  const auto device = [&](const Topology& t, std::size_t i) {
    return i < common_gpus ? i : t.gpus.size() + (i - common_gpus);
  };
  for (std::size_t a = 0; a < common; ++a)
    for (std::size_t b = a + 1; b < common; ++b) {
      const Link e_ab = expected.link(device(expected, a), device(expected, b));
      const Link e_ba = expected.link(device(expected, b), device(expected, a));
      const Link a_ab = actual.link(device(actual, a), device(actual, b));
      const Link a_ba = actual.link(device(actual, b), device(actual, a));
      const std::string name =
          fmt::format("{}-{}", expected.device_label(device(expected, a)), expected.device_label(device(expected, b)));
      differ(name, to_string(e_ab), to_string(a_ab));
      // The reverse direction only matters when one side is asymmetric.
      if (!(e_ba == e_ab) || !(a_ba == a_ab))
        differ(fmt::format("{} (reverse)", name), to_string(e_ba), to_string(a_ba));
    }
  return out;
}

}  // namespace gcb::topo
