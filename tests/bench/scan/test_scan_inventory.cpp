// Stage 1 of `gcbench scan`: inventories from saved topology dumps (a real NCCL XML and a copy
// with two faults, tests/fixtures/scan/README.md) and from run contexts; the majority rule.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "bench/scan/inventory.hpp"
#include "topology/topology.hpp"

namespace gcb::scan {
namespace {

const char* kGood = "tests/fixtures/topology/nccl-topo_8xh100-vm_ibm-cloud.xml";
const char* kFaulty = "tests/fixtures/scan/nccl-topo_8xh100-gpu3-gen4-nic2-100g.xml";

TEST(ScanInventory, FieldsOfATopology) {
  const Inventory inv = inventory_from_topology(topo::load_topology(kGood));
  EXPECT_EQ(inv.at("gpu.count"), "8");
  EXPECT_EQ(inv.at("nic.count"), "8");
  EXPECT_EQ(inv.at("gpu3.pcie"), "gen5");  // the VM's dump gives no width
  EXPECT_EQ(inv.at("gpu0.nvlinks"), "18");
  EXPECT_EQ(inv.at("nic[mlx5_2].rate"), "200 Gb/s");
  EXPECT_EQ(inv.at("topology.fingerprint").size(), 16u);
}

TEST(ScanInventory, TheNodeThatDiffersFromTheMajorityIsNamed) {
  const Inventory good = inventory_from_topology(topo::load_topology(kGood));
  const Inventory faulty = inventory_from_topology(topo::load_topology(kFaulty));
  const auto fs = judge_inventory({"a", "b", "c"}, {good, good, faulty});
  ASSERT_EQ(fs.size(), 3u);
  EXPECT_EQ(fs[0].verdict, Verdict::ok);
  EXPECT_EQ(fs[0].evidence, fmt::format("{} fields match the majority", good.size()));
  EXPECT_EQ(fs[1].verdict, Verdict::ok);
  EXPECT_EQ(fs[2].verdict, Verdict::slow);
  EXPECT_EQ(fs[2].evidence, "gpu3.pcie gen4, others gen5; nic[mlx5_2].rate 100 Gb/s, others 200 Gb/s");
}

TEST(ScanInventory, TwoNodesWithoutMajority) {
  const Inventory good = inventory_from_topology(topo::load_topology(kGood));
  const Inventory faulty = inventory_from_topology(topo::load_topology(kFaulty));
  const auto fs = judge_inventory({"a", "c"}, {good, faulty});
  EXPECT_EQ(fs[0].verdict, Verdict::ok);  // the higher values: named, not blamed
  EXPECT_EQ(fs[1].verdict, Verdict::slow);
  EXPECT_NE(fs[1].evidence.find("gpu3.pcie differs, no majority (a gen5, c gen4)"), std::string::npos)
      << fs[1].evidence;
  // A field without an order (a driver version): nobody can tell who is right.
  Inventory x = good, y = good;
  x["driver"] = "550.54.15";
  y["driver"] = "535.161.08";
  const auto drivers = judge_inventory({"x", "y"}, {x, y});
  EXPECT_EQ(drivers[0].verdict, Verdict::fail);
  EXPECT_EQ(drivers[1].verdict, Verdict::fail);
}

TEST(ScanInventory, ContextFieldsAndTheirVerdicts) {
  const nlohmann::json ctx = {{"nvml", {{"driver_version", "550.54.15"}}},
                              {"cuda", {{"runtime_version", "12.4"}, {"driver_version", "12.4"}}},
                              {"libraries", {{"nccl", "2.21.5"}}},
                              {"memory_bytes", 2164663517184.0},  // 2016.03 GiB → "2016"
                              {"gpus",
                               {{{"index", 0},
                                 {"name", "NVIDIA H100 80GB HBM3"},
                                 {"memory_bytes", 85520809984.0},
                                 {"ecc", true},
                                 {"pcie_gen_current", 5},
                                 {"pcie_width_current", 16},
                                 {"pcie_gen_max", 5},
                                 {"pcie_width_max", 16},
                                 {"sm_clock_max_mhz", 1980},
                                 {"pci_bus_id", ""}}}}};
  Inventory inv;
  add_context_fields(ctx, inv);
  EXPECT_EQ(inv.at("driver"), "550.54.15");
  EXPECT_EQ(inv.at("nccl"), "2.21.5");
  EXPECT_EQ(inv.at("memory_gib"), "2016");
  EXPECT_EQ(inv.at("gpu0.pcie"), "gen5 x16");
  EXPECT_EQ(inv.at("gpu0.memory_gib"), "79");
  EXPECT_EQ(inv.at("gpu0.sm_clock_max_mhz"), "1980");
  EXPECT_EQ(inv.at("gpu0.ecc"), "true");

  EXPECT_EQ(verdict_of_difference("gpu.count", "7", "8"), Verdict::missing);
  EXPECT_EQ(verdict_of_difference("nic[mlx5_0].state", "DOWN", "ACTIVE"), Verdict::missing);
  EXPECT_EQ(verdict_of_difference("gpu3.pcie", "gen4 x16", "gen5 x16"), Verdict::slow);
  EXPECT_EQ(verdict_of_difference("gpu3.pcie", "gen5 x8", "gen5 x16"), Verdict::slow);   // narrower
  EXPECT_EQ(verdict_of_difference("gpu3.pcie", "gen5 x16", "gen4 x16"), Verdict::fail);  // faster, yet not the majority
  EXPECT_EQ(verdict_of_difference("gpu3.nvlinks", "16", "18"), Verdict::slow);
  EXPECT_EQ(verdict_of_difference("gpu2.sm_clock_max_mhz", "1755", "1980"), Verdict::slow);
  EXPECT_EQ(verdict_of_difference("gpu2.throttle_now", "hw_slowdown", "none"), Verdict::slow);
  EXPECT_EQ(verdict_of_difference("driver", "535.161.08", "550.54.15"), Verdict::fail);
  EXPECT_EQ(verdict_of_difference("gpu1.name", "(absent)", "NVIDIA H100 80GB HBM3"), Verdict::missing);
}

}  // namespace
}  // namespace gcb::scan
