// `gcbench compare` and `gcbench export` as CI meets them: exit codes 0/1/2 on the checked-in
// fixture pairs, nothing written on bad input, and an end-to-end CPU run compared with itself
// and with an injected 30 % regression.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "reports/result.hpp"
#include "reports/writer.hpp"
#include "tests/bench/run_cli.hpp"

namespace gcb {
namespace {

namespace fs = std::filesystem;

using test::CliRun;

CliRun gcbench(const std::string& args) { return test::run_gcbench(args); }

std::string read(const std::string& path) { return test::read_file(path); }

const std::string kFix = "tests/fixtures/compare/";

class CompareCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("gcb-cmp-" + std::to_string(getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const char* name) const { return (dir_ / name).string(); }
  std::string pair(const char* base, const char* contender) const { return kFix + base + " " + kFix + contender; }
  fs::path dir_;
};

TEST_F(CompareCli, ExitCodesOnFixturePairs) {
  const CliRun same = gcbench("compare " + pair("base.json", "new_identical.json"));
  EXPECT_EQ(same.code, 0) << same.out << same.err;
  // Verdict line first; the headline metric of each of the 3 results; SAME rows folded away.
  EXPECT_EQ(same.out.rfind("compare: no regression (3 SAME; 3 of 3 judged;", 0), 0u) << same.out;
  EXPECT_NE(same.out.find("(3 SAME rows not shown; --all shows every row)"), std::string::npos) << same.out;
  EXPECT_EQ(same.out.find("verdict "), std::string::npos) << same.out;
  const CliRun all = gcbench("compare " + pair("base.json", "new_identical.json") + " --all --all-metrics");
  EXPECT_NE(all.out.find("compare: no regression (5 SAME; 5 of 5 judged;"), std::string::npos) << all.out;
  EXPECT_NE(all.out.find("SAME      mem/hbm/triad"), std::string::npos) << all.out;

  const std::string outs = " --md " + path("c.md") + " --junit " + path("c.xml");
  const CliRun slower = gcbench("compare " + pair("base.json", "new_regression.json") + outs);
  EXPECT_EQ(slower.code, 1) << slower.out << slower.err;
  EXPECT_NE(slower.out.find("SLOWER    mem/hbm/triad"), std::string::npos) << slower.out;
  EXPECT_NE(read(path("c.md")).find("## gcbench compare: REGRESSION"), std::string::npos);
  EXPECT_NE(read(path("c.xml")).find("<failure type=\"SLOWER\""), std::string::npos);
  // The HTML page: the verdict before any row, the changed row first, SAME rows folded away.
  const CliRun html = gcbench("compare " + pair("base.json", "new_regression.json") + " --html " + path("c.html"));
  EXPECT_EQ(html.code, 1);
  const std::string page = read(path("c.html"));
  const size_t verdict = page.find("<b>REGRESSION</b>"), changed = page.find("<h2>Changed (1)</h2>"),
               slower_row = page.find("<tr class=\"SLOWER\"><td>SLOWER</td><td>mem/hbm/triad</td>"),
               same_rows = page.find("<details><summary>SAME (2)</summary>");
  EXPECT_NE(verdict, std::string::npos) << page;
  EXPECT_LT(verdict, changed);
  EXPECT_LT(changed, slower_row);
  EXPECT_LT(slower_row, same_rows);
  EXPECT_NE(same_rows, std::string::npos) << page;
  EXPECT_EQ(page.find("<script"), std::string::npos);

  const CliRun noise = gcbench("compare " + pair("base.json", "new_noise.json") + " --threshold 1%");
  // Beyond 1 %, but the U test cannot tell it from the spread: NOISY, exit 4, never 1.
  EXPECT_EQ(noise.code, 4) << noise.out;
  EXPECT_NE(noise.out.find("NOISY     mem/host/copy"), std::string::npos) << noise.out;
  EXPECT_EQ(noise.out.find("SLOWER "), std::string::npos) << noise.out;

  // Several BASE runs: the last document is NEW; BASE pools the others and says so.
  const CliRun pooled = gcbench("compare " + kFix + "base.json " + pair("new_identical.json", "new_identical.json"));
  EXPECT_EQ(pooled.code, 0) << pooled.out << pooled.err;
  EXPECT_NE(pooled.out.find("BASE pools 2 runs"), std::string::npos) << pooled.out;
  const CliRun pooled_slow =
      gcbench("compare " + kFix + "base.json " + pair("new_identical.json", "new_regression.json"));
  EXPECT_EQ(pooled_slow.code, 1) << pooled_slow.out << pooled_slow.err;

  const CliRun throttled = gcbench("compare " + pair("base.json", "new_throttled.json"));
  EXPECT_EQ(throttled.code, 0) << throttled.out;
  EXPECT_NE(throttled.out.find("SUSPECT"), std::string::npos);
  EXPECT_NE(throttled.out.find("driver             580.65.06 -> 575.57.08"), std::string::npos) << throttled.out;
}

TEST_F(CompareCli, BadInputExitsTwoWithOneLineAndWritesNothing) {
  const std::string outs = " --md " + path("c.md") + " --junit " + path("c.xml") + " --html " + path("c.html");
  for (const std::string& bad :
       {pair("base.json", "other_schema.json"), pair("base.json", "nothing_in_common.json"),
        kFix + "base.json " + path("no-such-file.json"), pair("base.json", "base.json") + " --threshold 5",
        pair("base.json", "base.json") + " --threshold fast", pair("base.json", "base.json") + " --alpha 2",
        pair("base.json", "base.json") + " --metric no_such_metric", kFix + "base.json"}) {
    const CliRun r = gcbench("compare " + bad + outs);
    EXPECT_EQ(r.code, 2) << bad << "\n" << r.out << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << bad << ": " << r.err;
    EXPECT_FALSE(fs::exists(path("c.md")) || fs::exists(path("c.xml")) || fs::exists(path("c.html"))) << bad;
  }
  // An unwritable output is reported before anything is compared, and the other is not written.
  const CliRun r = gcbench("compare " + pair("base.json", "new_regression.json") + " --junit " + path("c.xml") +
                           " --md " + path("no/such/dir/c.md"));
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("does not exist"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(path("c.xml")));
  EXPECT_TRUE(r.out.empty()) << r.out;
}

TEST_F(CompareCli, Export) {
  const CliRun gb = gcbench("export --format gbench " + kFix + "base.json -o " + path("gb.json"));
  EXPECT_EQ(gb.code, 0) << gb.err;
  const auto j = nlohmann::json::parse(read(path("gb.json")));
  EXPECT_EQ(j.at("benchmarks").size(), 3u);
  EXPECT_EQ(j.at("benchmarks")[0].at("time_unit"), "ns");
  const CliRun bmf = gcbench("export --format bmf " + kFix + "base.json");
  EXPECT_EQ(bmf.code, 0);
  EXPECT_TRUE(nlohmann::json::parse(bmf.out).contains("mem/hbm/triad/dtype:fp32/size:1073741824"));
  const CliRun csv = gcbench("export --format csv " + kFix + "base.json");
  EXPECT_EQ(csv.out.rfind("key,", 0), 0u);
  EXPECT_EQ(csv.out.find("\"{"), std::string::npos) << "params packed in one JSON cell";
  for (const std::string& bad : {"--format xml " + kFix + "base.json", "--format gbench " + kFix + "other_schema.json",
                                 "--format gbench --time-unit h " + kFix + "base.json"}) {
    const CliRun r = gcbench("export " + bad + " -o " + path("x.out"));
    EXPECT_EQ(r.code, 2) << bad;
    EXPECT_FALSE(fs::exists(path("x.out"))) << bad;
  }
}

// The CI gate end to end on the CPU: a real (tiny) run compared with itself passes; the same
// run with every metric 30 % worse and every sample 1/0.7 slower fails.
TEST_F(CompareCli, EndToEndCpuRunAndInjectedRegression) {
  const CliRun run = gcbench(
      "mem --device cpu --size 64K --latency-max 64K --kernels copy,triad --min-samples 9 --max-time 0.3 -q --json " +
      path("base.json"));
  ASSERT_EQ(run.code, 0) << run.out << run.err;
  const CliRun self = gcbench("compare " + path("base.json") + " " + path("base.json"));
  EXPECT_EQ(self.code, 0) << self.out;
  EXPECT_EQ(self.out.find("SLOWER "), std::string::npos) << self.out;

  ResultDocument doc = load_document(path("base.json"));
  for (Result& r : doc.results) {
    for (double& s : r.samples) s /= 0.7;
    if (!r.samples.empty()) r.stats = summarize(r.samples);
    for (Metric& m : r.metrics)
      if (m.value) *m.value = m.higher_is_better ? *m.value * 0.7 : *m.value / 0.7;
  }
  write_document(path("slow.json"), doc);
  const CliRun regressed =
      gcbench("compare " + path("base.json") + " " + path("slow.json") + " --junit " + path("j.xml"));
  EXPECT_EQ(regressed.code, 1) << regressed.out;
  EXPECT_NE(regressed.out.find("SLOWER "), std::string::npos) << regressed.out;
  EXPECT_NE(read(path("j.xml")).find("<failure"), std::string::npos);
}

}  // namespace
}  // namespace gcb
