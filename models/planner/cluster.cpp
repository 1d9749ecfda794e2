// The machine a plan is for (cluster.hpp): gpu_cluster from the spec table and flags, cpu_cluster for host rank
// threads, topology_facts read from a topology, and group_tier, the link tier a group of ranks spans.
#include "models/planner/cluster.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>

#include "core/error.hpp"

namespace gcb::models::planner {

std::string_view tier_name(Tier t) { return t == Tier::intra_node ? "intra-node" : "inter-node"; }

namespace {

// NCCL src/graph/tuning.cc, ring algorithm, Simple protocol (the protocol of large messages).
constexpr double kNcclBaseLatency = 8.4e-6;
constexpr double kNcclNvlinkStepLatency = 3.4e-6;
constexpr double kNcclNetStepLatency = 9.6e-6;
constexpr double kNcclSm80BusbwCap = 235e9;

double host_memory_bytes() {
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  return pages > 0 && page > 0 ? static_cast<double>(pages) * static_cast<double>(page) : 0.0;
}

}  // namespace

Cluster gpu_cluster(const GpuSpec& spec, const GpuClusterArgs& a) {
  if (a.gpus < 1 || a.gpus_per_node < 1) throw UsageError("--gpus and --gpus-per-node must be ≥ 1");
  Cluster c;
  c.device = spec.sku;
  c.gpus = a.gpus;
  c.gpus_per_node = std::min(a.gpus_per_node, a.gpus);
  const DType dt = a.precision == Precision::bf16 ? DType::bf16 : DType::f32;
  const std::optional<double> tflops = peak_tflops(spec, dt);
  if (!tflops) throw UsageError(fmt::format("{}: no dense {} peak in the spec table", spec.sku, dtype_name(dt)));
  c.peak_flops = *tflops * 1e12;
  c.peak_source = fmt::format("spec:{} dense {}", spec.sku, dtype_name(dt));
  c.memory_bytes = a.memory_limit_bytes > 0 ? a.memory_limit_bytes : spec.memory_gib * 1024.0 * 1024 * 1024;
  c.memory_source =
      a.memory_limit_bytes > 0 ? "flag:--memory-limit" : fmt::format("spec:{} {} GiB", spec.sku, spec.memory_gib);
  c.memory_bandwidth = spec.hbm_gbps * 1e9;
  c.memory_bandwidth_source = fmt::format("spec:{} HBM {} GB/s", spec.sku, spec.hbm_gbps);
  if (const std::optional<double> pcie = pcie_gbps(spec.pcie_gen, 16)) {
    c.h2d_bandwidth = c.d2h_bandwidth = *pcie * 1e9;
    c.host_link_source = fmt::format("spec:{} PCIe Gen{} x16 {} GB/s per direction (no mem/copy results)", spec.sku,
                                     spec.pcie_gen, *pcie);
  } else {
    c.host_link_source = fmt::format("spec:{} has no PCIe generation: host copies not costed", spec.sku);
  }
  c.host_memory_bandwidth = kAssumedHostTriad / c.gpus_per_node;
  c.host_memory_bandwidth_source =
      fmt::format("ASSUMED {} GB/s host triad per node / {} ranks (no mem/host/triad results)", kAssumedHostTriad / 1e9,
                  c.gpus_per_node);

  c.intra.base_latency_s = c.inter.base_latency_s = kNcclBaseLatency;
  c.intra.step_latency_s = kNcclNvlinkStepLatency;
  c.inter.step_latency_s = kNcclNetStepLatency;
  if (a.intra_gbps > 0) {
    c.intra.busbw_bytes_per_s = a.intra_gbps * 1e9;
    c.intra.source = "flag:--intra-gbps";
  } else {
    const double nvlink = spec.nvlink_links * spec.nvlink_link_gbps * 1e9;
    const bool sm80 = spec.nvlink_gen == 3;
    c.intra.busbw_bytes_per_s = sm80 ? std::min(nvlink, kNcclSm80BusbwCap) : nvlink;
    c.intra.source = fmt::format("spec:{} NVLink {} x {} GB/s{}", spec.sku, spec.nvlink_links, spec.nvlink_link_gbps,
                                 sm80 ? ", NCCL's sm80 cap 235 GB/s" : "");
  }
  if (a.inter_gbps > 0) {
    c.inter.busbw_bytes_per_s = a.inter_gbps * 1e9;
    c.inter.source = "flag:--inter-gbps";
  } else if (spec.node_nic_gbps) {
    c.inter.busbw_bytes_per_s = *spec.node_nic_gbps * 1e9;
    c.inter.source = fmt::format("spec:{} reference node, {} GB/s per GPU", spec.sku, *spec.node_nic_gbps);
  } else if (c.nodes() > 1) {
    throw UsageError(
        fmt::format("{} has no reference node in the spec table: give --inter-gbps (NIC GB/s per GPU)", spec.sku));
  }
  c.intra.source += "; latency NCCL ring/Simple model";
  c.inter.source += "; latency NCCL ring/Simple model";
  return c;
}

Cluster cpu_cluster(int ranks, double memory_limit_bytes) {
  if (ranks < 1) throw UsageError("--gpus (rank threads) must be ≥ 1");
  Cluster c;
  c.device = "cpu";
  c.gpus = c.gpus_per_node = ranks;
  c.memory_bytes = memory_limit_bytes > 0 ? memory_limit_bytes : host_memory_bytes() / ranks;
  c.memory_source = memory_limit_bytes > 0 ? "flag:--memory-limit" : "host memory / ranks";
  return c;
}

TopologyFacts topology_facts(const topo::Topology& t) {
  TopologyFacts f;
  f.gpus_per_node = static_cast<int>(t.gpus.size());
  if (!t.gpus.empty()) f.gpu_name = t.gpus.front().name;
  for (const topo::Gpu& g : t.gpus) {
    int links = 0;
    for (const topo::NvLink& l : g.nvlinks) links += l.count;
    f.nvlinks_per_gpu = std::max(f.nvlinks_per_gpu, links);
  }
  // Without the NCCL XML's per-link list, the widest NV# cell of the matrix row (nvidia-smi).
  if (f.nvlinks_per_gpu == 0 && !t.links.empty()) {
    for (size_t a = 0; a < t.gpus.size(); ++a) {
      int links = 0;
      for (size_t b = 0; b < t.gpus.size(); ++b)
        if (a != b && t.link(a, b).type == topo::PathType::NV) links = std::max(links, t.link(a, b).nvlinks);
      f.nvlinks_per_gpu = std::max(f.nvlinks_per_gpu, links);
    }
  }
  double gbits = 0;
  for (const topo::Nic& n : t.nics) {
    const bool down = n.state == "DOWN" || n.state == "down";
    if (!down) gbits += n.rate_gbps;
  }
  if (f.gpus_per_node > 0) f.nic_gbps_per_gpu = gbits / 8.0 / f.gpus_per_node;
  return f;
}

Tier group_tier(const Cluster& c, int size, int stride) {
  if (size <= 1) return Tier::intra_node;
  const int64_t span = static_cast<int64_t>(stride) * size;
  return span <= c.gpus_per_node && c.gpus_per_node % span == 0 ? Tier::intra_node : Tier::inter_node;
}

}  // namespace gcb::models::planner
