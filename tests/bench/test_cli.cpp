// The gcbench binary as a user meets it: exit codes, one clear line on bad input, nothing
// written when the input is bad, and a CPU-only run that produces a valid result document.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <filesystem>
#include <regex>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "bench/families.hpp"
#include "collectives/factory.hpp"
#include "core/gpu.hpp"
#include "reports/result.hpp"
#include "tests/bench/run_cli.hpp"

namespace gcb {
namespace {

namespace fs = std::filesystem;

using bench::families;
using bench::Family;
using test::CliRun;

CliRun gcbench(const std::string& args, bool merge_stderr = false) { return test::run_gcbench(args, merge_stderr); }
CliRun run_gcbench_prefixed(const std::string& prefix, const std::string& args) {
  return test::run_gcbench(args, false, prefix + " ");
}

// Help text as one line with single spaces: CLI11 wraps and indents long descriptions.
std::string squeezed_help(const std::string& args) {
  std::string help = gcbench(args).out;
  std::replace(help.begin(), help.end(), '\n', ' ');
  std::string out;
  for (char c : help)
    if (c != ' ' || out.empty() || out.back() != ' ') out += c;
  return out;
}

class Cli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("gcb-cli-" + std::to_string(getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const char* name) const { return (dir_ / name).string(); }
  fs::path dir_;
};

// Tiny sizes and budgets so a whole mem run takes a fraction of a second.
const std::string kFast =
    " --device cpu --size 64K --latency-max 64K --kernels copy,triad,dot --min-samples 3 --max-time 0.2 --min-time 0 ";

TEST_F(Cli, BadInputExitsTwoWithOneLineAndWritesNothing) {
  const std::string outs = " --json " + path("r.json") + " --jsonl " + path("r.jsonl") + " --csv " + path("r.csv");
  for (const std::string bad :
       {"mem --size 12Q", "mem --bogus-flag", "mem --device gpu:7", "mem --device tpu", "mem --dtype int8",
        "mem --kernels triad,fly", "mem --min-samples 5 --max-samples 2", "mem --noise 0", "mem --device cpu --size 1P",
        "mem --device cpu --size 64T", "nosuchcommand"}) {
    const CliRun r = gcbench(bad + outs);
    EXPECT_EQ(r.code, 2) << bad << "\n" << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << bad << ": " << r.err;
    EXPECT_FALSE(fs::exists(path("r.json")) || fs::exists(path("r.jsonl")) || fs::exists(path("r.csv"))) << bad;
  }
  const CliRun missing_dir = gcbench("mem --json " + path("no/such/dir/r.json"));
  EXPECT_EQ(missing_dir.code, 2);
  EXPECT_NE(missing_dir.err.find("does not exist"), std::string::npos) << missing_dir.err;
  EXPECT_NE(gcbench("mem --size 12Q").err.find("12Q"), std::string::npos);
}

// A typo in a subcommand, a flag, a model, a collective or a listed value gets the closest name
// (core/suggest.hpp), still one line and exit 2.
TEST_F(Cli, TyposGetTheClosestName) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"trian", "unknown subcommand 'trian' (did you mean 'train'?) (see gcbench --help)"},
      {"nosuchcommand", "unknown subcommand 'nosuchcommand' (see gcbench --help; known: mem, "},
      {"train --modle tiny", "unknown flag '--modle' (did you mean '--model'?); the following arguments were not "},
      {"mem --sise=4K", "unknown flag '--sise' (did you mean '--size'?)"},
      {"mem --bogus-flag", "(see gcbench mem --help)"},
      {"train --model gpt2-medum", "unknown model 'gpt2-medum' (did you mean 'gpt2-medium'?)"},
      {"coll --op alreduce -b 1K -e 1K", "--op alreduce (did you mean 'all_reduce'?): expected a collective"},
      {"mem --kernels triad,tirad", "tirad (did you mean 'triad'?): expected one of"},
  };
  for (const auto& [args, message] : cases) {
    const CliRun r = gcbench(args);
    EXPECT_EQ(r.code, 2) << args << "\n" << r.err;
    EXPECT_NE(r.err.find(message), std::string::npos) << args << "\n" << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << args << ": " << r.err;
  }
  EXPECT_EQ(gcbench("mem --bogus-flag").err.find("did you mean"), std::string::npos);
}

