// The decisions of mem's GPU copy cases (bench/mem/mem_copy_rules.hpp) on described devices: which
// SM copies over host memory are WAIVED, which copies are timed without the latch, and the PCIe
// peak a host copy is compared with.
#include <gtest/gtest.h>

#include "bench/mem/mem_copy_rules.hpp"

namespace gcb::bench {
namespace {

gpu::DeviceInfo device(bool pageable_access, bool host_page_tables) {
  gpu::DeviceInfo d;
  d.unified_addressing = true;
  d.pageable_memory_access = pageable_access;
  d.pageable_memory_uses_host_page_tables = host_page_tables;
  return d;
}

CopySpec sm_copy(HostMemory m, CopyPath p = CopyPath::h2d) {
  CopySpec s;
  s.path = p;
  s.engine = CopyEngine::sm;
  s.memory = m;
  return s;
}

TEST(MemCopyRules, SmCopyOverPageableMemoryNeedsHostPageTables) {
  // HMM (x86 with a recent driver): pageable access works but migrates pages: waived.
  const auto hmm = sm_host_copy_waiver(device(true, false), sm_copy(HostMemory::pageable));
  EXPECT_NE(hmm.find("would measure HBM"), std::string::npos) << hmm;
  // ATS (Grace Hopper): the GPU reads host memory in place: measured.
  EXPECT_EQ(sm_host_copy_waiver(device(true, true), sm_copy(HostMemory::pageable)), "");
  EXPECT_NE(sm_host_copy_waiver(device(false, false), sm_copy(HostMemory::pageable, CopyPath::d2h)), "");
  // Pinned and registered memory are mapped: always measured.
  EXPECT_EQ(sm_host_copy_waiver(device(false, false), sm_copy(HostMemory::pinned)), "");
  EXPECT_EQ(sm_host_copy_waiver(device(false, false), sm_copy(HostMemory::registered)), "");
  // Within the device, and for copy engines, host page tables do not matter.
  EXPECT_EQ(sm_host_copy_waiver(device(false, false), sm_copy(HostMemory::pageable, CopyPath::d2d)), "");
  CopySpec ce = sm_copy(HostMemory::pageable);
  ce.engine = CopyEngine::ce;
  EXPECT_EQ(sm_host_copy_waiver(device(false, false), ce), "");
}

TEST(MemCopyRules, PageableCopyEngineCopiesAreHostSynchronous) {
  CopySpec s;
  s.engine = CopyEngine::ce;
  s.memory = HostMemory::pageable;
  for (CopyPath p : {CopyPath::h2d, CopyPath::d2h}) {
    s.path = p;
    EXPECT_TRUE(copy_is_host_synchronous(s));
  }
  s.memory = HostMemory::pinned;
  EXPECT_FALSE(copy_is_host_synchronous(s));
  s.memory = HostMemory::registered;
  EXPECT_FALSE(copy_is_host_synchronous(s));
  // An SM kernel never blocks the host, whatever memory it reads.
  EXPECT_FALSE(copy_is_host_synchronous(sm_copy(HostMemory::pageable)));
}

TEST(MemCopyRules, PciePeakUsesTheMaximumGenerationAndWidth) {
  nvml::DeviceStatic s;
  s.pcie_gen_current = 1;  // an idle H100 link read after the run
  s.pcie_width_current = 16;
  s.pcie_gen_max = 5;
  s.pcie_width_max = 16;
  const LinkPeak p = pcie_link_peak(s);
  ASSERT_TRUE(p.gbps.has_value());
  EXPECT_DOUBLE_EQ(*p.gbps, 63.0);
  EXPECT_EQ(p.source, "pcie:gen5 x16 (max)");
  // Without a maximum, the current values, labelled as such.
  s.pcie_gen_max.reset();
  s.pcie_gen_current = 4;
  const LinkPeak cur = pcie_link_peak(s);
  EXPECT_DOUBLE_EQ(*cur.gbps, 31.5);
  EXPECT_NE(cur.source.find("current"), std::string::npos);
  EXPECT_FALSE(pcie_link_peak(nvml::DeviceStatic{}).gbps.has_value());
}

}  // namespace
}  // namespace gcb::bench
