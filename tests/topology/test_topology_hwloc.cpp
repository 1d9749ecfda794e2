// The hwloc discovery route (built only with hwloc): live on this machine against the sysfs
// route, and on two checked-in hwloc XML exports (tests/fixtures/topology/README.md): this VM
// (CPU-only) and an excerpt of an AWS p4d.24xlarge export (8x A100, 4 EFA, 4 ENA, 2 sockets),
// whose expected values are read off the files; and a hand-written PCIe switch tree.
#include <filesystem>
#include <fstream>
#include <sstream>
#include <unistd.h>
#include <string>

#include <gtest/gtest.h>

#include "core/error.hpp"
#include "topology/topology.hpp"
#include "tests/reports/fake_pci_tree.hpp"

namespace gcb::topo {
namespace {

namespace fs = std::filesystem;

constexpr const char* kVmXml = "tests/fixtures/topology/hwloc-vm-2cpu.xml";
constexpr const char* kP4dXml = "tests/fixtures/topology/hwloc-p4d-excerpt.xml";

std::size_t nic_index(const Topology& t, const std::string& name) {
  for (std::size_t k = 0; k < t.nics.size(); ++k)
    if (t.nics[k].name == name) return t.gpus.size() + k;
  ADD_FAILURE() << "no NIC " << name;
  return 0;
}

TEST(TopologyHwlocLive, AgreesWithTheSysfsRouteOnThisMachine) {
  const Topology hw = discover_hwloc();
  const Topology fs_route = discover_live("/sys", "/proc");
  EXPECT_EQ(hw.source, "live");
  EXPECT_EQ(hw.discovery, "hwloc");
  EXPECT_EQ(fs_route.discovery, "sysfs");
  ASSERT_EQ(hw.numa.size(), fs_route.numa.size());
  for (std::size_t i = 0; i < hw.numa.size(); ++i) {
    EXPECT_EQ(hw.numa[i].id, fs_route.numa[i].id);
    // Both read the node's MemTotal (hwloc from the same sysfs meminfo file).
    EXPECT_EQ(hw.numa[i].memory_bytes, fs_route.numa[i].memory_bytes) << "node " << i;
    EXPECT_EQ(hw.numa[i].cpulist, fs_route.numa[i].cpulist) << "node " << i;
  }
  EXPECT_EQ(hw.cpu.threads, fs_route.cpu.threads);
  EXPECT_GE(hw.cpu.threads, 1);
  if (!fs::exists("/dev/nvidiactl")) {
    EXPECT_EQ(hw.gpus.size(), 0U) << "no NVIDIA driver here";
    EXPECT_EQ(fs_route.gpus.size(), 0U) << "no NVIDIA driver here";
  }
  // Same PCI network devices, at the same place in the PCI tree.
  ASSERT_EQ(hw.nics.size(), fs_route.nics.size());
  for (std::size_t k = 0; k < hw.nics.size(); ++k) {
    EXPECT_EQ(hw.nics[k].name, fs_route.nics[k].name);
    EXPECT_EQ(hw.nics[k].bus_id, fs_route.nics[k].bus_id);
    EXPECT_EQ(hw.nics[k].pci, fs_route.nics[k].pci) << hw.nics[k].name;
    EXPECT_EQ(hw.nics[k].numa_node, fs_route.nics[k].numa_node) << hw.nics[k].name;
  }
  EXPECT_EQ(hw.links, fs_route.links);
  EXPECT_EQ(topology_fingerprint(hw), topology_fingerprint(fs_route));
  // discover_live() takes the hwloc route in a build with hwloc.
  EXPECT_EQ(discover_live().discovery, "hwloc");
}

TEST(TopologyHwlocXml, ReadsThisVmsExport) {
  const Topology t = discover_hwloc(kVmXml);
  EXPECT_EQ(t.source, "hwloc-xml");
  EXPECT_EQ(t.discovery, "hwloc");
  EXPECT_EQ(t.hostname, "vm");
  EXPECT_EQ(t.cpu.vendor, "AuthenticAMD");
  EXPECT_EQ(t.cpu.model_name, "AMD EPYC");
  EXPECT_EQ(t.cpu.family, 25);
  EXPECT_EQ(t.cpu.model, 1);
  EXPECT_EQ(t.cpu.arch, "x86_64");
  EXPECT_EQ(t.cpu.packages, 1);
  EXPECT_EQ(t.cpu.cores, 2);
  EXPECT_EQ(t.cpu.threads, 2);
  ASSERT_EQ(t.numa.size(), 1U);
  EXPECT_EQ(t.numa[0].memory_bytes, 11100446720U);
  EXPECT_EQ(t.numa[0].cpulist, "0-1");
  EXPECT_TRUE(t.gpus.empty());
  ASSERT_EQ(t.nics.size(), 1U);  // virtio eth0; the block device vda is not a NIC
  EXPECT_EQ(t.nics[0].name, "eth0");
  EXPECT_EQ(t.nics[0].bus_id, "0000:00:03.0");
  EXPECT_EQ(t.nics[0].pci, (PciPlacement{"pci0000:00", {}}));
  EXPECT_EQ(t.nics[0].numa_node, 0);
  // An export carries no sysfs state: no rate, no link state.
  EXPECT_EQ(t.nics[0].rate_gbps, 0.0);
  EXPECT_EQ(t.nics[0].pcie, PcieLink{});
}

TEST(TopologyHwlocXml, ReadsTheP4dGpusNicsAndPaths) {
  const Topology t = discover_hwloc(kP4dXml);
  EXPECT_EQ(t.cpu.packages, 2);
  EXPECT_EQ(t.cpu.threads, 96);
  EXPECT_EQ(t.cpu.model_name, "Intel(R) Xeon(R) Platinum 8275CL CPU @ 3.00GHz");
  EXPECT_EQ(t.cpu.family, 6);
  EXPECT_EQ(t.cpu.model, 85);
  ASSERT_EQ(t.numa.size(), 2U);
  EXPECT_EQ(t.numa[0].memory_bytes, 602206875648U);
  EXPECT_EQ(t.numa[0].cpulist, "0-23,48-71");
  EXPECT_EQ(t.numa[1].memory_bytes, 602313527296U);
  EXPECT_EQ(t.numa[1].cpulist, "24-47,72-95");

  // Eight A100s (class 0302); the six NVSwitches (class 0680, same vendor) are not GPUs.
  const std::vector<std::string> buses = {"0000:10:1c.0", "0000:10:1d.0", "0000:20:1c.0", "0000:20:1d.0",
                                          "0000:90:1c.0", "0000:90:1d.0", "0000:a0:1c.0", "0000:a0:1d.0"};
  ASSERT_EQ(t.gpus.size(), buses.size());
  for (std::size_t i = 0; i < buses.size(); ++i) {
    const Gpu& g = t.gpus[i];
    EXPECT_EQ(g.index, static_cast<int>(i));
    EXPECT_EQ(g.bus_id, buses[i]);
    EXPECT_EQ(g.pci_device, "0x20b0");
    EXPECT_EQ(g.name, "NVIDIA PCI device 0x20b0");
    EXPECT_EQ(g.numa_node, i < 4 ? 0 : 1);
    EXPECT_EQ(g.cpu_affinity, i < 4 ? "0-23,48-71" : "24-47,72-95");
    EXPECT_EQ(g.pci.host_bridge, "pci0000:" + buses[i].substr(5, 2));
    EXPECT_TRUE(g.pci.switches.empty());
    // pci_link_speed="31.507692", stored by hwloc as a float: 1e-5 covers its rounding.
    EXPECT_NEAR(g.pcie.speed_gbs, 31.507692, 1e-5);
    EXPECT_EQ(g.pcie.gen, 0) << "gen and width come from sysfs, not from an export";
  }

  // RDMA (OpenFabrics) devices first, then the ENA netdevs, each sorted by name.
  const std::vector<std::pair<std::string, std::string>> nics = {
      {"rdmap144s27", "0000:90:1b.0"}, {"rdmap160s27", "0000:a0:1b.0"}, {"rdmap16s27", "0000:10:1b.0"},
      {"rdmap32s27", "0000:20:1b.0"},  {"ens129", "0000:90:01.0"},      {"ens161", "0000:a0:01.0"},
      {"ens32", "0000:10:00.0"},       {"ens65", "0000:20:01.0"}};
  ASSERT_EQ(t.nics.size(), nics.size());
  for (std::size_t k = 0; k < nics.size(); ++k) {
    EXPECT_EQ(t.nics[k].name, nics[k].first);
    EXPECT_EQ(t.nics[k].bus_id, nics[k].second);
  }
  // Port1State="4" is the IB PortState ACTIVE.
  EXPECT_EQ(t.nics[0].state, "ACTIVE");
  EXPECT_EQ(t.nics[0].port, 1);
  EXPECT_EQ(t.nics[4].state, "");

  // GPUs on one host bridge: PHB; other host bridge of the same socket: NODE; other socket: SYS.
  EXPECT_EQ(t.link(0, 1).type, PathType::PHB);
  EXPECT_EQ(t.link(0, 2).type, PathType::NODE);
  EXPECT_EQ(t.link(0, 4).type, PathType::SYS);
  EXPECT_EQ(t.link(6, 7).type, PathType::PHB);
  EXPECT_EQ(t.link(4, 6).type, PathType::NODE);
  EXPECT_EQ(t.link(0, nic_index(t, "rdmap16s27")).type, PathType::PHB);
  EXPECT_EQ(t.link(0, nic_index(t, "rdmap32s27")).type, PathType::NODE);
  EXPECT_EQ(t.link(0, nic_index(t, "rdmap144s27")).type, PathType::SYS);
  EXPECT_EQ(to_string(t.link(3, 2)), "PHB");

  // The JSON document reads back as the same topology, route and PCIe bandwidth included.
  EXPECT_EQ(from_json(to_json(t)), t);
}

// A hand-written hwloc XML (not a capture) of the tree in fake_pci_tree.hpp, which the sysfs route
// is tested on too; the ConnectX also has its netdev ib0. Both routes must name the switch and
// classify the paths alike.
constexpr const char* kSwitchTreeXml = R"(<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE topology SYSTEM "hwloc2.dtd">
<topology version="2.0">
 <object type="Machine" os_index="0" cpuset="0x00000003" complete_cpuset="0x00000003" allowed_cpuset="0x00000003" nodeset="0x00000001" complete_nodeset="0x00000001" allowed_nodeset="0x00000001" gp_index="1">
  <object type="Package" os_index="0" cpuset="0x00000003" complete_cpuset="0x00000003" nodeset="0x00000001" complete_nodeset="0x00000001" gp_index="2">
   <object type="NUMANode" os_index="0" cpuset="0x00000003" complete_cpuset="0x00000003" nodeset="0x00000001" complete_nodeset="0x00000001" gp_index="3" local_memory="16777216"/>
   <object type="PU" os_index="0" cpuset="0x00000001" complete_cpuset="0x00000001" nodeset="0x00000001" complete_nodeset="0x00000001" gp_index="4"/>
   <object type="PU" os_index="1" cpuset="0x00000002" complete_cpuset="0x00000002" nodeset="0x00000001" complete_nodeset="0x00000001" gp_index="5"/>
   <object type="Bridge" gp_index="10" bridge_type="0-1" depth="0" bridge_pci="0000:[00-05]">
    <object type="Bridge" gp_index="11" bridge_type="1-1" depth="1" bridge_pci="0000:[01-04]" pci_busid="0000:00:01.0" pci_type="0604 [8086:0000] [0000:0000] 00" pci_link_speed="0.000000">
     <object type="Bridge" gp_index="12" bridge_type="1-1" depth="2" bridge_pci="0000:[02-04]" pci_busid="0000:01:00.0" pci_type="0604 [10b5:8796] [0000:0000] 00" pci_link_speed="0.000000">
      <object type="Bridge" gp_index="13" bridge_type="1-1" depth="3" bridge_pci="0000:[03-03]" pci_busid="0000:02:00.0" pci_type="0604 [10b5:8796] [0000:0000] 00" pci_link_speed="0.000000">
       <object type="PCIDev" gp_index="14" pci_busid="0000:03:00.0" pci_type="0302 [10de:2330] [10de:16c1] a1" pci_link_speed="0.000000"/>
      </object>
      <object type="Bridge" gp_index="15" bridge_type="1-1" depth="3" bridge_pci="0000:[04-04]" pci_busid="0000:02:01.0" pci_type="0604 [10b5:8796] [0000:0000] 00" pci_link_speed="0.000000">
       <object type="PCIDev" gp_index="16" pci_busid="0000:04:00.0" pci_type="0207 [15b3:1021] [15b3:0023] 00" pci_link_speed="0.000000">
        <object type="OSDev" gp_index="17" name="ib0" osdev_type="2"/>
        <object type="OSDev" gp_index="18" name="mlx5_0" osdev_type="3"/>
       </object>
      </object>
     </object>
    </object>
    <object type="Bridge" gp_index="19" bridge_type="1-1" depth="1" bridge_pci="0000:[05-05]" pci_busid="0000:00:02.0" pci_type="0604 [8086:0000] [0000:0000] 00" pci_link_speed="0.000000">
     <object type="PCIDev" gp_index="20" pci_busid="0000:05:00.0" pci_type="0302 [10de:2330] [10de:16c1] a1" pci_link_speed="0.000000"/>
    </object>
   </object>
  </object>
 </object>
</topology>
)";

TEST(TopologyHwlocXml, SwitchTreeGivesTheSysfsRoutesPlacementsAndPaths) {
  const fs::path path =
      fs::temp_directory_path() /
      ("gcb_hwloc_switch_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + ".xml");
  std::ofstream(path) << kSwitchTreeXml;
  const Topology t = discover_hwloc(path.string());
  fs::remove(path);
  // ib0 is mlx5_0's PCI function, not a second NIC.
  expect_fake_pci_tree_paths(t);
}

TEST(TopologyHwlocXml, ADoctypeWithoutSystemIdLoadsInsteadOfCrashing) {
  // hwloc's libxml2 importer dereferences the missing SYSTEM id (a segfault); the minimal
  // parser, fed without comments and DOCTYPE, reads the same export.
  std::ifstream in(kVmXml);
  std::stringstream ss;
  ss << in.rdbuf();
  std::string text = ss.str();
  const std::string doctype = "<!DOCTYPE topology SYSTEM \"hwloc2.dtd\">";
  ASSERT_NE(text.find(doctype), std::string::npos);
  text.replace(text.find(doctype), doctype.size(), "<!DOCTYPE topology>");
  const fs::path path = fs::temp_directory_path() / ("gcb_hwloc_nosystem_" + std::to_string(::getpid()) + ".xml");
  std::ofstream(path) << text;
  const Topology t = discover_hwloc(path.string());
  fs::remove(path);
  EXPECT_EQ(t.cpu.threads, discover_hwloc(kVmXml).cpu.threads);
  EXPECT_GE(t.cpu.threads, 1);
}

TEST(TopologyHwlocXml, DeepNestingAndNonFilesAreRefused) {
  std::string deep = "<?xml version=\"1.0\"?>\n<topology version=\"2.0\">";
  for (int i = 0; i < 10000; ++i) deep += "<object type=\"Group\">";
  const fs::path path = fs::temp_directory_path() / ("gcb_hwloc_deep_" + std::to_string(::getpid()) + ".xml");
  std::ofstream(path) << deep;
  EXPECT_THROW(discover_hwloc(path.string()), UsageError);
  fs::remove(path);
  EXPECT_THROW(discover_hwloc("/dev/zero"), UsageError);
}

TEST(TopologyHwlocXml, UnreadableFileThrowsUsageError) {
  EXPECT_THROW(discover_hwloc("/nonexistent/topology.xml"), UsageError);
}

}  // namespace
}  // namespace gcb::topo