TEST_F(Cli, HelpAndVersion) {
  const CliRun v = gcbench("--version");
  EXPECT_EQ(v.code, 0);
  EXPECT_EQ(v.out.rfind("gcbench ", 0), 0u) << v.out;
  for (const char* sub : {"--help", "mem --help", "run --help"}) {
    const CliRun h = gcbench(sub);
    EXPECT_EQ(h.code, 0) << sub;
    EXPECT_NE(h.out.find("Usage"), std::string::npos) << sub;
  }
  EXPECT_NE(gcbench("mem --help").out.find("--jsonl"), std::string::npos);
  // The subcommands in the order of the family table (bench/families.cpp), each one line.
  const std::string help = gcbench("--help").out;
  size_t at = help.find("Subcommands:");
  ASSERT_NE(at, std::string::npos) << help;
  for (const Family& f : families()) {
    const std::string name = f.name;
    const size_t next = help.find(fmt::format("\n  {} ", name), at);
    ASSERT_NE(next, std::string::npos) << name << " missing or out of order:\n" << help;
    at = next + 1;
  }
}

// `run --suite full` keeps the quick presets of train, coll and p2p: its help says so, not
// "every default". The --backend help lists the communicator table's names.
TEST_F(Cli, HelpSaysWhatItRuns) {
  const std::string run_help = squeezed_help("run --help");
  EXPECT_NE(run_help.find("train, coll and p2p run their quick presets in both suites"), std::string::npos) << run_help;
  for (const char* sub : {"coll --help", "p2p --help", "scan --help"})
    EXPECT_NE(gcbench(sub).out.find(communicator_backend_names()), std::string::npos) << sub;
}

// --timeout's help is one sentence in every family that has it: "Seconds <what> may last before
// the run ends with exit 3" (coll and p2p once read "Seconds a rank may wait in ... may last").
// mem's own default budget per case (1 s, not the harness's 5 s) is what its help shows.
TEST_F(Cli, MemHelpShowsItsOwnMaxTime) {
  EXPECT_NE(squeezed_help("mem --help").find("--max-time FLOAT=1 "), std::string::npos) << squeezed_help("mem --help");
  EXPECT_NE(squeezed_help("gemm --help").find("--max-time FLOAT=5 "), std::string::npos);
}

TEST_F(Cli, TimeoutHelpIsOneSentence) {
  for (const char* sub : {"coll --help", "p2p --help", "train --help"}) {
    const std::string help = squeezed_help(sub);
    const size_t at = help.find("--timeout");
    ASSERT_NE(at, std::string::npos) << sub;
    const std::string text = help.substr(at, help.find("exit 3", at) - at);
    EXPECT_NE(text.find(" may last before the run ends with "), std::string::npos) << sub << ": " << text;
    EXPECT_EQ(text.find("may wait"), std::string::npos) << sub << ": " << text;
  }
}

// The default `names` shows in `help` ("-n,--iters INT=20" gives "20"), "" when it shows none,
// "<missing>" when the option is not there.
std::string help_default(const std::string& help, const std::string& names) {
  const size_t at = help.find("\n  " + names + " ");
  if (at == std::string::npos) return "<missing>";
  const size_t type = at + 4 + names.size();  // past "\n  NAMES "
  const std::string token = help.substr(type, help.find_first_of(" \n", type) - type);
  const size_t eq = token.find('=');
  return eq == std::string::npos ? std::string() : token.substr(eq + 1);
}

// `coll --help` offers only the harness options coll honours, with the defaults a run without them
// uses, as its header prints them (it once showed --warmup=3, --max-samples=1000, --noise=0.005,
// --cold and --profile-range, the other families' harness, while the header said warm-up 1,
// samples 10..10).
TEST_F(Cli, CollHelpShowsTheDefaultsCollUses) {
  const std::string help = gcbench("coll --help").out;
  for (const char* unused : {"--cold", "--profile-range"})
    EXPECT_EQ(help.find(unused), std::string::npos) << unused << " is not used by coll:\n" << help;
  EXPECT_EQ(help_default(help, "--noise FLOAT"), "") << "--noise is off unless given:\n" << help;
  const CliRun r = gcbench("coll --backend threads --ranks 2 -b 8 -e 8");
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(r.out, m, std::regex("warmup iters: (\\d+)  iters: (\\d+)  validation: (\\d+)")))
      << r.out;
  EXPECT_EQ(help_default(help, "-w,--warmup_iters,--warmup"), m[1].str()) << help;
  EXPECT_EQ(help_default(help, "-n,--iters"), m[2].str()) << help;
  EXPECT_EQ(help_default(help, "-c,--check"), m[3].str()) << help;
  ASSERT_TRUE(std::regex_search(r.out, m, std::regex("samples: (\\d+)\\.\\.(\\d+) within ([0-9.]+) s"))) << r.out;
  EXPECT_EQ(help_default(help, "--min-samples"), m[1].str()) << help;
  EXPECT_EQ(help_default(help, "--max-samples"), m[2].str()) << help;
  EXPECT_EQ(help_default(help, "--max-time"), m[3].str()) << help;
}

