// Tests of topology on the checked-in fixtures (tests/fixtures/topology): the real
// `nvidia-smi topo -m` of an HGX 8xH100 and the NCCL topology XML of an 8xH100 VM, their round
// trips through every format we write, the checks, and live discovery on a fake and a real /sys.
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include <gtest/gtest.h>

#include "core/error.hpp"
#include "topology/topology.hpp"
#include "topology/xml.hpp"
#include "tests/reports/fake_pci_tree.hpp"

namespace gcb::topo {
namespace {

namespace fs = std::filesystem;

constexpr const char* kSmiFixture = "tests/fixtures/topology/nvidia-smi-topo-m_hgx-8xh100-8nic.txt";
constexpr const char* kXmlFixture = "tests/fixtures/topology/nccl-topo_8xh100-vm_ibm-cloud.xml";

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in.good()) << "cannot open " << path;
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// The fixture minus its first line, which names the public source.
std::string smi_capture() {
  const std::string text = read_file(kSmiFixture);
  return text.substr(text.find('\n') + 1);
}

Topology smi() { return parse_nvidia_smi_topo(read_file(kSmiFixture)); }
Topology xml() { return parse_nccl_topo_xml(read_file(kXmlFixture)); }

std::size_t nic(const Topology& t, std::size_t k) { return t.gpus.size() + k; }

// Two GPUs and one NIC, all on NUMA 0: GPU0 PIX to the NIC, GPU1 only NODE.
Topology small_node() {
  Topology t;
  t.source = "test";
  t.numa.push_back({0, 0, "0-7"});
  for (int i = 0; i < 2; ++i) {
    Gpu g;
    g.index = i;
    g.name = "NVIDIA H100 80GB HBM3";
    g.numa_node = 0;
    g.cpu_affinity = "0-7";
    g.pcie = {5, 16, 5, 16};
    t.gpus.push_back(g);
  }
  Nic n;
  n.name = "mlx5_0";
  n.rate_gbps = 400;
  t.nics.push_back(n);
  t.reset_links();
  t.link(0, 1) = t.link(1, 0) = {PathType::NV, 18};
  t.link(0, 2) = t.link(2, 0) = {PathType::PIX, 0};
  t.link(1, 2) = t.link(2, 1) = {PathType::NODE, 0};
  return t;
}

TEST(TopologyLink, NamesRoundTrip) {
  for (const char* cell : {"X", "NV18", "NV1", "PIX", "PXB", "PHB", "NODE", "SYS", "N/A"})
    EXPECT_EQ(to_string(parse_link(cell)), cell);
  EXPECT_EQ(parse_link("SOC").type, PathType::SYS);
  EXPECT_EQ(parse_link("NV12").nvlinks, 12);
  EXPECT_THROW(parse_link("NV"), UsageError);
  EXPECT_THROW(parse_link("FOO"), UsageError);
}

TEST(TopologySmi, ParsesHgxFixture) {
  const Topology t = smi();
  EXPECT_EQ(t.source, "nvidia-smi");
  ASSERT_EQ(t.gpus.size(), 8U);
  ASSERT_EQ(t.nics.size(), 8U);
  for (std::size_t a = 0; a < 8; ++a)
    for (std::size_t b = 0; b < 8; ++b)
      EXPECT_EQ(t.link(a, b), (a == b ? Link{PathType::X, 0} : Link{PathType::NV, 18}));
  // One PIX NIC per GPU, the other NICs of the same socket NODE, the other socket SYS.
  for (std::size_t g = 0; g < 8; ++g)
    for (std::size_t k = 0; k < 8; ++k) {
      const PathType expected = g == k ? PathType::PIX : g / 4 == k / 4 ? PathType::NODE : PathType::SYS;
      EXPECT_EQ(t.link(g, nic(t, k)).type, expected) << "GPU" << g << " NIC" << k;
      EXPECT_EQ(t.link(nic(t, k), g).type, expected) << "NIC" << k << " GPU" << g;
    }
  EXPECT_EQ(t.link(nic(t, 0), nic(t, 3)).type, PathType::NODE);
  EXPECT_EQ(t.link(nic(t, 0), nic(t, 4)).type, PathType::SYS);
  for (std::size_t k = 0; k < 8; ++k) EXPECT_EQ(t.nics[k].name, "mlx5_" + std::to_string(k));
  EXPECT_EQ(t.gpus[0].cpu_affinity, "0-47,96-143");
  EXPECT_EQ(t.gpus[7].cpu_affinity, "48-95,144-191");
  EXPECT_EQ(t.gpus[3].numa_node, 0);
  EXPECT_EQ(t.gpus[4].numa_node, 1);
  EXPECT_EQ(t.gpus[4].gpu_numa_id, -1);
  EXPECT_EQ(t.nics[5].numa_node, 1);
  ASSERT_EQ(t.numa.size(), 2U);
  EXPECT_EQ(t.numa[1].cpulist, "48-95,144-191");
}

TEST(TopologySmi, RendersTheFixtureByteForByte) { EXPECT_EQ(render_nvidia_smi(smi()), smi_capture()); }

TEST(TopologySmi, RoundTripsThroughItsOwnRendering) {
  const Topology t = smi();
  EXPECT_EQ(parse_nvidia_smi_topo(render_nvidia_smi(t)), t);
  EXPECT_EQ(parse_nvidia_smi_topo(render_nvidia_smi(t, {.tabs = true, .ansi_underline = true})), t);
}

TEST(TopologySmi, TabsSpacesAndAnsiGiveTheSameResult) {
  const Topology expected = smi();
  const std::string spaces = smi_capture();
  // Runs of two or more spaces become one tab, as in captures that kept the driver's tabs.
  const std::string tabs = std::regex_replace(spaces, std::regex(" {2,}"), "\t");
  ASSERT_NE(tabs, spaces);
  EXPECT_EQ(parse_nvidia_smi_topo(tabs), expected);
  // The driver underlines the header on a terminal; some logs also colour cells.
  std::string ansi = spaces;
  const std::size_t header_start = ansi.find("GPU0");
  ansi.insert(ansi.find('\n', header_start), "\x1b[0m");
  ansi.insert(header_start, "\x1b[4m");
  ansi = std::regex_replace(ansi, std::regex("PIX"), "\x1b[1;32mPIX\x1b[0m");
  EXPECT_EQ(parse_nvidia_smi_topo(ansi), expected);
  EXPECT_EQ(parse_nvidia_smi_topo("\r\n" + std::regex_replace(spaces, std::regex("\n"), "\r\n")), expected);
  // Leading whitespace lost in a copy-paste and text around the block.
  std::string trimmed = "GPU0 is busy\n$ nvidia-smi topo -m\n" + spaces.substr(spaces.find("GPU0")) + "$ exit\n";
  EXPECT_EQ(parse_nvidia_smi_topo(trimmed), expected);
}

TEST(TopologySmi, ParsesOlderLayoutWithoutNicLegendOrNumaColumns) {
  // Pre-R470 drivers: NICs named by device, only the CPU Affinity column (nccl-tests#78 style).
  const std::string old_layout =
      "\tGPU0\tGPU1\tmlx5_0\tmlx5_1\tCPU Affinity\n"
      "GPU0\t X \tNV6\tPXB\tSYS\t0-19,40-59\n"
      "GPU1\tNV6\t X \tSYS\tPHB\t20-39,60-79\n"
      "mlx5_0\tPXB\tSYS\t X \tSOC\n"
      "mlx5_1\tSYS\tPHB\tSOC\t X \n"
      "\nLegend:\n\n  X    = Self\n";
  const Topology t = parse_nvidia_smi_topo(old_layout);
  ASSERT_EQ(t.gpus.size(), 2U);
  ASSERT_EQ(t.nics.size(), 2U);
  EXPECT_EQ(t.nics[1].name, "mlx5_1");
  EXPECT_EQ(t.link(0, 1), (Link{PathType::NV, 6}));
  EXPECT_EQ(t.link(1, nic(t, 1)).type, PathType::PHB);
  EXPECT_EQ(t.link(nic(t, 0), nic(t, 1)).type, PathType::SYS);
  EXPECT_EQ(t.gpus[1].cpu_affinity, "20-39,60-79");
  EXPECT_EQ(t.gpus[1].numa_node, -1);
  // Rendered in today's layout, it reads back the same.
  EXPECT_EQ(parse_nvidia_smi_topo(render_nvidia_smi(t)), t);
}

TEST(TopologySmi, MalformedInputThrowsUsageError) {
  EXPECT_THROW(parse_nvidia_smi_topo(""), UsageError);
  EXPECT_THROW(parse_nvidia_smi_topo("hello world\nthis is not a topology\n"), UsageError);
  EXPECT_THROW(parse_nvidia_smi_topo("\tGPU0\tGPU1\nGPU0\t X \tFOO\nGPU1\tNV1\t X \n"), UsageError);
  EXPECT_THROW(parse_nvidia_smi_topo("\tGPU0\tGPU1\nGPU0\t X \tNV1\n"), UsageError);  // no GPU1 row
  EXPECT_THROW(parse_nvidia_smi_topo("\tGPU0\tGPU1\nGPU0\t X \nGPU1\tNV1\t X \n"), UsageError);
  try {
    parse_nvidia_smi_topo("garbage");
    FAIL() << "no exception";
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << "one line: " << e.what();
  }
}

TEST(TopologyNcclXml, ParsesIbmCloudFixture) {
  const Topology t = xml();
  EXPECT_EQ(t.source, "nccl-xml");
  ASSERT_EQ(t.gpus.size(), 8U);
  ASSERT_EQ(t.nics.size(), 8U);
  for (std::size_t k = 0; k < 8; ++k) {
    EXPECT_EQ(t.nics[k].name, "mlx5_" + std::to_string(k));
    EXPECT_DOUBLE_EQ(t.nics[k].rate_gbps, 200.0);  // speed="200000" Mb/s
    EXPECT_EQ(t.nics[k].port, 1);
    EXPECT_EQ(t.nics[k].link_layer, "Ethernet");  // class 0x020000
  }
  for (const Gpu& g : t.gpus) {
    EXPECT_EQ(g.sm, 90);
    EXPECT_EQ(g.pcie.gen, 5);  // "32.0 GT/s PCIe"
    ASSERT_EQ(g.nvlinks.size(), 4U);
    int total = 0;
    for (const NvLink& l : g.nvlinks) {
      total += l.count;
      EXPECT_EQ(l.target_class, "0x068000");
    }
    EXPECT_EQ(total, 18);  // 5 + 5 + 4 + 4 links to the four NVSwitches
  }
  EXPECT_EQ(t.gpus[0].bus_id, "0000:a4:00.0");
  EXPECT_EQ(t.gpus[0].pci_device, "0x2330");
  EXPECT_EQ(t.gpus[0].cpu_affinity, "0-79");
  EXPECT_EQ(t.gpus[4].cpu_affinity, "80-159");
  EXPECT_EQ(t.gpus[4].numa_node, 1);
  for (std::size_t a = 0; a < 8; ++a)
    for (std::size_t b = 0; b < 8; ++b)
      if (a != b) {
        EXPECT_EQ(t.link(a, b), (Link{PathType::NV, 18}));
      }
  // mlx5_7 shares GPU0's bridge, mlx5_0 GPU7's; mlx5_6 is another bridge of CPU 0.
  EXPECT_EQ(t.link(0, nic(t, 7)).type, PathType::PIX);
  EXPECT_EQ(t.link(7, nic(t, 0)).type, PathType::PIX);
  EXPECT_EQ(t.link(0, nic(t, 6)).type, PathType::NODE);
  EXPECT_EQ(t.link(0, nic(t, 0)).type, PathType::SYS);
  EXPECT_EQ(t.cpu.vendor, "GenuineIntel");
  EXPECT_EQ(t.cpu.model, 143);
  EXPECT_TRUE(health_checks(t).empty()) << health_checks(t).front();
}

TEST(TopologyNcclXml, RoundTripsThroughRenderNcclXml) {
  const Topology t = xml();
  const std::string rendered = render_nccl_xml(t);
  EXPECT_NE(rendered.find("<system version=\"1\">"), std::string::npos);
  EXPECT_NE(rendered.find("affinity=\"00000000,00000000,0000ffff,ffffffff,ffffffff\""), std::string::npos);
  EXPECT_NE(rendered.find("<net name=\"mlx5_0\" dev=\"0\" speed=\"200000\" port=\"1\""), std::string::npos);
  EXPECT_EQ(parse_nccl_topo_xml(rendered), t);
}

TEST(TopologyNcclXml, SmiTopologyRendersToXmlWithTheSameMatrix) {
  // Placeholder switches and an unseen NVSwitch reproduce PIX/NODE/SYS and NV18.
  const Topology t = smi();
  const Topology back = parse_nccl_topo_xml(render_nccl_xml(t));
  ASSERT_EQ(back.device_count(), t.device_count());
  EXPECT_EQ(back.links, t.links);
  EXPECT_EQ(back.nics[3].name, "mlx5_3");
}

TEST(TopologyNcclXml, MalformedInputThrowsUsageError) {
  const std::string full = read_file(kXmlFixture);
  EXPECT_THROW(parse_nccl_topo_xml(full.substr(0, full.size() / 2)), UsageError);
  EXPECT_THROW(parse_nccl_topo_xml(full.substr(0, full.size() - 3)), UsageError);
  EXPECT_THROW(parse_nccl_topo_xml("garbage, not XML"), UsageError);
  EXPECT_THROW(parse_nccl_topo_xml(""), UsageError);
  EXPECT_THROW(parse_nccl_topo_xml("<system><cpu></system>"), UsageError);
  EXPECT_THROW(parse_nccl_topo_xml("<system version=1/>"), UsageError);
  EXPECT_THROW(parse_nccl_topo_xml("<system a=\"1\" a=\"2\"/>"), UsageError);
  EXPECT_THROW(parse_nccl_topo_xml("<system/><system/>"), UsageError);
  EXPECT_THROW(parse_nccl_topo_xml("<graphs version=\"1\"/>"), UsageError);
  EXPECT_THROW(parse_nccl_topo_xml("<system><cpu numaid=\"zero\"/></system>"), UsageError);
  EXPECT_THROW(parse_nccl_topo_xml("<!-- unterminated <system/>"), UsageError);
  const std::string gpu_without_dev = "<system><cpu><pci busid=\"0000:01:00.0\"><gpu sm=\"90\"/></pci></cpu></system>";
  EXPECT_THROW(parse_nccl_topo_xml(gpu_without_dev), UsageError);
}

TEST(TopologyNcclXml, DeepNestingIsRefusedQuicklyAndWithoutCrashing) {
  // 100,000 levels overflowed the stack; 10,000 took 2.8 GB and seconds of line counting.
  for (const int levels : {100000, 10000, 65}) {
    std::string deep;
    for (int i = 0; i < levels; ++i) deep += "<a>";
    for (int i = 0; i < levels; ++i) deep += "</a>";
    try {
      parse_nccl_topo_xml(deep);
      ADD_FAILURE() << levels << " levels were accepted";
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find("nested more than 64 deep"), std::string::npos) << e.what();
    }
  }
}

