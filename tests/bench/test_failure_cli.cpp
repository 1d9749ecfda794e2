// Failure behaviour of the gcbench binary (README "Failure behaviour"), as a careless user, a
// hostile input or a full disk meets it: outputs never replace devices or inputs, JSONL appends,
// nothing measured is lost when the final write fails, write errors on any output (stdout
// included) are not exit 0, and hostile inputs are exit 2 with one line, never a crash or a hang.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <climits>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>
#include <tuple>
#include <vector>

#include "collectives/factory.hpp"
#include "kernels/attention/attention_registry.hpp"
#include "models/backend/backend_factory.hpp"
#include "reports/result.hpp"
#include "tests/bench/run_cli.hpp"

namespace gcb {
namespace {

namespace fs = std::filesystem;

using test::CliRun;
using test::read_file;

// One copy result of exactly three samples in a fraction of a second (its JSONL line, about 900
// bytes, then always fits under the 2 KiB file size limit of the full-disk test).
const std::string kFast =
    " --device cpu --group stream --kernels copy --size 64K --min-samples 3 --max-samples 3 --max-time 0.2 --min-time 0 "
    "--no-peers -q ";

class FailureCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("gcb-failure-cli-" + std::to_string(getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  CliRun gcbench(const std::string& args, const std::string& prefix = "") {
    return test::run_gcbench(args, false, prefix);
  }
  // A small valid result document at path(name).
  std::string measured(const std::string& name) {
    const CliRun r = gcbench("mem" + kFast + "--json " + path(name));
    EXPECT_EQ(r.code, 0) << r.err;
    return path(name);
  }
  fs::path dir_;
};

TEST_F(FailureCli, DevicesGivenAsOutputsStayDevices) {
  // The atomic writer renamed a temporary file over /dev/null (as root: /dev/null became a file).
  const CliRun r = gcbench("mem" + kFast + "--json /dev/null --csv /dev/null --jsonl /dev/null");
  EXPECT_EQ(r.code, 0) << r.err;
  struct stat st {};
  ASSERT_EQ(::stat("/dev/null", &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode));
  // /dev/stdout is written in place: the document appears on standard output.
  const CliRun out = gcbench("mem" + kFast + "--json /dev/stdout");
  EXPECT_EQ(out.code, 0) << out.err;
  EXPECT_NE(out.out.find("\"schema\": \"gcbench.result/1\""), std::string::npos) << out.out;
}

TEST_F(FailureCli, AnOutputThatIsAnInputOrAnotherOutputIsRefused) {
  const std::string base = measured("base.json");
  const std::string other = measured("other.json");
  const std::string before = read_file(base);
  for (const std::string& args :
       {"report " + base + " -o " + base, "report " + base + " --md " + base, "report " + base + " --csv " + base,
        "export --format csv " + base + " -o " + base, "compare " + other + " " + base + " --md " + base,
        "compare " + other + " " + base + " --junit " + other, "topo --from " + base + " -o " + base,
        "mem" + kFast + "--json " + base + " --csv " + base, "mem" + kFast + "--json " + base + " --jsonl " + base,
        "train --model tiny --steps 1 --warmup-steps 0 --peak-flops 1e15 -q --json " + base + " --dump " + base}) {
    const CliRun r = gcbench(args);
    EXPECT_EQ(r.code, 2) << args << "\n" << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << args << "\n" << r.err;
    EXPECT_EQ(read_file(base), before) << args;
  }
}

TEST_F(FailureCli, PlanAndScanNeverOverwriteWhatTheyRead) {
  const std::string base = measured("base.json");
  const std::string before = read_file(base);
  for (const std::string& args :
       {"scan --baseline " + base + " --json " + base, "scan --inventory-from node1=" + base + " --jsonl " + base,
        "plan --model tiny --gpu a100-sxm4-80gb --gpus 8 --global-batch 8 --calibration " + base + " --csv " + base}) {
    const CliRun r = gcbench(args);
    EXPECT_EQ(r.code, 2) << args << "\n" << r.err;
    EXPECT_NE(r.err.find("refusing to overwrite an input"), std::string::npos) << args << "\n" << r.err;
    EXPECT_EQ(read_file(base), before) << args;
  }
}

TEST_F(FailureCli, JsonlAppendsAcrossRuns) {
  // Help and README say "append"; a rerun after an interruption used to wipe the earlier lines.
  for (int run = 1; run <= 2; ++run) {
    const CliRun r = gcbench("mem" + kFast + "--jsonl " + path("r.jsonl"));
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(load_document(path("r.jsonl")).results.size(), static_cast<size_t>(run));
  }
}

TEST_F(FailureCli, WriteErrorsOnStandardOutputAreNotExitZero) {
  const std::string base = measured("base.json");
  EXPECT_EQ(gcbench("export --format gbench " + base + " > /dev/full").code, 3);
  EXPECT_EQ(gcbench("mem" + kFast + " > /dev/full").code, 3);
  const CliRun r = gcbench("topo --from " + base + " > /dev/full");
  EXPECT_NE(r.code, 0) << r.err;
}

TEST_F(FailureCli, AFullDiskAtTheEndKeepsWhatWasMeasured) {
  // The document goes to a fallback file, named on stderr; the exit code says fault, not bad input.
  CliRun r = gcbench("mem" + kFast + "--jsonl " + path("r.jsonl") + " --json /dev/full");
  EXPECT_EQ(r.code, 3) << r.err;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(r.err, m, std::regex("written to '([^']+)' instead"))) << r.err;
  const std::string rescued = m[1];
  EXPECT_EQ(load_document(rescued).results.size(), 1u);
  fs::remove(rescued);
  EXPECT_EQ(load_document(path("r.jsonl")).results.size(), 1u);
  EXPECT_NE(r.err.find("1 results appended to"), std::string::npos) << r.err;

  // A regular file that cannot grow (a 2 KiB file size limit stands in for the full disk):
  // nothing half-written at the target, the JSONL line kept, exit 3.
  r = gcbench("mem" + kFast + "--jsonl " + path("small.jsonl") + " --json " + path("big.json"), "ulimit -f 4 &&");
  EXPECT_EQ(r.code, 3) << r.err;
  EXPECT_FALSE(fs::exists(path("big.json")));
  EXPECT_EQ(load_document(path("small.jsonl")).results.size(), 1u);
  for (const auto& e : fs::directory_iterator(dir_))  // no temporary file (.gcbench-PID-HASH.tmp) left
    EXPECT_EQ(e.path().filename().string().find(".tmp"), std::string::npos) << e.path();
  for (const auto& e : fs::directory_iterator(fs::temp_directory_path()))
    if (e.path().filename().string().starts_with("gcbench-rescued-") &&
        e.path().filename().string().ends_with("big.json"))
      fs::remove(e.path());
}

TEST_F(FailureCli, HostileInputsAreBadInputNeverACrashOrAHang) {
  ASSERT_EQ(::mkfifo(path("fifo").c_str(), 0600), 0);
  fs::create_directories(path("folder"));
  std::ofstream(path("deep.json")) << std::string(100000, '[') + std::string(100000, ']');
  std::string deep_xml;
  for (int i = 0; i < 100000; ++i) deep_xml += "<a>";
  for (int i = 0; i < 100000; ++i) deep_xml += "</a>";
  std::ofstream(path("deep.xml")) << deep_xml;
  std::ofstream(path("big.json")) << R"({"schema": "gcbench.result/1", "context": {}, "results": [], "x": 1e400})";
  const std::string base = measured("base.json");
  struct Case {
    std::string args, expect;
  };
  for (const Case& c :
       {Case{"report " + path("fifo") + " --md " + path("r.md"), "a FIFO"},
        Case{"report /dev/zero --md " + path("r.md"), "a character device"},
        Case{"export --format csv " + path("folder"), "a folder"}, Case{"topo --from " + path("fifo"), "a FIFO"},
        Case{"report " + path("deep.json") + " --md " + path("r.md"), "nested more than"},
        Case{"compare " + base + " " + path("deep.json"), "nested more than"},
        Case{"export --format bmf " + path("deep.json"), "nested more than"},
        Case{"topo --from " + path("deep.xml"), "nested more than 64"},
        Case{"export --format csv " + path("big.json"), "number overflow"},
        Case{"train --model " + path("deep.json") + " --steps 1", "nested more than"},
        Case{"train --model tiny --steps 1 --data " + path("fifo"), "a FIFO"},
        Case{"train --init-from " + path("fifo") + " --steps 1", "a FIFO"}}) {
    const auto start = std::chrono::steady_clock::now();
    const CliRun r = gcbench(c.args);
    EXPECT_EQ(r.code, 2) << c.args << "\n" << r.err;
    EXPECT_NE(r.err.find(c.expect), std::string::npos) << c.args << "\n" << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << c.args << "\n" << r.err;
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(20)) << c.args;
    EXPECT_FALSE(fs::exists(path("r.md")));
  }
}

TEST_F(FailureCli, MalformedButParseableDocumentsAreBadInputInEveryReader) {
  const nlohmann::json good = nlohmann::json::parse(read_file(measured("base.json")));
  const std::vector<std::pair<std::string, nlohmann::json>> edits = {
      {"/schema", 1},
      {"/context", nlohmann::json::array()},
      {"/results/0/params", nlohmann::json::array()},
      {"/results/0/key", 7},
      {"/results/0/metrics/0/value", "fast"},
      {"/results/0/metrics", nlohmann::json::object()},
      {"/results/0/extra", nlohmann::json::array()},
      {"/results/0/statistics", "none"},
  };
  for (const auto& [pointer, value] : edits) {
    nlohmann::json bad = good;
    bad[nlohmann::json::json_pointer(pointer)] = value;
    std::ofstream(path("bad.json"), std::ios::trunc) << bad.dump();
    for (const std::string& args :
         {"report " + path("bad.json") + " --md " + path("r.md"),
          "compare " + path("base.json") + " " + path("bad.json"), "export --format gbench " + path("bad.json"),
          "topo --from " + path("base.json") + " --results " + path("bad.json")}) {
      const CliRun r = gcbench(args);
      EXPECT_EQ(r.code, 2) << pointer << ": " << args << "\n" << r.err;
    }
  }
}

TEST_F(FailureCli, InvalidValuesAreRefusedBeforeAnyOutputExists) {
  const std::string outs = " --json " + path("r.json") + " --jsonl " + path("r.jsonl") + " --csv " + path("r.csv");
  for (const std::string& bad :
       std::vector<std::string>{"mem --size 0",
                                "mem --size ''",
                                "mem --latency-max 0",
                                "mem --threads 100000",
                                "mem --threads 0",
                                "mem --seed -1",
                                "mem --device gpu:99999999999999999999",
                                "mem --size 1e400",
                                "run --noise 0",
                                "coll --ranks 0",
                                "coll --backend threads --ranks 2 -r 5 -b 1K -e 1K",
                                "coll --backend nccl -b 1K -e 1K",
                                "coll --timeout 0",
                                "p2p --mode rank --ranks 0",
                                "train --ranks 0",
                                "train --peak-flops 0",
                                "train --peak-flops nan",
                                "train --peak-size 0",
                                "train --timeout -1",
                                "train --model tiny --steps 1 --dump " + path("no/such/folder/dump.txt"),
                                "mem --kernels bogus",
                                "mem --kernels 3",
                                "attn --impl triton",
                                "attn --pass sideways",
                                "mem --dtype fp16",
                                "mem --dtype fp32,bogus",
                                "gemm --dtype float7",
                                "gemm --dtype int32",
                                "attn --dtype int8",
                                "coll --backend carrier-pigeon",
                                "p2p --mode rank --backend carrier-pigeon",
                                "scan --backend carrier-pigeon",
                                "coll --device gpu:0",
                                "coll --device tpu",
                                "coll --device cpu --backend nccl -b 1K -e 1K",
                                "train --device gpu:0",
                                "train --device cpu --backend cuda"}) {
    const CliRun r = gcbench(bad + outs);
    EXPECT_EQ(r.code, 2) << bad << "\n" << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << bad << ": " << r.err;
    EXPECT_FALSE(fs::exists(path("r.json")) || fs::exists(path("r.jsonl")) || fs::exists(path("r.csv"))) << bad;
  }
}

// Flags whose values name an enum or a table row say which names they accept, from the table (the
// tables' names are read from the tables, so a new row changes no line here).
TEST_F(FailureCli, NamedValuesListWhatIsAccepted) {
  std::vector<std::string> impls;
  for (const kernels::attn::AttnImplId id : kernels::attn::attention_impl_ids())
    impls.emplace_back(kernels::attn::attention_impl_name(id));
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"mem --kernels copy,bogus", "bogus: expected one of copy, scale, add, triad, dot, read, write"},
      {"mem --kernels 3", "3: expected one of copy, scale"},  // a number is not a silent alias
      {"attn --impl triton", fmt::format("triton: expected one of {}", fmt::join(impls, ", "))},
      {"attn --pass sideways", "sideways: expected one of fwd, bwd, fwdbwd"},
      {"mem --dtype fp32,fp16", "fp16: expected one of fp32, fp64, bf16"},
      {"gemm --dtype float7", "float7: expected one of fp64, fp32, tf32, fp16, bf16, fp8_e4m3, fp8_e5m2, int8"},
      {"attn --dtype int8", "int8: expected one of fp16, bf16"},
      {"coll --backend carrier-pigeon",
       fmt::format("carrier-pigeon: expected one of {}", communicator_backend_names())},
      {"coll --backend thread", "thread (did you mean 'threads'?): expected one of threads, mpi"},
      {"p2p --backend ncl", "ncl (did you mean 'nccl'?): expected one of"},
      {"train --backend cpuu",
       fmt::format("--backend: cpuu (did you mean 'cpu'?): expected one of {}", models::compute_backend_names())},
      {"plan --gpu a101 --global-batch 8", "unknown GPU 'a101' (did you mean 'a100-sxm4-80gb'?)"},
  };
  for (const auto& [args, message] : cases) {
    const CliRun r = gcbench(args);
    EXPECT_EQ(r.code, 2) << args << "\n" << r.err;
    EXPECT_NE(r.err.find(message), std::string::npos) << args << ": " << r.err;
  }
}

