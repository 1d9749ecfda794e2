// Vendor peaks per GPU SKU (reports/data/gpu_specs.json, embedded at build time, each entry with
// its sources), plus peaks derived from the device itself where possible. Every throughput the
// suite reports is also given as % of one of these.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/dtype.hpp"

namespace gcb {

struct GpuSpec {
  std::string sku;
  std::vector<std::string> match;  // substrings of the CUDA device name
  int sm_count = 0;
  double hbm_gbps = 0;                                                         // GB/s
  std::optional<double> fp64, fp64_tensor, fp32, tf32, bf16, fp16, fp8, int8;  // TFLOP/s (TOPS for int8)
  int nvlink_gen = 0, nvlink_links = 0;
  double nvlink_link_gbps = 0;  // per link, per direction
  int pcie_gen = 0;
  double memory_gib = 0;                // datasheet capacity (GiB)
  std::optional<double> node_nic_gbps;  // inter-node NIC GB/s per GPU per direction in the vendor's 8-GPU node
  std::string source, node_source;
};

const std::vector<GpuSpec>& gpu_specs();
// First SKU whose match string occurs in `device_name` ("NVIDIA H100 80GB HBM3" → H100 SXM5).
std::optional<GpuSpec> find_gpu_spec(std::string_view device_name);
// The SKU a user names (`--gpu a100-sxm4-80gb`, `H100 SXM`, `h200`): case-insensitive, spaces,
// hyphens and underscores alike; every word of `name` must begin a word of the SKU or of one of
// its match strings. gcb::UsageError naming the candidates when none or several SKUs match.
GpuSpec gpu_spec_by_name(std::string_view name);
// The SKU as a user types it: lower case, words joined by hyphens ("h100-sxm5-80gb"); the name
// errors list and suggest (with the closest within 2 edits of a key or its leading words).
std::string gpu_spec_key(const GpuSpec& spec);
// Dense tensor-core (or FP32/FP64 pipe) peak for dtype in TFLOP/s; fp64 uses the tensor rate.
std::optional<double> peak_tflops(const GpuSpec& spec, DType t);

// HBM peak from the device: 2 (double data rate) × memory clock × bus width / 8, in GB/s
// (BabelStream's formula, UoB-HPC/BabelStream).
double derived_hbm_gbps(double mem_clock_mhz, int bus_width_bits);
// PCIe x16 per direction after encoding, GB/s: Gen3 15.75, Gen4 31.5, Gen5 63.0, Gen6 121
// (NVIDIA H100 datasheet; NVLink 4: 25 GB/s per link per direction), scaled by width/16.
std::optional<double> pcie_gbps(int gen, int width);

}  // namespace gcb
