// The cases the per-device and intra-node-link stages run, built from the mem, gemm and p2p
// families' own case lists (so they run exactly as `gcbench mem/gemm/p2p` would). Pure
// construction: on a machine without GPUs the GPU lists hold those families' WAIVED cases, which
// lets their choice be tested on any machine.
#pragma once

#include <cstdint>

#include "bench/common/case.hpp"
#include "bench/gemm/gemm.hpp"
#include "bench/mem/mem.hpp"
#include "bench/scan/scan.hpp"

namespace gcb::scan {

// What the per-device stage asks of the mem and gemm families: STREAM triad only (fp32 with
// 16-byte accesses on a GPU, fp64 on the host), no peers; one square GEMM (bf16 on a GPU, fp32
// sgemm on the host) without autotuning.
bench::MemOptions device_mem_options(bool gpu, const ScanOptions& o);
bench::GemmOptions device_gemm_options(bool gpu, const ScanOptions& o);

struct DeviceCases {
  bench::CaseList memory;  // STREAM triad: fp32 HBM on a GPU, fp64 host DRAM on a CPU-only node
  bench::CaseList gemm;    // bf16 GEMM burn on a GPU, fp32 sgemm on the host
};
// `gpu` ≥ 0: that GPU; -1: the host.
DeviceCases device_cases(int gpu, const ScanOptions& o, uint64_t seed);
// Copy bandwidth between every pair of the node's `gpus` GPUs, uni- and bidirectional, copy
// engine and SM copies, peer access on (the NVLink/PCIe path as NCCL uses it).
bench::CaseList link_cases(int gpus, const ScanOptions& o, uint64_t seed);

}  // namespace gcb::scan
