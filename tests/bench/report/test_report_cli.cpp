// `gcbench report` as a user meets it: outputs written, runs side by side with --baseline, and
// bad input (truncated, newer schema, missing file, unwritable output) exits 2 with one line
// and writes nothing.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "tests/bench/run_cli.hpp"

namespace gcb {
namespace {

namespace fs = std::filesystem;

const std::string kFixture = "tests/fixtures/report/synthetic_gpu.json";

using test::CliRun;

CliRun gcbench(const std::string& args) { return test::run_gcbench(args + " >/dev/null"); }

std::string read(const fs::path& p) { return test::read_file(p.string()); }

class ReportCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("gcb-report-cli-" + std::to_string(getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const char* name) const { return (dir_ / name).string(); }
  size_t files() const {
    return static_cast<size_t>(std::distance(fs::directory_iterator(dir_), fs::directory_iterator()));
  }
  fs::path dir_;
};

TEST_F(ReportCli, WritesHtmlMarkdownAndCsv) {
  const auto r =
      gcbench("report " + kFixture + " -o " + path("r.html") + " --md " + path("r.md") + " --csv " + path("r.csv"));
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string html = read(path("r.html"));
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_LE(fs::file_size(path("r.md")), 64000u);
  const std::string csv = read(path("r.csv"));
  EXPECT_EQ(csv.rfind("run,key,", 0), 0u);
  EXPECT_EQ(csv.find("\"{"), std::string::npos) << "params packed in one JSON cell";
  EXPECT_NE(csv.find("\nsynthetic_gpu.json,gemm/bf16,"), std::string::npos);
  EXPECT_EQ(files(), 3u);  // no temporary files left behind
}

TEST_F(ReportCli, BaselineComesFirstInRatios) {
  fs::copy_file(kFixture, path("new.json"));
  const auto r = gcbench("report " + path("new.json") + " --baseline " + kFixture + " -o " + path("r.html"));
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string html = read(path("r.html"));
  EXPECT_NE(html.find("<th>new.json / synthetic_gpu.json</th>"), std::string::npos);
  EXPECT_NE(html.find("synthetic_gpu.json (baseline)"), std::string::npos);
}

TEST_F(ReportCli, BadInputExitsTwoWithOneLineAndWritesNothing) {
  const std::string text = read(kFixture);
  std::ofstream(path("truncated.json")) << text.substr(0, text.size() / 2);
  std::string newer = text;
  newer.replace(newer.find("gcbench.result/1"), 16, "gcbench.result/2");
  std::ofstream(path("newer.json")) << newer;
  std::ofstream(path("empty.json")) << "";
  const std::string out = " -o " + path("r.html") + " --md " + path("r.md");
  struct Case {
    std::string args, expect;
  };
  for (const Case& c :
       {Case{path("truncated.json") + out, "truncated.json"},
        Case{kFixture + " " + path("newer.json") + out, "unsupported schema version"},
        Case{path("missing.json") + out, "cannot read result file"}, Case{path("empty.json") + out, "is empty"},
        Case{kFixture + " -o " + path("no/such/folder/r.html"), "does not exist"},
        Case{kFixture, "nothing to write"}}) {
    const size_t before = files();
    const auto r = gcbench("report " + c.args);
    EXPECT_EQ(r.code, 2) << c.args << "\n" << r.err;
    EXPECT_NE(r.err.find(c.expect), std::string::npos) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_EQ(files(), before) << c.args;  // no report, no temporary file
  }
}

// The nccl-tests table is a pure function of the result document: what `gcbench coll` printed while
// measuring, `report --format coll-table` prints again from its --json, byte for byte (the sweeps
// with in-place and without, and the graph-mode WAIVED line).
TEST_F(ReportCli, CollTableFromTheDocumentIsWhatTheRunPrinted) {
  const struct {
    const char* flags;
    size_t sweeps;
  } runs[] = {{"--op all_reduce,all_gather,broadcast,sendrecv -b 1K -e 64K -f 8", 4}, {"--mode graph -b 1K -e 1K", 1}};
  for (const auto& run : runs) {
    const CliRun measured =
        test::run_gcbench(std::string("coll --backend threads --ranks 2 --min-samples 3 --max-time 0.2 ") + run.flags +
                          " --json " + path("c.json"));
    ASSERT_EQ(measured.code, 0) << measured.out << measured.err;
    const CliRun rendered = test::run_gcbench("report --format coll-table " + path("c.json"));
    ASSERT_EQ(rendered.code, 0) << rendered.err;
    // The run prints its launch lines (backend, ranks, one line per rank: not in the document)
    // before the tables and its summary after them; the tables between are the rendered text.
    ASSERT_FALSE(rendered.out.empty());
    const size_t at = measured.out.find(rendered.out);
    ASSERT_NE(at, std::string::npos) << "run:\n" << measured.out << "\nreport:\n" << rendered.out;
    EXPECT_EQ(measured.out.substr(0, at).find("out-of-place"), std::string::npos);  // no table before it
    size_t sweeps = 0;  // one "out-of-place  in-place" column header each
    for (size_t p = 0; (p = rendered.out.find("out-of-place", p)) != std::string::npos; ++p) ++sweeps;
    EXPECT_EQ(sweeps, run.sweeps) << rendered.out;
  }
}

}  // namespace
}  // namespace gcb
