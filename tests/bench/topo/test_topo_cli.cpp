// `gcbench topo` as users run it: a saved nvidia-smi matrix re-rendered byte-identically, format
// conversions, --expect verdicts and exit codes, the CPU-only live view, bad files.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "tests/bench/run_cli.hpp"

namespace {

namespace fs = std::filesystem;

gcb::test::CliRun gcbench(const std::string& args) { return gcb::test::run_gcbench(args, true); }

const std::string kSmi = "tests/fixtures/topology/nvidia-smi-topo-m_hgx-8xh100-8nic.txt";
const std::string kXml = "tests/fixtures/topology/nccl-topo_8xh100-vm_ibm-cloud.xml";

std::string temp(const std::string& name) { return gcb::test::temp_path("topo", name); }

TEST(TopoCli, RendersASavedMatrixInNvidiaSmiLayout) {
  const gcb::test::CliRun r = gcbench("topo --from " + kSmi);
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("GPU0"), std::string::npos);
  EXPECT_NE(r.out.find("NV18"), std::string::npos);
  EXPECT_NE(r.out.find("NIC Legend:"), std::string::npos);
  EXPECT_NE(r.out.find("  NV#  = Connection traversing a bonded set of # NVLinks"), std::string::npos);
  EXPECT_NE(r.out.find("topology fingerprint: "), std::string::npos);
}

TEST(TopoCli, FormatsAndFingerprintsAgreeAcrossSources) {
  const std::string json = temp("a.json");
  ASSERT_EQ(gcbench("topo --from " + kXml + " --format json -o " + json).code, 0);
  std::ifstream f(json);
  std::stringstream ss;
  ss << f.rdbuf();
  EXPECT_NE(ss.str().find("\"fingerprint\""), std::string::npos);
  // JSON written by gcbench reads back as the same topology: --expect finds no difference.
  const gcb::test::CliRun same = gcbench("topo --from " + json + " --expect " + kXml);
  EXPECT_EQ(same.code, 0) << same.out;
  EXPECT_NE(same.out.find("topology matches"), std::string::npos);
  for (const char* fmt : {"md", "dot", "svg", "nccl-xml"}) {
    const gcb::test::CliRun r = gcbench("topo --from " + kXml + " --format " + fmt);
    EXPECT_EQ(r.code, 0) << fmt;
    EXPECT_GT(r.out.size(), 200u) << fmt;
  }
  EXPECT_NE(gcbench("topo --from " + kXml + " --format svg").out.find("<svg"), std::string::npos);
  EXPECT_NE(gcbench("topo --from " + kXml + " --format md").out.find("```mermaid"), std::string::npos);
  fs::remove(json);
}

// NCCL's topology XML names no GPU model, only its PCI device id: the text view shows that id
// (as live sysfs discovery does) rather than "(name unknown)", and leaves out PCIe fields the
// file left at 0 (link_width="0" in a VM) instead of printing "x0 (max gen0 x0)".
TEST(TopoCli, NcclXmlGpusShowTheirPciDevice) {
  const gcb::test::CliRun r = gcbench("topo --from " + kXml);
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("GPU0: NVIDIA PCI device 0x2330 0000:a4:00.0 PCIe gen5\n"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("name unknown"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find(" x0"), std::string::npos) << r.out;
}

TEST(TopoCli, ExpectExitsOneWhenTheMachineDiffers) {
  // The 8-NIC HGX capture is not the IBM VM: different NIC paths must be reported.
  const gcb::test::CliRun r = gcbench("topo --from " + kSmi + " --expect " + kXml);
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("topology differs:"), std::string::npos);
}

TEST(TopoCli, LiveViewOnThisMachine) {
  const gcb::test::CliRun r = gcbench("topo");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("NUMA node 0"), std::string::npos);
  if (!fs::exists("/dev/nvidiactl")) {
    EXPECT_NE(r.out.find("GPUs: none found"), std::string::npos) << r.out;
  }
}

