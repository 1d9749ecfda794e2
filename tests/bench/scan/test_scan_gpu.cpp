// `gcbench scan` on this machine's GPUs (label gpu): stages 1–3 for one node — inventory, HBM
// triad and a bf16 GEMM per GPU, and the GPU-pair links when there are two or more. Skipped with
// the reason on a machine without a GPU.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "core/gpu.hpp"
#include "tests/bench/run_cli.hpp"

namespace gcb::scan {
namespace {

TEST(ScanGpu, StagesOneToThreeOnOneNode) {
  const int gpus = gpu::device_count();
  if (gpus == 0) GTEST_SKIP() << "no GPU: " << gpu::runtime().unavailable_reason;
  const auto out = std::filesystem::temp_directory_path() / ("gcb-scan-gpu-" + std::to_string(getpid()) + ".json");
  const auto r = test::run_gcbench("scan --stages inventory,device,links --budget 120 --json " + out.string());
  ASSERT_TRUE(r.code == 0 || r.code == 1) << r.code << "\n" << r.out << r.err;  // a verdict, not a fault
  std::ifstream f(out);
  const auto doc = nlohmann::json::parse(f);
  std::set<std::pair<std::string, int>> passed;  // (key, gpu)
  bool device_verdict = false, links_measured = false;
  for (const auto& res : doc["results"]) {
    const auto& p = res["params"];
    if (res["key"] == "scan/verdict" && p.value("stage", "") == "device" && p.value("kind", "") == "node")
      device_verdict = true;
    if (p.value("stage", "") == "links" && res["status"] == "PASS") links_measured = true;
    // Per-GPU measurements only: the stage's findings and verdicts carry a node, not a GPU.
    if (p.value("stage", "") == "device" && res["status"] == "PASS" && p.contains("gpu") && p["gpu"].is_number())
      passed.insert({res["key"], p["gpu"].get<int>()});
  }
  for (int g = 0; g < gpus; ++g) {
    EXPECT_TRUE(passed.count({"mem/hbm/triad", g})) << "GPU " << g << "\n" << r.out;
    EXPECT_TRUE(passed.count({"gemm/bf16", g})) << "GPU " << g << "\n" << r.out;
  }
  EXPECT_TRUE(device_verdict);
  EXPECT_EQ(links_measured, gpus >= 2) << r.out;
  std::filesystem::remove(out);
}

}  // namespace
}  // namespace gcb::scan
