// The links of this host that `gcbench p2p` results are compared with: the live topology (sysfs
// + NVML, topology) read once, the NVLink per-link rate from the spec table. Every
// function returns an unknown LinkRate rather than guessing.
#pragma once

#include "bench/p2p/p2p.hpp"

namespace gcb::bench {

// GPU src → GPU dst (CUDA indices). Peer access on: NV# × per-link rate when the pair is
// NVLink-connected, else the slower of the two PCIe links. Off: copies are staged through host
// memory, so the slower PCIe link bounds them.
LinkRate device_pair_link(int src, int dst, bool peer_access);
// GPU ↔ host: the GPU's PCIe link at its maximum generation and width (an idle link trains
// down; the maximum is what a copy gets).
LinkRate device_host_link(int gpu);
// The fastest active RDMA/network port of this host (InfiniBand port rate / 8).
LinkRate host_network_link();

}  // namespace gcb::bench
