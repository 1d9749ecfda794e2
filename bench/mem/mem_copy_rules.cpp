// The GPU copy rules of `gcbench mem` in plain C++ (mem_copy_rules.hpp): sm_host_copy_waiver, copy_is_host_synchronous
// and pcie_link_peak, the PCIe peak a host copy is compared with.
#include "bench/mem/mem_copy_rules.hpp"

#include <fmt/format.h>

#include "reports/specs.hpp"

namespace gcb::bench {

std::string sm_host_copy_waiver(const gpu::DeviceInfo& d, const CopySpec& s) {
  if (s.path == CopyPath::d2d || s.engine != CopyEngine::sm) return {};
  if (!d.unified_addressing) return "SM copies to host memory need unified addressing";
  if (s.memory != HostMemory::pageable) return {};
  if (!d.pageable_memory_access)
    return "SM copies from pageable memory need pageable memory access (HMM/ATS), absent here";
  if (!d.pageable_memory_uses_host_page_tables)
    return "SM copies over pageable memory would measure HBM: without ATS "
           "(cudaDevAttrPageableMemoryAccessUsesHostPageTables = 0) HMM migrates the pages to the GPU";
  return {};
}

bool copy_is_host_synchronous(const CopySpec& s) {
  return s.path != CopyPath::d2d && s.engine == CopyEngine::ce && s.memory == HostMemory::pageable;
}

LinkPeak pcie_link_peak(const nvml::DeviceStatic& s) {
  if (s.pcie_gen_max && s.pcie_width_max && *s.pcie_gen_max > 0 && *s.pcie_width_max > 0) {
    const int gen = static_cast<int>(*s.pcie_gen_max), width = static_cast<int>(*s.pcie_width_max);
    return {pcie_gbps(gen, width), fmt::format("pcie:gen{} x{} (max)", gen, width)};
  }
  if (s.pcie_gen_current && s.pcie_width_current) {
    const int gen = static_cast<int>(*s.pcie_gen_current), width = static_cast<int>(*s.pcie_width_current);
    return {pcie_gbps(gen, width), fmt::format("pcie:gen{} x{} (current; NVML has no maximum)", gen, width)};
  }
  return {};
}

}  // namespace gcb::bench
