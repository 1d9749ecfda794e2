// `gcbench gemm` as a user meets it on a CPU-only machine: a small square run exits 0 with PASS
// results carrying TFLOP/s and the accuracy beside them; bad input exits 2.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <string>

#include "kernels/gemm/cpu_gemm.hpp"
#include "reports/result.hpp"
#include "tests/bench/run_cli.hpp"

namespace gcb {
namespace {

namespace fs = std::filesystem;

int gcbench(const std::string& args, std::string* out = nullptr) {
  const test::CliRun r = test::run_gcbench(args, true);
  if (out) *out = r.out;
  return r.code;
}

const std::string kFast = " --min-samples 3 --max-time 0.2 --min-time 0 ";

TEST(GemmCli, CpuSquareRunPasses) {
  const fs::path json = fs::temp_directory_path() / ("gcb-gemm-cli-" + std::to_string(getpid()) + ".json");
  std::string out;
  ASSERT_EQ(gcbench("gemm --device cpu --preset square --m 256 --n 256 --k 256 --json " + json.string() + kFast, &out),
            0)
      << out;
  const ResultDocument doc = load_document(json.string());
  fs::remove(json);
  ASSERT_EQ(doc.results.size(), 2u);  // fp32 and fp64
  std::string reason;
  const bool blas = kernels::cpu_gemm_available(&reason);
  for (const auto& r : doc.results) {
    if (!blas) {  // one WAIVED row per dtype, naming the missing library (no shape params)
      EXPECT_EQ(r.status, Status::waived);
      EXPECT_NE(r.reason.find("OpenBLAS"), std::string::npos) << r.reason;
      continue;
    }
    EXPECT_EQ(r.params.at("m"), 256);
    EXPECT_EQ(r.status, Status::pass) << r.key << ": " << r.reason;
    ASSERT_NE(r.metric("tflops"), nullptr);
    EXPECT_GT(*r.metric("tflops")->value, 0.0);
    ASSERT_NE(r.metric("max_rel_error"), nullptr);
    EXPECT_LE(r.extra.at("accuracy").at("max_error_vs_bound").get<double>(), 1.0);
  }
}

TEST(GemmCli, BadInputExitsTwo) {
  for (const std::string bad :
       {"gemm --device cpu --m 0 --n 4 --k 4", "gemm --device cpu --m 4 --n 4", "gemm --device cpu --preset cube",
        "gemm --device cpu --dtype int32", "gemm --device cpu --m 1:8:x1 --n 4 --k 4", "gemm --device cpu --data ones",
        "gemm --device cpu --preset llm --model gpt5"}) {
    std::string out;
    EXPECT_EQ(gcbench(bad + kFast, &out), 2) << bad << "\n" << out;
  }
}

}  // namespace
}  // namespace gcb