TEST_F(FailureCli, TooLittleHostMemoryIsRefusedUpFront) {
  // Sizes no test machine has: refused in well under a second instead of allocating for minutes.
  for (const std::string big :
       {"coll --backend threads --ranks 4 -b 64T -e 64T", "p2p --mode rank --backend threads --ranks 1024 --size 2000M",
        "train --model gpt3-175b", "mem --device cpu --size 64T"}) {
    const auto start = std::chrono::steady_clock::now();
    const CliRun r = gcbench(big + " --jsonl " + path("r.jsonl"));
    EXPECT_EQ(r.code, 2) << big << "\n" << r.err;
    EXPECT_NE(r.err.find("of host memory;"), std::string::npos) << big << "\n" << r.err;
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(20)) << big;
    EXPECT_FALSE(fs::exists(path("r.jsonl"))) << big;
  }
}

TEST_F(FailureCli, TrainTimeoutEndsAStepThatLastsTooLong) {
  // One layer of gpt2-124m at 128 tokens takes about a second per step on a small CPU; 0.05 s
  // is far below any machine's step time. The watchdog ends the run and names the step.
  const CliRun r = gcbench(
      "train --model gpt2-124m --layers 1 --seq 128 --steps 1 --warmup-steps 0 --peak-flops 1e15 -q "
      "--timeout 0.05");
  EXPECT_EQ(r.code, 3) << r.err;
  EXPECT_NE(r.err.find("in training step (--timeout 0.05 s)"), std::string::npos) << r.err;
}

