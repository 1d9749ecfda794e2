// NUMA binding of host buffers (core/buffer.hpp): through libnuma's mbind where built with it.
#include <gtest/gtest.h>

#include <string>

#include "core/buffer.hpp"
#include "core/error.hpp"
#include "gcb/config.hpp"
#if GCB_HAVE_NUMA
#include <numaif.h>
#endif

namespace gcb {
namespace {

TEST(NumaBinding, NodeZeroIsBoundOrTheReasonIsGiven) {
  std::string reason;
  if (!numa_binding_available(0, &reason)) {
    EXPECT_FALSE(reason.empty());
    GTEST_SKIP() << "NUMA binding unavailable here: " << reason;
  }
  HostBuffer b(1 << 20, HostMemory::pageable, 0);
  ASSERT_NE(b.data(), nullptr);
#if GCB_HAVE_NUMA
  // The kernel reports the policy of the buffer's pages: MPOL_BIND to node 0 alone.
  int mode = -1;
  unsigned long mask[16] = {};
  ASSERT_EQ(get_mempolicy(&mode, mask, 16 * 8 * sizeof(unsigned long), b.data(), MPOL_F_ADDR), 0);
  EXPECT_EQ(mode, MPOL_BIND);
  EXPECT_EQ(mask[0], 1ul);
#endif
}

TEST(NumaBinding, NodeThatDoesNotExistIsRefused) {
  std::string reason;
  EXPECT_FALSE(numa_binding_available(4000, &reason));
#if GCB_HAVE_NUMA
  EXPECT_NE(reason.find("does not exist"), std::string::npos) << reason;
#else
  EXPECT_NE(reason.find("libnuma"), std::string::npos) << reason;
#endif
  EXPECT_THROW(HostBuffer(1 << 20, HostMemory::pageable, 4000), Fault);
}

}  // namespace
}  // namespace gcb
