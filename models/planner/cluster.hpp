// The machine a plan is for: its devices (dense peak of the training precision, memory, memory
// bandwidth), how many share a node, and the two tiers of links between them — intra-node
// (NVLink/NVSwitch; on a CPU host, the rank threads' shared memory) and inter-node (one NIC per
// GPU, as in NVIDIA's reference nodes). Built from the GPU spec table and flags or a topology;
// result files then replace what they measured (calibration.hpp, comm_model.hpp).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "models/model/train_options.hpp"
#include "reports/specs.hpp"
#include "topology/topology.hpp"

namespace gcb::models::planner {

enum class Tier : uint8_t { intra_node, inter_node };
std::string_view tier_name(Tier t);

// A tier as a ring collective sees it, in NCCL's cost model (src/graph/tuning.cc,
// ncclTopoTuneModel): t = base latency + steps × step latency + bytes / algorithm bandwidth, where
// the algorithm bandwidth is the bus bandwidth (nccl-tests' busbw: what each rank's link carries)
// divided by the collective's bus factor.
struct LinkTier {
  double base_latency_s = 0;     // per collective
  double step_latency_s = 0;     // per ring step
  double busbw_bytes_per_s = 0;  // 0 = unknown: the tier's collectives cost nothing (said in the plan)
  std::string source;
};

struct Cluster {
  std::string device = "cpu";  // a spec SKU, or "cpu" (rank threads of this host)
  int gpus = 1;
  int gpus_per_node = 1;
  double peak_flops = 0;  // per device, dense, of the training precision: MFU's denominator
  std::string peak_source;
  double memory_bytes = 0;  // per-device limit
  std::string memory_source;
  double memory_bandwidth = 0;  // B/s per device for element-wise ops and the optimizer; 0 = unknown
  std::string memory_bandwidth_source;
  LinkTier intra, inter;
  // --offload optimizer (ZeRO-Offload): each device's host link, per direction (B/s; host → device
  // and device → host), and the host memory bandwidth one rank's CPU AdamW streams at (B/s). GPU:
  // `mem` results (calibration.hpp) where given, else the spec's PCIe x16 rate and an assumed host
  // triad shared by the node's ranks (kAssumedHostTriad), said in the sources. CPU: a copy within
  // host memory reads and writes each byte (half the rank's bandwidth), the AdamW runs at it.
  double h2d_bandwidth = 0, d2h_bandwidth = 0;
  std::string host_link_source;
  double host_memory_bandwidth = 0;
  std::string host_memory_bandwidth_source;
  // Host memory per node (bytes) that offloaded states and activations may take, shared by the
  // node's ranks; 0 = unknown, not checked (GPU spec sheets do not say a server's DRAM: --host-memory).
  double host_memory_bytes = 0;
  std::string host_memory_source;
  int threads_per_rank = 1;  // cpu: the OpenMP / BLAS threads each rank thread computes with

  bool is_cpu() const { return device == "cpu"; }
  int nodes() const { return (gpus + gpus_per_node - 1) / gpus_per_node; }
};

// NCCL's ring/Simple latencies (src/graph/tuning.cc: baseLat 8.4 µs; hwLat per step NVLink 3.4,
// network 9.6 µs) and NVIDIA's reference node for `spec`: busbw intra = NVLink links × rate per
// direction, capped at 235 GB/s on sm80 as NCCL's model caps it ("if (compCap80) busBw =
// std::min(busBw, 235.0f)"); inter = the node's NIC rate per GPU (spec node_nic_gbps).
// `inter_gbps` / `intra_gbps` > 0 replace the rates (GB/s); a multi-node cluster of a SKU without
// a reference node and no `inter_gbps` is gcb::UsageError.
// A two-socket server's STREAM triad order of magnitude, per node, for the CPU AdamW of GPU plans
// without `mem/host/triad` results (an assumption, said wherever it is used).
inline constexpr double kAssumedHostTriad = 200e9;

struct GpuClusterArgs {
  int gpus = 8, gpus_per_node = 8;
  Precision precision = Precision::bf16;
  double intra_gbps = 0, inter_gbps = 0;
  double memory_limit_bytes = 0;  // 0 = the spec's capacity
};
Cluster gpu_cluster(const GpuSpec& spec, const GpuClusterArgs& a);

// What a node's topology (gcbench topo's JSON, an NCCL XML or `nvidia-smi topo -m`) says about the
// cluster: GPUs per node, their name, NVLinks per GPU (to switches or peers) and the NIC rate per
// GPU (active RDMA/network ports' Gb/s summed, / 8, / GPUs).
struct TopologyFacts {
  int gpus_per_node = 0;
  std::string gpu_name;         // as the driver names it ("NVIDIA H100 80GB HBM3"); "" = unknown
  int nvlinks_per_gpu = 0;      // 0 = none seen
  double nic_gbps_per_gpu = 0;  // GB/s; 0 = no NIC rate known
};
TopologyFacts topology_facts(const topo::Topology& t);

// Rank threads of this host, one per device. Peak, memory bandwidth and links come from the
// calibration; `memory_limit_bytes` 0 = the host's memory divided by the ranks.
Cluster cpu_cluster(int ranks, double memory_limit_bytes);

// The tier of a group of `size` ranks `stride` apart in Megatron order (tp fastest, then dp, then
// pp: a tp group has stride 1, a dp group stride tp, a pp group stride tp·dp): intra-node when the
// groups tile nodes (stride·size divides gpus_per_node), so no group straddles two nodes; else
// inter-node. A group of one rank is intra-node.
Tier group_tier(const Cluster& c, int size, int stride);

}  // namespace gcb::models::planner