TEST_F(FailureCli, CraftedNamesStayTextInEveryMarkup) {
  const std::string script = "<script>alert(1)</script>";
  const std::string img = "<img src=x onerror=alert(1)>";
  nlohmann::json doc = nlohmann::json::parse(read_file(measured("base.json")));
  nlohmann::json crafted = doc["results"][0];  // beside the original, so compare has a pair
  crafted["key"] = "mem/" + script;
  crafted["params"]["note"] = img;
  doc["results"].push_back(crafted);
  crafted["key"] = "=HYPERLINK(\"http://evil\",\"x\")";
  doc["results"].push_back(crafted);
  std::ofstream(path("crafted.json")) << doc.dump();
  auto clean = [&](const std::string& file, const std::string& what) {
    const std::string text = read_file(path(file));
    EXPECT_FALSE(text.empty()) << what;
    EXPECT_EQ(text.find(script), std::string::npos) << what << "\n" << text;
    EXPECT_EQ(text.find(img), std::string::npos) << what << "\n" << text;
  };
  ASSERT_EQ(gcbench("compare " + path("base.json") + " " + path("crafted.json") + " --md " + path("c.md") +
                    " --junit " + path("c.xml") + " -q")
                .code,
            0);
  clean("c.md", "compare --md");
  clean("c.xml", "compare --junit");
  ASSERT_EQ(gcbench("report " + path("crafted.json") + " --md " + path("r.md") + " -o " + path("r.html") + " --csv " +
                    path("r.csv"))
                .code,
            0);
  clean("r.md", "report --md");
  clean("r.html", "report -o");
  // No CSV cell a spreadsheet would run: the formula key is a quoted text starting with '.
  for (const std::string& csv :
       {read_file(path("r.csv")), gcbench("export --format csv " + path("crafted.json")).out}) {
    EXPECT_EQ(csv.find(",=HYPERLINK"), std::string::npos) << csv;
    EXPECT_EQ(csv.find("\n=HYPERLINK"), std::string::npos) << csv;
    EXPECT_NE(csv.find("'=HYPERLINK"), std::string::npos) << csv;
  }

  // A topology whose GPU name and hostname try to leave their labels.
  nlohmann::json topo = nlohmann::json::parse(
      gcbench("topo --format json --from tests/fixtures/topology/nvidia-smi-topo-m_hgx-8xh100-8nic.txt").out);
  topo["gpus"][0]["name"] = "H100\"] --> X[\"" + script;
  topo["hostname"] = img;
  std::ofstream(path("topo.json")) << topo.dump();
  for (const char* format : {"md", "svg", "nccl-xml", "dot"}) {
    const std::string out = fmt::format("topo.{}", format);
    ASSERT_EQ(gcbench(fmt::format("topo --from {} --format {} -o {}", path("topo.json"), format, path(out))).code, 0)
        << format;
    if (std::string(format) != "dot") clean(out, format);  // DOT quoted strings may hold '<' as text
  }
  EXPECT_EQ(read_file(path("topo.md")).find("H100\"]"), std::string::npos);  // the mermaid label stays closed
  EXPECT_NE(read_file(path("topo.dot")).find("H100\\\"] --> X[\\\""), std::string::npos);  // DOT quotes escaped
}

