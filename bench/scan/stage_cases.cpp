// The cases of scan's per-device and intra-node-link stages (stage_cases.hpp), built from the mem, gemm and p2p
// families' own options and case lists (device_cases, link_cases).
#include "bench/scan/stage_cases.hpp"

#include <string>

#include "bench/p2p/p2p.hpp"

namespace gcb::scan {

bench::MemOptions device_mem_options(bool gpu, const ScanOptions& o) {
  bench::MemOptions mem;
  mem.groups = {"stream"};
  mem.kernels = {kernels::StreamOp::triad};
  mem.dtypes = {gpu ? DType::f32 : DType::f64};
  mem.vector_bytes = {16};
  mem.peers = false;
  mem.size = o.device_size;
  bench::validate(mem);
  return mem;
}

bench::GemmOptions device_gemm_options(bool gpu, const ScanOptions& o) {
  const int size = o.gemm_size > 0 ? o.gemm_size : (gpu ? 8192 : 1024);
  bench::GemmOptions gemm;
  gemm.m = gemm.n = gemm.k = {std::to_string(size)};
  gemm.dtypes = {gpu ? DType::bf16 : DType::f32};
  gemm.tune = false;
  bench::validate(gemm);
  return gemm;
}

DeviceCases device_cases(int gpu, const ScanOptions& o, uint64_t seed) {
  const bench::MemOptions mem = device_mem_options(gpu >= 0, o);
  const bench::GemmOptions gemm = device_gemm_options(gpu >= 0, o);
  DeviceCases c;
  if (gpu >= 0) {
    bench::DeviceSelection sel;
    sel.gpu_requested = true;
    sel.gpus = {gpu};
    c.memory = bench::gpu_mem_cases(mem, sel, seed);
    c.gemm = bench::gpu_gemm_cases(gemm, sel, seed);
  } else {
    c.memory = bench::host_mem_cases(mem, seed);
    c.gemm = bench::host_gemm_cases(gemm, seed);
  }
  return c;
}

bench::CaseList link_cases(int gpus, const ScanOptions& o, uint64_t seed) {
  bench::P2pOptions p2p;
  p2p.modes = {"device"};
  p2p.size = o.link_size;
  std::vector<int> all;
  for (int i = 0; i < gpus; ++i) all.push_back(i);
  bench::CaseList kept;
  for (auto& c : bench::p2p_device_cases(p2p, all, gpus >= 2 ? "" : "needs two GPUs", seed)) {
    const bool bandwidth = c->key() == "p2p/bandwidth" || c->key() == "p2p/bidir_bandwidth";
    if (bandwidth && c->params().value("peer_access", "") == "on") kept.push_back(std::move(c));
  }
  return kept;
}

}  // namespace gcb::scan