TEST(TopologyNcclXml, ControlCharacterReferencesAreRefused) {
  // &#0; used to decode to a raw NUL that nccl-xml output then wrote back.
  for (const char* ref : {"&#0;", "&#x0;", "&#1;", "&#x1b;", "&#127;"}) {
    const std::string xml = std::string("<system version=\"1\"><cpu numaid=\"0\" vendor=\"A") + ref + "B\"/></system>";
    EXPECT_THROW(parse_nccl_topo_xml(xml), UsageError) << ref;
  }
}

TEST(TopologyXml, CommentsAndDoctypeAreRemovedForAnotherParser) {
  const std::string in =
      "<?xml version=\"1.0\"?>\n<!DOCTYPE topology>\n<!-- note -->\n<topology a=\"<!-- kept -->\">"
      "<!-- x --><o/></topology>";
  EXPECT_EQ(xml::without_comments_and_doctype(in, "t"),
            "<?xml version=\"1.0\"?>\n<topology a=\"<!-- kept -->\"><o/></topology>");
  std::string deep;
  for (int i = 0; i < 65; ++i) deep += "<o>";
  EXPECT_THROW(xml::without_comments_and_doctype(deep, "t"), UsageError);
}

TEST(TopologyNcclXml, AcceptsCommentsDeclarationsAndEntities) {
  const Topology t = parse_nccl_topo_xml(
      "\xEF\xBB\xBF<?xml version=\"1.0\"?>\n<!-- c -->\n<system version='1'>\n"
      "  <cpu numaid=\"0\" affinity=\"0000000f\" vendor=\"A&amp;B\">\n"
      "    <pci busid=\"0000:01:00.0\" class=\"0x030200\"><gpu dev=\"0\" /></pci>\n"
      "    <!-- a comment between devices -->\n"
      "    <nic><net name=\"eth0\" dev=\"0\" speed=\"100000\"/></nic>\n"
      "  </cpu>\n</system>\n<!-- trailing -->\n");
  ASSERT_EQ(t.gpus.size(), 1U);
  ASSERT_EQ(t.nics.size(), 1U);
  EXPECT_EQ(t.cpu.vendor, "A&B");
  EXPECT_EQ(t.gpus[0].cpu_affinity, "0-3");
  EXPECT_DOUBLE_EQ(t.nics[0].rate_gbps, 100.0);
  EXPECT_EQ(t.link(0, 1).type, PathType::NODE);  // the NIC hangs straight off the CPU
}