// `--json /dev/stdout -q > out.json`: the document was written through a second open at offset 0
// and the summary line, flushed later through fd 1 at its own offset 0, overwrote its start.
TEST_F(FailureCli, StandardOutputRedirectedToAFileHoldsTheWholeDocument) {
  for (const std::string flag : {"--json", "--jsonl"}) {
    const CliRun r = gcbench("mem" + kFast + flag + " /dev/stdout > " + path("out.txt"));
    ASSERT_EQ(r.code, 0) << flag << "\n" << r.err;
    const std::string text = read_file(path("out.txt"));
    const size_t blank = text.rfind("\n\n");  // the summary line comes after a blank line
    ASSERT_NE(blank, std::string::npos) << flag << "\n" << text;
    EXPECT_NE(text.find("1 passed", blank), std::string::npos) << flag << "\n" << text;
    std::ofstream(path("doc.json"), std::ios::trunc) << text.substr(0, blank + 1);
    EXPECT_EQ(load_document(path("doc.json")).results.size(), 1u) << flag << "\n" << text;
  }
}

// In a sticky world-writable folder, a link planted by another user is not followed (the
// kernel's protected_symlinks rule): refused before anything is measured.
TEST_F(FailureCli, ALinkPlantedInAStickyFolderIsRefusedBeforeMeasuring) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to give a link another owner (lchown)";
  fs::create_directories(path("st"));
  ASSERT_EQ(::chmod(path("st").c_str(), 01777), 0);
  std::ofstream(path("root-only.txt")) << "root's";
  ASSERT_EQ(::symlink(path("root-only.txt").c_str(), path("st/o.json").c_str()), 0);
  ASSERT_EQ(::lchown(path("st/o.json").c_str(), 65534, 65534), 0);
  for (const std::string flag : {"--json", "--csv", "--jsonl"}) {
    const std::string other = flag == "--jsonl" ? " --json " : " --jsonl ";  // would exist after a run
    const CliRun r = gcbench("mem" + kFast + flag + " " + path("st/o.json") + other + path("other"));
    EXPECT_EQ(r.code, 2) << flag << "\n" << r.err;
    EXPECT_NE(r.err.find("not followed"), std::string::npos) << flag << "\n" << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_EQ(read_file(path("root-only.txt")), "root's") << flag;
    EXPECT_FALSE(fs::exists(path("other"))) << flag;
  }
}