TEST(TopoCli, BadInputExitsTwo) {
  const std::string garbage = temp("garbage.txt");
  std::ofstream(garbage) << "this is not a topology\n";
  EXPECT_EQ(gcbench("topo --from " + garbage).code, 2);
  const std::string truncated = temp("trunc.xml");
  std::ofstream(truncated) << "<system version=\"1\"><cpu numaid=\"0\">";
  EXPECT_EQ(gcbench("topo --from " + truncated).code, 2);
  EXPECT_EQ(gcbench("topo --from /nonexistent/file").code, 2);
  EXPECT_EQ(gcbench("topo --format pdf").code, 2);
  EXPECT_EQ(gcbench("topo --from " + kSmi + " -o /nonexistent/dir/x.txt").code, 2);
  fs::remove(garbage);
  fs::remove(truncated);
}

TEST(TopoCli, ReadsAnHwlocXmlExport) {
  const std::string p4d = "tests/fixtures/topology/hwloc-p4d-excerpt.xml";
  const gcb::test::CliRun r = gcbench("topo --from " + p4d);
#if GCB_TEST_HAVE_HWLOC
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("source: hwloc-xml (hwloc)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("GPU7: NVIDIA PCI device 0x20b0 0000:a0:1d.0"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("NIC rdmap16s27: 0000:10:1b.0"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("SYS"), std::string::npos) << r.out;
  // The JSON of the export reads back as the same topology.
  const std::string json = temp("p4d.json");
  ASSERT_EQ(gcbench("topo --from " + p4d + " --format json -o " + json).code, 0);
  const gcb::test::CliRun same = gcbench("topo --from " + json + " --expect " + p4d);
  EXPECT_EQ(same.code, 0) << same.out;
  fs::remove(json);
#else
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("built without hwloc"), std::string::npos) << r.out;
#endif
}

TEST(TopoCli, RefusesAnHwlocVersion3Export) {
  const std::string v3 = temp("v3.xml");
  std::ofstream(v3) << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                       "<!DOCTYPE topology SYSTEM \"hwloc2.dtd\">\n<topology version=\"3.0\">\n</topology>\n";
  const std::string out = temp("v3-out.txt");
  const gcb::test::CliRun r = gcbench("topo --from " + v3 + " -o " + out);
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("hwloc XML version 3.0"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(out));
  fs::remove(v3);
}

TEST(TopoCli, ResultsOverlay) {
  const std::string results = temp("overlay.json");
  std::ofstream(results)
      << R"({"schema":"gcbench.result/1","context":{},"results":[)"
         R"({"key":"p2p/bandwidth","params":{"src":0,"dst":1},"status":"PASS","metrics":[{"name":"bandwidth","value":371.5,"unit":"GB/s","higher_is_better":true}],"statistics":null,"samples":[],"sample_flags":[],"model":{},"clocks":{},"throttled":false,"harness":{"stop_reason":"converged","batch":1,"timer":"x"}},)"
         R"({"key":"coll/all_reduce","params":{"op":"all_reduce","bytes":1073741824,"inplace":false},"status":"PASS","metrics":[{"name":"busbw","value":480.25,"unit":"GB/s","higher_is_better":true}],"statistics":null,"samples":[],"sample_flags":[],"model":{},"clocks":{},"throttled":false,"harness":{"stop_reason":"converged","batch":1,"timer":"x"}},)"
         // in place, after it at the same size (coll's order): not the figure quoted
         R"({"key":"coll/all_reduce","params":{"op":"all_reduce","bytes":1073741824,"inplace":true},"status":"PASS","metrics":[{"name":"busbw","value":490.5,"unit":"GB/s","higher_is_better":true}],"statistics":null,"samples":[],"sample_flags":[],"model":{},"clocks":{},"throttled":false,"harness":{"stop_reason":"converged","batch":1,"timer":"x"}}]})";
  const gcb::test::CliRun r = gcbench("topo --from " + kSmi + " --results " + results);
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("371.5"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("480.25 GB/s"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("490.5"), std::string::npos) << r.out;
  fs::remove(results);
}

}  // namespace
