// The PCI tree both topology discovery routes are tested on (a fake /sys in test_topology.cpp, an
// hwloc XML in test_topology_hwloc.cpp): host bridge pci0000:00 -> root port 00:01.0 -> switch
// (upstream 01:00.0, downstream 02:00.0 and 02:01.0) with GPU0 03:00.0 and the NIC mlx5_0 04:00.0
// below it, and GPU1 05:00.0 on root port 00:02.0. Both routes must give these placements and paths.
#pragma once

#include <gtest/gtest.h>

#include "topology/topology.hpp"

namespace gcb::topo {

inline void expect_fake_pci_tree_paths(const Topology& t) {
  ASSERT_EQ(t.gpus.size(), 2U);
  ASSERT_EQ(t.nics.size(), 1U);
  EXPECT_EQ(t.nics[0].name, "mlx5_0");
  EXPECT_EQ(t.nics[0].bus_id, "0000:04:00.0");
  EXPECT_EQ(t.gpus[0].bus_id, "0000:03:00.0");
  // A switch is named by its upstream port; the root ports are not switches.
  EXPECT_EQ(t.gpus[0].pci, (PciPlacement{"pci0000:00", {"0000:01:00.0"}}));
  EXPECT_EQ(t.nics[0].pci, (PciPlacement{"pci0000:00", {"0000:01:00.0"}}));
  EXPECT_EQ(t.gpus[1].pci, (PciPlacement{"pci0000:00", {}}));
  EXPECT_EQ(t.link(0, 2).type, PathType::PIX);  // GPU0 and the NIC share the switch
  EXPECT_EQ(t.link(1, 2).type, PathType::PHB);  // GPU1 reaches it through the host bridge
  EXPECT_EQ(t.link(0, 1).type, PathType::PHB);  // no NVLink information without NVML
}

}  // namespace gcb::topo