// A 255-byte name and a 4,095-byte path hold the document (their temporary names used to be
// too long: exit 3 after measuring, the document nowhere); one byte more is refused up front.
TEST_F(FailureCli, LongNamesHoldTheDocumentAndLongerOnesAreRefusedUpFront) {
  const std::string longest = std::string(NAME_MAX - 5, 'n') + ".json";
  CliRun r = gcbench("mem" + kFast + "--json " + path(longest));
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(load_document(path(longest)).results.size(), 1u);
  fs::path deep = dir_;
  while (deep.string().size() + 201 < PATH_MAX - 2) deep /= std::string(200, 'd');
  fs::create_directories(deep);
  const std::string full = (deep / std::string(PATH_MAX - 2 - deep.string().size(), 'f')).string();
  r = gcbench("mem" + kFast + "--json " + full);
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(load_document(full).results.size(), 1u);
  for (const std::string& too_long : {path("x" + longest), full + "f"}) {
    r = gcbench("mem" + kFast + "--json " + too_long + " --jsonl " + path("r.jsonl"));
    EXPECT_EQ(r.code, 2) << r.err;
    EXPECT_NE(r.err.find("File name too long"), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(path("r.jsonl")));
  }
}

// report and export read context fields; a mistyped one was a raw json.exception with exit 3.
TEST_F(FailureCli, MistypedContextFieldsAreBadInputNamingTheField) {
  const nlohmann::json good = nlohmann::json::parse(read_file(measured("base.json")));
  const std::vector<std::tuple<std::string, nlohmann::json, std::string>> edits = {
      {"/context/date", 20261127, "context.date"},
      {"/context/host", nlohmann::json::array({"a"}), "context.host"},
      {"/context/cpu/logical_cores", "many", "context.cpu.logical_cores"},
      {"/context/cpu", "AMD", "context.cpu"},
      {"/context/gpus", nlohmann::json::array({"H100"}), "context.gpus"},
      {"/context/command_line", "gcbench mem", "context.command_line"},
      {"/context/gcbench", 1, "context.gcbench"},
  };
  for (const auto& [pointer, value, field] : edits) {
    nlohmann::json bad = good;
    bad[nlohmann::json::json_pointer(pointer)] = value;
    std::ofstream(path("bad.json"), std::ios::trunc) << bad.dump();
    for (const std::string& args :
         {"report " + path("bad.json") + " --md " + path("r.md") + " -o " + path("r.html"),
          "export --format gbench " + path("bad.json"), "export --format bmf " + path("bad.json"),
          "compare " + path("base.json") + " " + path("bad.json")}) {
      const CliRun r = gcbench(args);
      EXPECT_EQ(r.code, 2) << pointer << ": " << args << "\n" << r.err;
      EXPECT_NE(r.err.find(field), std::string::npos) << pointer << ": " << args << "\n" << r.err;
      EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    }
  }
}