TEST(TopologyJson, RoundTripsBothFixtures) {
  for (const Topology& t : {smi(), xml(), small_node()}) {
    const nlohmann::json doc = to_json(t);
    EXPECT_EQ(doc.at("schema"), "gcbench.topology/1");
    EXPECT_EQ(from_json(doc), t);
    EXPECT_EQ(from_json(nlohmann::json::parse(doc.dump(2))), t);
  }
  const nlohmann::json doc = to_json(smi());
  EXPECT_EQ(doc.at("matrix").at(0).at(8), "PIX");
  EXPECT_EQ(doc.at("devices").at(8), "NIC0");
}

TEST(TopologyJson, RejectsBadDocuments) {
  EXPECT_THROW(from_json(nlohmann::json::object()), UsageError);
  nlohmann::json doc = to_json(smi());
  doc["matrix"].erase(0);
  EXPECT_THROW(from_json(doc), UsageError);
  doc = to_json(smi());
  doc["gpus"][0].erase("bus_id");
  EXPECT_THROW(from_json(doc), UsageError);
  doc = to_json(smi());
  doc["matrix"][0][1] = "NVLINK";
  EXPECT_THROW(from_json(doc), UsageError);
}

TEST(TopologyFingerprint, StableAcrossRoundTripsAndSensitiveToLinks) {
  const Topology t = smi();
  const std::string fp = topology_fingerprint(t);
  EXPECT_EQ(fp.size(), 16U);
  EXPECT_EQ(topology_fingerprint(parse_nvidia_smi_topo(render_nvidia_smi(t))), fp);
  EXPECT_EQ(topology_fingerprint(from_json(to_json(t))), fp);
  const Topology x = xml();
  EXPECT_EQ(topology_fingerprint(parse_nccl_topo_xml(render_nccl_xml(x))), topology_fingerprint(x));

  Topology renamed = t;
  renamed.hostname = "another-node";
  EXPECT_EQ(topology_fingerprint(renamed), fp);

  Topology changed = t;
  changed.link(0, nic(t, 0)) = {PathType::NODE, 0};
  EXPECT_NE(topology_fingerprint(changed), fp);
  Topology fewer_links = t;
  fewer_links.link(0, 1) = {PathType::NV, 12};
  EXPECT_NE(topology_fingerprint(fewer_links), fp);

  Topology a = small_node();
  Topology b = small_node();
  b.gpus[1].name = "  NVIDIA   H100 80GB HBM3 ";
  EXPECT_EQ(topology_fingerprint(a), topology_fingerprint(b));
}