// nccl-tests' -g (GPUs of this process) is --ranks; -n, -w, -c, -d keep their meanings. The header
// names the library measured: the threads backend is none, and it says so rather than "NCCL".
TEST_F(Cli, CollTakesNcclTestsFlagsAndNamesItsLibrary) {
  const std::string f = path("g.json");
  const CliRun r = gcbench("coll --backend threads -g 3 -b 64 -e 64 -n 2 -w 0 -c 1 -d double --json " + f);
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("ranks: 3 "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("warmup iters: 0  iters: 2  validation: 1"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("library: threads (in-process, shared memory)\n"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("NCCL"), std::string::npos) << r.out;
  const ResultDocument doc = load_document(f);
  ASSERT_FALSE(doc.results.empty());
  for (const auto& res : doc.results) {
    EXPECT_EQ(res.params.at("ranks"), 3) << res.key;
    EXPECT_EQ(res.params.at("dtype"), "fp64") << res.key;
  }
  // Where each process is one rank, -g above 1 would be ignored: refused instead.
  if (gcbench("coll --help").out.find("gloo") != std::string::npos) {
    const CliRun g = gcbench("coll --backend gloo -g 2 -b 8 -e 8");
    if (g.err.find("not built") == std::string::npos) {
      EXPECT_EQ(g.code, 2) << g.out << g.err;
      EXPECT_NE(g.err.find("-g 2"), std::string::npos) << g.err;
    }
  }
}

// `gcbench p2p` prints each result once, in its own view (it once printed every rank pair three
// times: a generic row as it ended, in its matrix, and in the generic summary table); JSON keeps
// every result.
TEST_F(Cli, P2pPrintsEachResultOnce) {
  const std::string f = path("p2p.json");
  const CliRun r =
      gcbench("p2p --mode rank --backend threads --ranks 2 --size 64K --min-samples 2 --max-time 0.2 --json " + f);
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  size_t titles = 0;
  for (size_t at = r.out.find("p2p/latency"); at != std::string::npos; at = r.out.find("p2p/latency", at + 1)) ++titles;
  EXPECT_EQ(titles, 1u) << r.out;
  EXPECT_EQ(r.out.find("status         value unit"), std::string::npos) << "no generic table:\n" << r.out;
  // ns, or µs from 10 µs on (rank threads sharing a loaded host's cores).
  EXPECT_TRUE(std::regex_search(r.out, std::regex("\\[(ns|µs) one-way = round-trip time / 2 \\(osu_latency\\)\\]")))
      << r.out;
  EXPECT_EQ(load_document(f).results.size(), 6u);  // 2 ordered pairs x bandwidth, bidir, latency
}

TEST_F(Cli, CpuMemRunWritesAValidDocument) {
  const CliRun r =
      gcbench("mem" + kFast + "--json " + path("r.json") + " --jsonl " + path("r.jsonl") + " --csv " + path("r.csv"));
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  // The results once, on stdout: one table per family (its rows "host/triad …" under "mem"); while
  // it ran, one progress line per finished case on stderr ("[k, t s] mem/host/triad PASS …").
  EXPECT_NE(r.out.find("\nhost/triad "), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("mem/host/triad"), std::string::npos) << r.out;
  EXPECT_TRUE(std::regex_search(r.err, std::regex("\\] +mem/host/triad "))) << r.err;
  EXPECT_EQ(r.err.rfind("[1, ", 0), 0u) << r.err;
  // What it will measure comes first, as STREAM prints its array size, each line within 100 columns.
  EXPECT_EQ(r.out.rfind("mem (host): STREAM arrays of ", 0), 0u) << r.out;
  const std::string plan = r.out.substr(0, r.out.find("\ncase "));
  EXPECT_NE(plan.find("of warm-up and sampling per case (--max-time)"), std::string::npos) << plan;
  for (size_t at = 0, nl; (nl = plan.find('\n', at)) != std::string::npos || at < plan.size(); at = nl + 1) {
    if (nl == std::string::npos) nl = plan.size();
    EXPECT_LE(nl - at, 100u) << plan.substr(at, nl - at);
  }
  const ResultDocument doc = load_document(path("r.json"));
  EXPECT_FALSE(doc.context.at("host").get<std::string>().empty());
  EXPECT_EQ(doc.context.at("seed"), 1);
  // The thread pools the run computed with (one pool: OpenBLAS on OpenMP where it was found).
  const auto& threading = doc.context.at("threading");
  EXPECT_GE(threading.at("openmp").at("max_threads").get<int>(), 1);
#ifdef GCB_EXPECT_BLAS_THREADING
  EXPECT_EQ(threading.at("blas").at("threading"), GCB_EXPECT_BLAS_THREADING) << threading.dump();
  EXPECT_EQ(threading.at("blas").at("library"), "OpenBLAS");
#else
  EXPECT_TRUE(threading.at("blas").is_null()) << threading.dump();
#endif
  size_t passed = 0;
  for (const auto& res : doc.results) {
    EXPECT_NE(res.status, Status::fail) << res.key << ": " << res.reason;
    EXPECT_NE(res.status, Status::error) << res.key << ": " << res.reason;
    if (res.status == Status::pass) ++passed;
    if (res.key == "mem/host/latency" && res.extra.contains("clock_mhz")) {
      // cycles = ns × the recorded clock, so the two metrics and the clock must agree.
      const double mhz = res.extra.at("clock_mhz").get<double>();
      EXPECT_NEAR(*res.metric("latency_cycles")->value, *res.metric("latency")->value * mhz / 1e3, 1e-9);
    }
  }
  EXPECT_GE(passed, 6u);  // 3 kernels + fp64 triad + classic peer + latency + ratio
  EXPECT_EQ(load_document(path("r.jsonl")).results.size(), doc.results.size());  // every row, as it ended
  EXPECT_TRUE(fs::file_size(path("r.csv")) > 0);
}

// coll's --seed reaches every rank's payload: each measured cell records the seed its verifiable
// inputs were built from, and the check still finds nothing wrong with another seed.
TEST_F(Cli, CollSeedIsThePayloadsSeed) {
  for (const int seed : {1, 7}) {
    const std::string f = path(fmt::format("coll{}.json", seed).c_str());
    const CliRun r = gcbench(fmt::format(
        "coll --backend threads --ranks 2 -b 8 -e 64 -f 8 --op all_reduce,all_gather --seed {} --json {} -q", seed, f));
    ASSERT_EQ(r.code, 0) << r.out << r.err;
    const ResultDocument doc = load_document(f);
    EXPECT_EQ(doc.context.at("seed"), seed);
    size_t cells = 0;
    for (const auto& res : doc.results) {
      if (!res.extra.contains("wrong")) continue;  // the α–β fits
      ++cells;
      EXPECT_EQ(res.extra.at("seed"), seed) << res.key;
      EXPECT_EQ(res.extra.at("wrong"), 0) << res.key;
    }
    // (all_reduce 8 and 64 B, all_gather 64 B: 8 B rounds down to no 16-byte shard) × out of / in place
    EXPECT_EQ(cells, 6u);
  }
}

// The host latency rows differ only in their working set: the summary has it as a column, exact in
// binary units, and the params the rows share once above the table.
TEST_F(Cli, SummaryShowsTheParamsThatTellRowsApartInFull) {
  const CliRun r = gcbench("mem --device cpu --group latency --latency-min 4K --latency-max 64K --max-time 0.2");
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  const size_t table = r.out.find("\nmem: device=cpu stride_bytes=64 B\n");
  ASSERT_NE(table, std::string::npos) << r.out;
  const std::string summary = r.out.substr(table);
  EXPECT_NE(summary.find("case         working_set_bytes status"), std::string::npos) << summary;
  for (const char* ws : {"4 KiB", "16 KiB", "64 KiB"})
    EXPECT_NE(summary.find(fmt::format("host/latency {:>17} PASS", ws)), std::string::npos) << ws << "\n" << summary;
}

// In a log (stdout and stderr into one file) what mem prints before its cases, its array size,
// comes before the first progress line: stdout was once flushed only at the end, so the plan of
// the run came after every case.
TEST_F(Cli, PlanOfTheRunComesBeforeProgressInALog) {
  const CliRun r = gcbench("mem --device cpu --group latency --latency-min 4K --latency-max 16K --max-time 0.1",
                           /*merge_stderr=*/true);
  ASSERT_EQ(r.code, 0) << r.out;
  const size_t plan = r.out.find("mem (host):");
  const size_t first = r.out.find("[1, ");
  ASSERT_NE(plan, std::string::npos) << r.out;
  ASSERT_NE(first, std::string::npos) << r.out;
  EXPECT_LT(plan, first) << r.out;
}

TEST_F(Cli, QuickSuiteOnCpuOnly) {
  const CliRun r = gcbench("run --suite quick --device cpu --max-time 0.2 --json " + path("q.json"));
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  const ResultDocument doc = load_document(path("q.json"));
  bool ratio = false;
  for (const auto& res : doc.results) ratio = ratio || res.key == "mem/host/triad_vs_classic_stream";
  EXPECT_TRUE(ratio);
  // The families run in the order of the family table (bench/families.cpp), each once.
  std::vector<std::string> order;
  for (const auto& res : doc.results)
    if (order.empty() || order.back() != res.family()) order.push_back(res.family());
  std::vector<std::string> suite;
  for (const Family& f : families())
    if (f.run_in_suite) suite.push_back(f.name);
  EXPECT_EQ(order, suite);
}

// --device gpu asks for GPU work: without a GPU the run is a fault (exit 3, one line), not a pass
// on CPU work. --families runs the named families, each announced on stderr.
TEST_F(Cli, RunOnGpuWithoutAGpuFailsAndFamiliesChooses) {
  if (gpu::device_count() > 0) GTEST_SKIP() << "this machine has a GPU";
  const CliRun none = gcbench("run --suite quick --device gpu --json " + path("g.json"));
  EXPECT_EQ(none.code, 3) << none.out << none.err;
  EXPECT_NE(none.err.find("run --device gpu: no usable GPU"), std::string::npos) << none.err;
  EXPECT_EQ(std::count(none.err.begin(), none.err.end(), '\n'), 1) << none.err;
  EXPECT_FALSE(std::filesystem::exists(path("g.json")));
  const CliRun r = gcbench("run --suite quick --device cpu --families gemm --max-time 0.2 --json " + path("f.json"));
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_NE(r.err.find("run: [1/1] gemm ..."), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("run: [1/1] gemm done:"), std::string::npos) << r.err;
  for (const auto& res : load_document(path("f.json")).results) EXPECT_EQ(res.family(), "gemm") << res.key;
}

// run --help shows the stopping rule each suite uses, generated from the quick preset.
TEST_F(Cli, RunHelpShowsEachSuitesStoppingRule) {
  const CliRun r = gcbench("run --help");
  ASSERT_EQ(r.code, 0) << r.err;
  for (const char* want : {"--max-time FLOAT=1 (quick), 5 (full)", "--noise FLOAT=0.02 (quick), 0.005 (full)",
                           "--min-time FLOAT=0.05 (quick), 0.1 (full)", "--min-samples INT=10 (quick), 10 (full)"}) {
    EXPECT_NE(r.out.find(want), std::string::npos) << want << "\n" << r.out;
  }
}

// On one CPU the quick suite's 2 rank threads would time the scheduler: coll's entry, p2p's rank
// pairs and train's entry are WAIVED, each saying why, and nothing of theirs is timed.
TEST_F(Cli, QuickSuiteRankThreadsWaivedOnOneCpu) {
  const CliRun r = run_gcbench_prefixed(
      "taskset -c 0", "run --suite quick --device cpu --families coll,p2p,train -q --json " + path("one.json"));
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  std::set<std::string> waived;
  for (const auto& res : load_document(path("one.json")).results) {
    EXPECT_NE(res.status, Status::pass) << res.key;  // nothing timed
    if (res.reason.find("rank threads and this process may use 1 CPU") != std::string::npos) waived.insert(res.key);
  }
  EXPECT_EQ(waived, (std::set<std::string>{"coll/quick", "p2p/rank_pairs", "train/quick"}));
}

}  // namespace
}  // namespace gcb