// Empty or impossible selections ran nothing (or the defaults) and said exit 0; a test hook's
// malformed value was "fault: stoi".
TEST_F(FailureCli, EmptyOrImpossibleSelectionsAndBadTestHooksAreBadInput) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"coll --op '' -b 1K -e 1K", "--op '': an empty name"},
      {"coll -d '' -b 1K -e 1K", "-d '': an empty name"},
      {"coll -o '' -b 1K -e 1K", "-o '': an empty name"},
      {"gemm --device cpu --dtype bf16", "--dtype bf16: no GEMM of --device cpu takes it"},
      {"gemm --device cpu --dtype fp32,fp8_e4m3", "--dtype fp8_e4m3"},
      {"run --json ''", "an empty path"},
      {"mem --csv ''", "an empty path"},
      {"report " + measured("base.json") + " -o ''", "an empty path"},
      {"coll --backend threads --ranks 2 -b 1K -e 1K --test-corrupt x:1", "--test-corrupt x:1: expected RANK:INDEX"},
      {"coll --backend threads --ranks 2 -b 1K -e 1K --test-corrupt 1:", "--test-corrupt 1:"},
      {"coll --backend threads --ranks 2 -b 1K -e 1K --test-corrupt -1:0", "--test-corrupt -1:0"},
      {"coll --backend threads --ranks 2 -b 1K -e 1K --test-corrupt 1:99999999999999999999999", "expected RANK"},
  };
  for (const auto& [args, message] : cases) {
    const CliRun r = gcbench(args + " --jsonl " + path("r.jsonl"));
    EXPECT_EQ(r.code, 2) << args << "\n" << r.err;
    EXPECT_NE(r.err.find(message), std::string::npos) << args << "\n" << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << args << ": " << r.err;
    EXPECT_FALSE(fs::exists(path("r.jsonl"))) << args;
  }
  // What a machine lacks is still a WAIVED row with the reason, not a refusal.
  if (gcbench("gemm --device gpu --dtype bf16 --sizes 64 -q").code == 0) {
    const CliRun r = gcbench("gemm --device all --dtype bf16 --sizes 64 --json " + path("w.json"));
    EXPECT_EQ(r.code, 0) << r.err;
  }
}