TEST(TopologyHealth, QuietOnHealthyNodes) {
  EXPECT_TRUE(health_checks(smi()).empty());
  Topology t = small_node();
  t.link(1, 2) = t.link(2, 1) = {PathType::PXB, 0};
  EXPECT_TRUE(health_checks(t).empty()) << health_checks(t).front();
}

TEST(TopologyHealth, FlagsDowngradedPcieAndGpuWithoutCloseNic) {
  Topology t = small_node();
  t.gpus[0].pcie = {4, 8, 5, 16};  // Gen4 x8 on a Gen5 x16 slot
  const std::vector<std::string> warnings = health_checks(t);
  ASSERT_EQ(warnings.size(), 3U);
  EXPECT_NE(warnings[0].find("GPU0: PCIe link runs at Gen4 below its maximum Gen5"), std::string::npos) << warnings[0];
  EXPECT_NE(warnings[1].find("GPU0: PCIe link runs at x8 below its maximum width x16"), std::string::npos)
      << warnings[1];
  EXPECT_NE(warnings[2].find("GPU1: no NIC at PIX or PXB"), std::string::npos) << warnings[2];
}

TEST(TopologyHealth, FlagsAsymmetricNvlink) {
  Topology t = small_node();
  t.link(1, 2) = t.link(2, 1) = {PathType::PIX, 0};
  t.link(0, 1) = {PathType::NV, 12};
  const std::vector<std::string> warnings = health_checks(t);
  ASSERT_EQ(warnings.size(), 2U);
  EXPECT_NE(warnings[0].find("GPU0-GPU1: asymmetric NVLink (NV12 one way, NV18 the other)"), std::string::npos)
      << warnings[0];
  EXPECT_NE(warnings[1].find("different NVLink totals"), std::string::npos) << warnings[1];
}

