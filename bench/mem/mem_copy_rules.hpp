// What decides how a GPU copy case of `gcbench mem` runs, without CUDA so it is tested anywhere:
// which SM copies over host memory would measure something else and are WAIVED, which copies
// block the host (timed without the latch), and the PCIe peak a host copy is compared with.
#pragma once

#include <optional>
#include <string>

#include "core/buffer.hpp"
#include "core/gpu.hpp"
#include "core/nvml.hpp"

namespace gcb::bench {

enum class CopyPath { h2d, d2h, d2d };
enum class CopyEngine { ce, sm };
enum class NumaPlacement { none, local, remote };

struct CopySpec {
  CopyPath path = CopyPath::h2d;
  CopyEngine engine = CopyEngine::ce;
  HostMemory memory = HostMemory::pinned;
  NumaPlacement numa = NumaPlacement::none;
  bool bidirectional = false;
  size_t bytes = 0;
};

// Why an SM copy kernel cannot measure this host↔device path here ("" when it can). Pageable
// memory is only read over the link when the GPU walks the host's page tables (ATS,
// cudaDevAttrPageableMemoryAccessUsesHostPageTables = 1); with HMM alone the pages migrate to the
// GPU on first touch and the kernel measures HBM.
std::string sm_host_copy_waiver(const gpu::DeviceInfo& d, const CopySpec& s);

// A copy-engine copy from or to pageable memory is staged through a pinned buffer by the driver
// and returns to the host only when (most of) it is done: cudaMemcpyAsync is host-synchronous
// there (CUDA Runtime API, "API synchronization behavior").
bool copy_is_host_synchronous(const CopySpec& s);

// The PCIe link's peak per direction at its maximum generation and width: an idle link trains
// down (the current generation read after a run is often Gen1), the maximum is what a copy gets.
// Falls back to the current values, said so in `source`, when NVML has no maximum.
struct LinkPeak {
  std::optional<double> gbps;
  std::string source;
};
LinkPeak pcie_link_peak(const nvml::DeviceStatic& s);

}  // namespace gcb::bench