// Values near the ends of double: no NaN or Inf in any output (the SVG had -nan coordinates,
// compare printed inf%), and no number printed with hundreds of digits.
TEST_F(FailureCli, HugeValuesPrintFiniteAndShort) {
  const nlohmann::json good = nlohmann::json::parse(read_file(measured("base.json")));
  const std::vector<double> values = {1.7e308, -1.7e308, 1e300, -1e300, 1.5e308, 4.9e-324};
  nlohmann::json huge = good;
  huge["results"] = nlohmann::json::array();
  for (size_t i = 0; i < values.size(); ++i) {
    nlohmann::json r = good["results"][0];
    r["params"]["bytes"] = 4096 * (i + 1);  // a sweep: one chart line over the sizes
    r["key"] = "mem/copy/host";
    for (auto& m : r["metrics"]) m["value"] = values[i];
    huge["results"].push_back(r);
  }
  std::ofstream(path("huge.json")) << huge.dump();
  nlohmann::json flipped = huge;
  for (auto& r : flipped["results"])
    for (auto& m : r["metrics"]) m["value"] = -m["value"].get<double>() * 0.5;
  std::ofstream(path("flipped.json")) << flipped.dump();
  const CliRun report = gcbench("report " + path("huge.json") + " " + path("flipped.json") + " -o " + path("r.html") +
                                " --md " + path("r.md") + " --csv " + path("r.csv"));
  EXPECT_EQ(report.code, 0) << report.err;
  const CliRun compare = gcbench("compare " + path("huge.json") + " " + path("flipped.json") + " --md " + path("c.md") +
                                 " --junit " + path("c.xml"));
  EXPECT_NE(compare.code, 2) << compare.err;
  const std::regex bad(R"((^|[^a-zA-Z])(-?nan|-?inf)([^a-zA-Z]|$)|[0-9]{30})", std::regex::icase);
  for (const auto& [what, text] :
       std::vector<std::pair<std::string, std::string>>{{"report -o", read_file(path("r.html"))},
                                                        {"report --md", read_file(path("r.md"))},
                                                        {"compare", compare.out},
                                                        {"compare --md", read_file(path("c.md"))},
                                                        {"compare --junit", read_file(path("c.xml"))}}) {
    EXPECT_FALSE(text.empty()) << what;
    std::smatch m;
    EXPECT_FALSE(std::regex_search(text, m, bad)) << what << ": '" << m.str() << "' in\n"
                                                  << text.substr(m.position() > 80 ? m.position() - 80 : 0, 200);
  }
  EXPECT_NE(read_file(path("r.html")).find("<svg"), std::string::npos);  // the charts were drawn
}

}  // namespace
}  // namespace gcb