TEST(TopologyCompare, FindsChangedLinkAndNothingOnEqual) {
  const Topology expected = smi();
  EXPECT_TRUE(compare_topology(expected, expected).empty());
  const Topology reparsed = parse_nvidia_smi_topo(render_nvidia_smi(expected));
  EXPECT_TRUE(compare_topology(expected, reparsed).empty());
  Topology actual = expected;
  actual.link(2, nic(actual, 2)) = actual.link(nic(actual, 2), 2) = {PathType::SYS, 0};
  const std::vector<std::string> diffs = compare_topology(expected, actual);
  ASSERT_EQ(diffs.size(), 1U);
  EXPECT_EQ(diffs[0], "GPU2-NIC2: expected PIX, found SYS");

  Topology missing = expected;
  missing.gpus.pop_back();
  missing.reset_links();
  EXPECT_FALSE(compare_topology(expected, missing).empty());
  EXPECT_EQ(compare_topology(expected, missing).front(), "GPUs: expected 8, found 7");
}

TEST(TopologyRender, MarkdownDotSvgMentionEveryDevice) {
  const Topology t = smi();
  const std::string md = render_markdown(t);
  const std::string dot = render_dot(t);
  const std::string svg = render_svg(t);
  EXPECT_NE(md.find("```mermaid"), std::string::npos);
  EXPECT_NE(md.find("| GPU0 | X | NV18"), std::string::npos) << md;
  EXPECT_EQ(dot.rfind("graph topology {", 0), 0U) << dot.substr(0, 40);
  EXPECT_EQ(svg.rfind("<svg xmlns=\"http://www.w3.org/2000/svg\"", 0), 0U) << svg.substr(0, 60);
  EXPECT_NO_THROW(xml::parse(svg, "SVG")) << "the SVG is well-formed XML";
  for (std::size_t d = 0; d < t.device_count(); ++d) {
    const std::string label = t.device_label(d);
    EXPECT_NE(md.find(label), std::string::npos) << label;
    EXPECT_NE(dot.find(label), std::string::npos) << label;
    EXPECT_NE(svg.find(label), std::string::npos) << label;
  }
  EXPECT_NE(svg.find("mlx5_7"), std::string::npos);
  EXPECT_NE(svg.find(">PIX<"), std::string::npos);
}

// A fake /sys of the tree in fake_pci_tree.hpp.
class FakeSysfs : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ =
        fs::temp_directory_path() / ("gcb_topo_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) +
                                     "_" + std::to_string(reinterpret_cast<std::uintptr_t>(this)));
    fs::remove_all(root_);
    const fs::path host = root_ / "sys/devices/pci0000:00";
    const fs::path sw = host / "0000:00:01.0/0000:01:00.0";
    add_pci(sw / "0000:02:00.0/0000:03:00.0", "0x030200", "0x10de", "0x2330", "0");
    add_pci(sw / "0000:02:01.0/0000:04:00.0", "0x020700", "0x15b3", "0x1021", "0");
    add_pci(host / "0000:00:02.0/0000:05:00.0", "0x030200", "0x10de", "0x2330", "0");
    write(root_ /
              "sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:00.0/0000:03:00.0/"
              "max_link_width",
          "16");
    write(root_ /
              "sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:00.0/0000:03:00.0/"
              "current_link_width",
          "8");
    const fs::path ib = root_ / "sys/class/infiniband/mlx5_0";
    fs::create_directories(ib / "ports/1");
    fs::create_directory_symlink(sw / "0000:02:01.0/0000:04:00.0", ib / "device");
    write(ib / "ports/1/rate", "400 Gb/sec (4X NDR)");
    write(ib / "ports/1/state", "4: ACTIVE");
    write(ib / "ports/1/link_layer", "InfiniBand");
    const fs::path node = root_ / "sys/devices/system/node/node0";
    write(node / "cpulist", "0-3");
    write(node / "meminfo", "Node 0 MemTotal:       16384 kB\nNode 0 MemFree: 1 kB\n");
    write(root_ / "proc/cpuinfo",
          "processor\t: 0\nvendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel\t\t: 143\n"
          "model name\t: Test CPU\nphysical id\t: 0\ncore id\t\t: 0\n\n"
          "processor\t: 1\nphysical id\t: 0\ncore id\t\t: 1\n");
  }
  void TearDown() override { fs::remove_all(root_); }

  static void write(const fs::path& path, const std::string& text) {
    fs::create_directories(path.parent_path());
    std::ofstream(path) << text << "\n";
  }
  void add_pci(const fs::path& dir, const std::string& cls, const std::string& vendor, const std::string& device,
               const std::string& numa) {
    write(dir / "class", cls);
    write(dir / "vendor", vendor);
    write(dir / "device", device);
    write(dir / "numa_node", numa);
    write(dir / "current_link_speed", "32.0 GT/s PCIe");
    write(dir / "max_link_speed", "32.0 GT/s PCIe");
    fs::create_directories(root_ / "sys/bus/pci/devices");
    fs::create_directory_symlink(dir, root_ / "sys/bus/pci/devices" / dir.filename());
  }

  fs::path root_;
};

TEST_F(FakeSysfs, DiscoversDevicesAndPciePaths) {
  const Topology t = discover_live((root_ / "sys").string(), (root_ / "proc").string());
  EXPECT_EQ(t.source, "live");
  EXPECT_EQ(t.discovery, "sysfs");
  ASSERT_EQ(t.numa.size(), 1U);
  EXPECT_EQ(t.numa[0].memory_bytes, 16384U * 1024U);
  EXPECT_EQ(t.numa[0].cpulist, "0-3");
  EXPECT_EQ(t.cpu.threads, 2);
  EXPECT_EQ(t.cpu.cores, 2);
  EXPECT_EQ(t.cpu.packages, 1);
  EXPECT_EQ(t.cpu.model_name, "Test CPU");
  expect_fake_pci_tree_paths(t);
  EXPECT_EQ(t.gpus[0].pcie, (PcieLink{5, 8, 5, 16}));
  EXPECT_DOUBLE_EQ(t.nics[0].rate_gbps, 400.0);
  EXPECT_EQ(t.nics[0].state, "ACTIVE");
  EXPECT_EQ(t.nics[0].link_layer, "InfiniBand");
  const std::vector<std::string> warnings = health_checks(t);
  ASSERT_EQ(warnings.size(), 2U);
  EXPECT_NE(warnings[0].find("GPU0: PCIe link runs at x8"), std::string::npos) << warnings[0];
  EXPECT_NE(warnings[1].find("GPU1: no NIC at PIX or PXB"), std::string::npos) << warnings[1];
}

TEST(TopologyHwlocXmlVersion, TellsHwlocExportsFromNcclXml) {
  EXPECT_EQ(hwloc_xml_version(read_file("tests/fixtures/topology/hwloc-vm-2cpu.xml")), "2.0");
  // The excerpt starts with a comment that itself contains "<support>".
  EXPECT_EQ(hwloc_xml_version(read_file("tests/fixtures/topology/hwloc-p4d-excerpt.xml")), "2.0");
  EXPECT_EQ(hwloc_xml_version(read_file(kXmlFixture)), "");  // NCCL's <system>
  EXPECT_EQ(hwloc_xml_version("<?xml version=\"1.0\"?><!DOCTYPE topology SYSTEM \"hwloc.dtd\">"
                              "<topology><object type=\"Machine\"/></topology>"),
            "1");
  EXPECT_EQ(hwloc_xml_version("<topology version=\"3.0\">"), "3.0");
  EXPECT_EQ(hwloc_xml_version("<topologyx version=\"2.0\">"), "");
  EXPECT_EQ(hwloc_xml_version("GPU0 GPU1"), "");
}

TEST(TopologyLive, DiscoversThisMachine) {
  Topology t;
  ASSERT_NO_THROW(t = discover_live());
  EXPECT_GE(t.numa.size(), 1U);
  EXPECT_GE(t.cpu.threads, 1);
  if (!fs::exists("/dev/nvidiactl")) {
    EXPECT_EQ(t.gpus.size(), 0U) << "no NVIDIA driver here";
  }
  EXPECT_EQ(from_json(to_json(t)), t);
  EXPECT_FALSE(render_nvidia_smi(t).empty());
}

}  // namespace
}  // namespace gcb::topo
