// `gcbench plan` as a user meets it: the issue's headline plan (GPT-3 175B on 1024 H100s) prints a
// ranked, explained table and writes schema results in seconds; --layout predicts one published
// Megatron-LM row; invalid requests exit 2 with one line; --verify runs layouts through the
// training library and judges their memory (exactly: the engine is deterministic); --published
// reproduces Narayanan et al. 2021 Table 1.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "reports/result.hpp"
#include "tests/bench/run_cli.hpp"

namespace gcb::bench {
namespace {

namespace fs = std::filesystem;

test::CliRun plan(const std::string& args) { return test::run_gcbench("plan " + args, true); }

std::string temp(const std::string& name) { return test::temp_path("plan", name); }

// `what` in the output, also where plan wrapped it at 100 columns (a line break and the deeper
// indent of a continuation line in place of a space).
bool has(const std::string& text, const std::string& what) {
  return text.find(what) != std::string::npos ||
         std::regex_replace(text, std::regex("\n {5,}"), " ").find(what) != std::string::npos;
}

TEST(PlanCli, Gpt3OnAThousandH100sRanksExplainsAndWritesResultsInSeconds) {
  const std::string json = temp("175b.json");
  const auto t0 = std::chrono::steady_clock::now();
  const test::CliRun r =
      plan("--model gpt3-175b --gpus 1024 --gpus-per-node 8 --gpu h100-sxm --global-batch 1536 --json " + json);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_EQ(r.code, 0) << r.out;
  // "In seconds": a generous bound for a loaded 2-core VM (it takes about one second here).
  EXPECT_LT(seconds, 30.0);
  EXPECT_TRUE(has(r.out, "cluster: 1024 × H100 SXM5 80GB, 128 nodes of 8")) << r.out;
  EXPECT_TRUE(has(r.out, "best: ")) << r.out;
  EXPECT_TRUE(has(r.out, "out of memory: ")) << r.out;          // the OOM candidates, by how much
  EXPECT_TRUE(has(r.out, "tp 16 > 8 GPUs per node")) << r.out;  // and the ones that cannot run
  EXPECT_TRUE(has(r.out, "pp 128 > 96 layers")) << r.out;
  EXPECT_TRUE(has(r.out, "not divisible by dp")) << r.out;
  // `gcbench report` gives the predictions a section of their own, a layout table.
  const std::string html = temp("175b.html");
  const test::CliRun rep = test::run_gcbench("report " + json + " -o " + html, true);
  ASSERT_EQ(rep.code, 0) << rep.out;
  const std::string page = test::read_file(html);
  fs::remove(html);
  EXPECT_TRUE(has(page, "Planner predictions (plan)"));
  EXPECT_TRUE(has(page, "Predicted, not measured"));
  const ResultDocument doc = load_document(json);
  fs::remove(json);
  EXPECT_TRUE(has(page, doc.results.front().params.at("layout").get<std::string>()));
  int ranked = 0;
  double previous = 0;
  for (const Result& res : doc.results) {
    ASSERT_TRUE(res.key.starts_with("plan/")) << res.key;
    const Metric* step = res.metric("step_time");
    ASSERT_NE(step, nullptr);
    ASSERT_TRUE(step->value.has_value());
    EXPECT_EQ(step->unit, "s");
    ASSERT_NE(res.metric("mfu"), nullptr);
    ASSERT_TRUE(res.extra.contains("memory") && res.extra["memory"].contains("activations")) << res.key;
    ASSERT_TRUE(res.extra.contains("breakdown") && res.extra["breakdown"].contains("bubble")) << res.key;
    if (res.status == Status::pass) {
      ++ranked;
      EXPECT_EQ(res.params.at("rank").get<int>(), ranked);
      EXPECT_GE(*step->value, previous);  // fastest first
      previous = *step->value;
      EXPECT_LE(res.extra["memory_total"].get<double>(), 80.0 * (1 << 30));
      // 96 layers of 12288 on 1024 GPUs: tp must stay within a node, dp·tp·pp = 1024.
      EXPECT_LE(res.params.at("tp").get<int>(), 8);
      EXPECT_EQ(res.params.at("dp").get<int>() * res.params.at("tp").get<int>() * res.params.at("pp").get<int>(), 1024);
    } else {
      EXPECT_EQ(res.status, Status::waived);
      EXPECT_TRUE(has(res.reason, "out of memory")) << res.reason;
      EXPECT_GT(res.extra["memory_total"].get<double>(), 80.0 * (1 << 30));
    }
  }
  EXPECT_EQ(ranked, 10);  // --top 10
}

// --warmup-steps counts --verify's untimed training steps (train's name: --warmup is every other
// family's count of untimed launches); the old spelling still sets it, hidden from --help, and
// says it is deprecated.
TEST(PlanCli, WarmupStepsIsTheFlagAndWarmupItsDeprecatedSpelling) {
  const test::CliRun help = plan("--help");
  EXPECT_TRUE(has(help.out, "--warmup-steps")) << help.out;
  EXPECT_FALSE(has(help.out, "--warmup ")) << help.out;
  const test::CliRun old = plan("--model tiny --gpu h100-sxm --gpus 8 --global-batch 8 --top 1 --warmup 2");
  EXPECT_EQ(old.code, 0) << old.out;
  EXPECT_TRUE(has(old.out, "plan: --warmup is deprecated, use --warmup-steps")) << old.out;
  const test::CliRun now = plan("--model tiny --gpu h100-sxm --gpus 8 --global-batch 8 --top 1 --warmup-steps 2");
  EXPECT_EQ(now.code, 0) << now.out;
  EXPECT_FALSE(has(now.out, "deprecated")) << now.out;
}

// Hugging Face's GPT-2 names are taken; the results name the canonical config.
TEST(PlanCli, HuggingFaceGpt2NamesAreAliasesAndTyposGetASuggestion) {
  const std::string json = temp("alias.json");
  const test::CliRun r = plan("--model gpt2-medium --gpu h100-sxm --gpus 8 --global-batch 8 --top 1 --json " + json);
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_TRUE(has(r.out, "plan: gpt2-350m (L 24 C 1024")) << r.out;
  const ResultDocument doc = load_document(json);
  fs::remove(json);
  ASSERT_FALSE(doc.results.empty());
  EXPECT_EQ(doc.results.front().params.at("model").get<std::string>(), "gpt2-350m");
  const test::CliRun typo = plan("--model gpt2-medum --gpu h100-sxm --gpus 8 --global-batch 8 -q");
  EXPECT_EQ(typo.code, 2) << typo.out;
  EXPECT_TRUE(has(typo.out, "unknown model 'gpt2-medum' (did you mean 'gpt2-medium'?)")) << typo.out;
  EXPECT_TRUE(has(plan("--help").out, "gpt2-medium")) << "help lists the aliases";
}

// No layout fits: exit 5 (not 0), and the last line says so.
TEST(PlanCli, NoLayoutFitsIsExit5WithALastLineSayingSo) {
  const test::CliRun r = plan("--model gpt3-175b --gpu h100-sxm --gpus 8 --global-batch 8 --top 3 --rejected 1");
  EXPECT_EQ(r.code, 5) << r.out;
  std::string text = r.out;
  while (!text.empty() && text.back() == '\n') text.pop_back();
  const std::string last = text.substr(text.rfind('\n') + 1);
  EXPECT_TRUE(last.starts_with("plan: no layout fits: ")) << r.out;
  EXPECT_TRUE(has(last, "(exit 5)")) << last;
  EXPECT_EQ(plan("--model gpt3-175b --gpu h100-sxm --gpus 8 --global-batch 8 -q").code, 5);
}

// A CPU plan without coll results costs its communication with the rank threads' own all_reduce
// (the host probe), says so, and a dp layout's gradient all-reduce takes time; --no-host-probe
// leaves it loudly "not costed".
TEST(PlanCli, CpuPlanCostsCommunicationFromTheThreadsAllReduce) {
  const std::string json = temp("cpu-comm.json");
  const test::CliRun r = plan("--model tiny --gpu cpu --gpus 2 --global-batch 8 --layout dp2 --json " + json);
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_TRUE(has(r.out, "host probe: threads all_reduce of 2 ranks at once")) << r.out;
  EXPECT_FALSE(has(r.out, "not costed")) << r.out;
  const ResultDocument doc = load_document(json);
  fs::remove(json);
  ASSERT_FALSE(doc.results.empty());
  EXPECT_GT(doc.results.front().extra.at("breakdown").at("dp_comm").get<double>(), 0.0);
  const test::CliRun off = plan("--model tiny --gpu cpu --gpus 2 --global-batch 8 --layout dp2 --no-host-probe");
  ASSERT_EQ(off.code, 0) << off.out;
  EXPECT_TRUE(has(off.out, "intra-node link unknown: not costed")) << off.out;
}

// The ranked tables: units in the headers (one time unit for the table, from the slowest step: ms
// for steps under a second), a FLOP/s-per-GPU column equal to the results' metric (model FLOPs per
// step / step time / GPUs, GFLOP/s below 1 TFLOP/s), memory under 1 GiB in MiB or KiB, columns as
// wide as their longest cell, and the time by part in a second table, so each fits 100 columns
// (one table of both once ran to 190).
TEST(PlanCli, RankedTableHasUnitsTflopsPerGpuAndAlignedColumns) {
  const std::string json = temp("table.json");
  const test::CliRun r =
      plan("--model tiny --gpu h100-sxm --gpus 8 --global-batch 64 --top 10 --micro-batch 1,8 --json " + json);
  ASSERT_EQ(r.code, 0) << r.out;
  // tiny's steps on H100s take microseconds: every time column says µs.
  for (const char* header : {"step [µs]", "FLOP/s/GPU", "MFU [%]", "memory", "fwd+bwd [µs]", "bubble [µs]", "dp [µs]"})
    EXPECT_TRUE(has(r.out, header)) << header << "\n" << r.out;
  EXPECT_TRUE(has(r.out, "\ntime per step by part, the layouts above by #\n")) << r.out;
  EXPECT_FALSE(has(r.out, "[s]") || has(r.out, "[ms]")) << r.out;
  EXPECT_FALSE(std::regex_search(r.out, std::regex("[^0-9]0\\.00 GiB"))) << r.out;
  EXPECT_TRUE(has(r.out, " MiB") || has(r.out, " KiB")) << r.out;
  // The ranking is printed once: no generic case table repeats it.
  EXPECT_FALSE(has(r.out, "case ")) << r.out;
  EXPECT_TRUE(has(r.out, "10 passed, 0 failed")) << r.out;
  // Each table's rows end at its header's last column (every column is right-aligned to its
  // widest cell), and fit 100 columns.
  for (const char* first : {"\n # layout", "\n # fwd+bwd"}) {
    const size_t start = r.out.find(first);
    ASSERT_NE(start, std::string::npos) << first << "\n" << r.out;
    const size_t end = r.out.find("\n\n", start + 1);
    std::istringstream table(r.out.substr(start + 1, end - start - 1));
    std::string line;
    std::vector<size_t> widths;
    while (std::getline(table, line)) {
      size_t cols = 0;  // characters, not bytes
      for (const char ch : line) cols += (static_cast<unsigned char>(ch) & 0xC0) != 0x80;
      widths.push_back(cols);
    }
    ASSERT_EQ(widths.size(), 11u) << r.out;  // the header and 10 rows
    for (size_t w : widths) EXPECT_EQ(w, widths.front()) << r.out;
    EXPECT_LE(widths.front(), 100u) << r.out;
  }
  const ResultDocument doc = load_document(json);
  fs::remove(json);
  const Result& best = doc.results.front();
  const Metric* tflops = best.metric("tflops_per_gpu");
  ASSERT_NE(tflops, nullptr);
  EXPECT_EQ(tflops->unit, "TFLOP/s");
  // Megatron's figure: tokens per step × model FLOPs per token / step time / GPUs.
  const double expect = best.model.at("tokens_per_step").get<double>() *
                        best.model.at("flops_per_token_causal").get<double>() / *best.metric("step_time")->value / 8 /
                        1e12;
  EXPECT_NEAR(*tflops->value, expect, 1e-9 * expect);
  EXPECT_NEAR(*tflops->value, *best.metric("mfu")->value / 100 * best.model.at("peak_flops").get<double>() / 1e12,
              1e-6 * expect);
  const bool tera = has(r.out, "TFLOP/s/GPU");
  EXPECT_TRUE(has(r.out, fmt::format(" {:.1f} ", *tflops->value * (tera ? 1 : 1e3)))) << r.out;
}

// Full recomputation in blocks of K layers where it changes what fits: 48 layers of tiny on one
// GPU, a limit between K = 2 (24 block outputs y and two layers' tensors X, 24·y − X less) and
// plain full recomputation: the one fitting row is full-k2, the others are out of memory; with
// --recompute-every 1 nothing fits.
TEST(PlanCli, RecomputeInBlocksRowWhereItChangesWhatFits) {
  const std::string json = temp("blocks.json");
  const std::string args =
      "--model tiny --layers 48 --seq 256 --gpu h100-sxm --gpus 1 --global-batch 1 --micro-batch 1 "
      "--memory-limit 11200000 --offload none";
  const test::CliRun r = plan(args + " --json " + json);
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_TRUE(has(r.out, "1 fit in 10.7 MiB, 3 do not")) << r.out;
  EXPECT_TRUE(std::regex_search(r.out, std::regex(R"(
1 dp1 +1 full-k2 )")))
      << r.out;
  EXPECT_TRUE(has(r.out, "best: dp1-mb1-full-k2")) << r.out;
  EXPECT_TRUE(has(r.out, "dp1-mb1-full ")) << r.out;  // out of memory
  const ResultDocument doc = load_document(json);
  fs::remove(json);
  ASSERT_EQ(doc.results.size(), 4u);
  EXPECT_EQ(doc.results[0].key, "plan/dp1-mb1-full-k2");
  EXPECT_EQ(doc.results[0].status, Status::pass);
  EXPECT_EQ(doc.results[0].params.at("recompute_every").get<int>(), 2);
  EXPECT_EQ(plan(args + " --recompute-every 1 --quiet").code, 5);
}

// --offload where it changes what fits: at 8 MiB no layout fits without offload (the best, full
// recomputation in blocks of 2, needs 10.6 MiB, 7.2 of them master, m and v), while full
// recomputation with the optimizer states on the host needs 3.6 MiB on the device; without full
// recomputation the saved activations (11.7 and 12.6 MiB) fit only swapped to the host as well
// (-offload-swap, 3.2 MiB). The offloaded rows are the only ones, marked, the fastest first, its
// host bytes and copies shown; the offloaded candidates that do not fit, or that fit as fast with
// less offload (full recomputation with swapping too), are left out and counted.
TEST(PlanCli, OffloadRowWhereOnlyItFits) {
  const std::string json = temp("offload.json");
  const std::string args =
      "--model tiny --layers 48 --seq 256 --gpu h100-sxm --gpus 1 --global-batch 1 --micro-batch 1 "
      "--memory-limit 8388608";
  EXPECT_EQ(plan(args + " --offload none --quiet").code, 5);  // nothing fits without offload
  const test::CliRun r = plan(args + " --json " + json);
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_TRUE(has(r.out, "3 fit in 8.0 MiB")) << r.out;
  EXPECT_TRUE(std::regex_search(r.out, std::regex(R"(
1 dp1-offload +1 full )")))
      << r.out;
  EXPECT_TRUE(std::regex_search(r.out, std::regex(R"(
[23] dp1-offload-swap +1 selective )")))
      << r.out;
  EXPECT_TRUE(std::regex_search(r.out, std::regex(R"(
[23] dp1-offload-swap +1 none )")))
      << r.out;
  EXPECT_TRUE(has(r.out, "best: dp1-mb1-full-offload")) << r.out;
  EXPECT_TRUE(has(r.out, "offload copies (and host AdamW)")) << r.out;
  EXPECT_TRUE(has(r.out, "on the host (offload)")) << r.out;
  EXPECT_TRUE(has(r.out, "offloaded candidates left out")) << r.out;
  EXPECT_TRUE(has(r.out, "PCIe Gen5 x16")) << r.out;  // the host link's source, said
  const ResultDocument doc = load_document(json);
  fs::remove(json);
  ASSERT_FALSE(doc.results.empty());
  EXPECT_EQ(doc.results[0].key, "plan/dp1-mb1-full-offload");
  EXPECT_EQ(doc.results[0].status, Status::pass);
  EXPECT_EQ(doc.results[0].params.at("offload").get<std::string>(), "optimizer");
  EXPECT_GT(doc.results[0].extra.at("memory_host").get<double>(), 0.0);
  EXPECT_GT(doc.results[0].extra.at("breakdown").at("offload").get<double>(), 0.0);
  EXPECT_EQ(doc.results[0].extra.at("memory").at("master").get<double>(), 0.0);
  // The swapped row: both offloads, the activations' host bytes beside the optimizer states'.
  const auto swapped = std::find_if(doc.results.begin(), doc.results.end(),
                                    [](const Result& x) { return x.key == "plan/dp1-mb1-none-offload-swap"; });
  ASSERT_NE(swapped, doc.results.end());
  EXPECT_EQ(swapped->params.at("offload").get<std::string>(), "optimizer+activations");
  EXPECT_GT(swapped->extra.at("memory_host").get<double>(), doc.results[0].extra.at("memory_host").get<double>());
}

// --host-memory: offloaded states and activations must fit the node's host memory, shared by its
// ranks. The same 8 MiB device as above: with 10 MiB of host the optimizer-offloaded row (9.5 MiB
// on the host) still fits, the swapped rows without full recomputation (20.9 and 21.9 MiB) do not;
// with 4 MiB nothing fits (exit 5) and the closest rows are those short of host memory, said so.
TEST(PlanCli, HostMemoryLimitsOffloadedRows) {
  const std::string args =
      "--model tiny --layers 48 --seq 256 --gpu h100-sxm --gpus 1 --global-batch 1 --micro-batch 1 "
      "--memory-limit 8388608";
  const test::CliRun r = plan(args + " --host-memory 10M");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_TRUE(has(r.out, "host memory for offload: 10.0 MiB per node, 10.0 MiB per rank (flag:--host-memory)"))
      << r.out;
  EXPECT_TRUE(has(r.out, "best: dp1-mb1-full-offload ")) << r.out;
  EXPECT_FALSE(has(r.out, "-offload-swap  1 selective")) << r.out;
  EXPECT_FALSE(has(r.out, "-offload-swap  1 none")) << r.out;
  const std::string json = temp("host.json");
  const test::CliRun n = plan(args + " --host-memory 4M --json " + json);
  EXPECT_EQ(n.code, 5) << n.out;
  EXPECT_TRUE(std::regex_search(n.out, std::regex(R"(
  dp1-mb1-full-offload +host 9\.5 MiB per rank, 5\.5 MiB over its 4\.0 MiB)")))
      << n.out;
  EXPECT_TRUE(has(n.out, "more host memory than 4 MiB per rank")) << n.out;
  const ResultDocument doc = load_document(json);
  fs::remove(json);
  const auto host_short = std::find_if(doc.results.begin(), doc.results.end(),
                                       [](const Result& x) { return x.key == "plan/dp1-mb1-full-offload"; });
  ASSERT_NE(host_short, doc.results.end());
  EXPECT_EQ(host_short->status, Status::waived);
  EXPECT_TRUE(has(host_short->reason, "out of host memory")) << host_short->reason;
  // Without the flag nothing is checked, and the header says so.
  EXPECT_TRUE(has(plan(args).out, "host memory for offload: not checked (give --host-memory)"));
  EXPECT_EQ(plan("--model tiny --gpu cpu --gpus 2 --global-batch 2 --host-memory 1G").code, 2);
}

TEST(PlanCli, LayoutPredictsOnePublishedRow) {
  // Narayanan et al. 2021 Table 1, GPT 145.6B: tp 8, pp 8, dp 24 on 1536 A100s, micro-batch 2,
  // interleaved with 2 model chunks, full recomputation.
  const test::CliRun r = plan(
      "--model gpt3-175b --layers 80 --hidden 12288 --heads 96 --vocab 51200 --gpu a100-sxm4-80gb --gpus 1536 "
      "--global-batch 2304 --layout dp24-tp8-pp8-1f1b-v2 --micro-batch 2 --recompute full --attention materialized-dropout "
      "--pp-scatter-gather");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_TRUE(has(r.out, "candidates: 1 predicted")) << r.out;
  EXPECT_TRUE(has(r.out, "dp24-tp8-pp8-1f1b-v2")) << r.out;
}

TEST(PlanCli, TopologyGivesGpusPerNodeNvlinksAndNics) {
  // An 8 × H100 VM's NCCL topology: 18 NVLinks per GPU (× 25 GB/s = 450 GB/s bus bandwidth, an
  // 8-rank all-reduce's algorithm bandwidth 450 / (2·7/8) = 257.1 GB/s) and its NICs per GPU.
  const test::CliRun r = plan(
      "--model gpt3-6.7b --gpu h100-sxm --nodes 4 --global-batch 256 --top 1 "
      "--topo tests/fixtures/topology/nccl-topo_8xh100-vm_ibm-cloud.xml");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_TRUE(has(r.out, "cluster: 32 × H100 SXM5 80GB, 4 nodes of 8")) << r.out;
  EXPECT_TRUE(has(r.out, "β 257.1 GB/s (topology")) << r.out;
  EXPECT_TRUE(has(r.out, "18 NVLinks per GPU")) << r.out;
  EXPECT_TRUE(has(r.out, "NIC rate per GPU")) << r.out;
}

TEST(PlanCli, InvalidRequestsExit2WithOneLine) {
  const std::pair<const char*, const char*> cases[] = {
      {"--model tiny --gpu cpu --gpus 2", "--global-batch G"},
      {"--model tiny --gpu b300-typo --gpus 8 --global-batch 8", "b300-typo"},
      {"--model tiny --gpu cpu --gpus 2 --global-batch 4 --layout dp2-tp2", "≠"},
      {"--model tiny --gpu cpu --gpus 2 --global-batch 4 --recompute some",
       "--recompute: some (did you mean 'none'?): expected one of none, selective, full"},
      {"--model tiny --gpu cpu --gpus 2 --global-batch 4 --recompute-every 0",
       "--recompute-every: 0: expected auto or K ≥ 1 layers"},
      {"--model tiny --gpu cpu --gpus 2 --global-batch 4 --recompute-every often",
       "--recompute-every: often: expected auto or K ≥ 1 layers"},
      // The list flags are typed by CLI11: each item is checked where the flag is read.
      {"--model tiny --gpu cpu --gpus 2 --global-batch 4 --micro-batch 1,0",
       "--micro-batch: '0' is not a positive number"},
      {"--model tiny --gpu cpu --gpus 2 --global-batch 4 --micro-batch 1,two",
       "--micro-batch: 'two' is not a positive number"},
      {"--model tiny --gpu cpu --gpus 2 --global-batch 4 --zero 0,4", "--zero: 4: expected one of 0, 1, 2, 3"},
      {"--model tiny --gpu cpu --gpus 2 --global-batch 4 --sp off,yes", "--sp: yes: expected one of off, on"},
      {"--model tiny --gpu cpu --gpus 2 --global-batch 4 --overlap maybe", "--overlap: maybe: expected one of off, on"},
      {"--model tiny --gpu cpu --gpus 2 --global-batch 4 --virtual-stages 1,0",
       "--virtual-stages: '0' is not a positive number"},
      {"--model tiny --gpu cpu --gpus 2 --global-batch 4 --attention flsh",
       "--attention: flsh (did you mean 'flash'?): expected one of flash, materialized, materialized-dropout"},
      {"--model tiny --gpu h100-sxm --gpus 8 --global-batch 8 --memory-limit 80Q",
       "--memory-limit: invalid size '80Q'"},
      {"--model tiny --gpu cpu --gpus 2 --global-batch 4 --compute-efficiency 1.5",
       "--compute-efficiency: '1.5' is not a fraction in (0, 1]"},
      {"--model tiny --gpu a101 --gpus 8 --global-batch 8", "--gpu: unknown GPU 'a101' (did you mean"},
      {"--model tiny --gpu h100-sxm --gpus 8 --global-batch 8 --host-memory 2TT", "--host-memory: invalid size '2TT'"},
      {"--model tiny --gpu cpu --gpus 2 --global-batch 4 --recompute none --recompute-every 2",
       "--recompute must include full"},
      {"--model tiny --gpu cpu --gpus 2 --global-batch 4 --layout dp2 --recompute full --recompute-every 3",
       "--recompute-every 3 > 2 layers of the smallest pipeline stage"},
      {"--model tiny --gpu cpu --gpus 2 --global-batch 3 --layout dp2", "not divisible"},
      {"--model tiny --gpu cpu --gpus 2 --global-batch 4 --offload optimizer", "offload frees none"},
      {"--model tiny --gpu h100-sxm --gpus 8 --global-batch 8 --offload some",
       "--offload: some (did you mean 'none'?): expected one of none, optimizer, activations, optimizer+activations"},
      {"--model tiny --gpu h100-sxm --gpus 8 --global-batch 8 --schedule 1f1b,zigzag",
       "--schedule: zigzag: expected one of gpipe, 1f1b"},
      {"--model tiny --gpu h100-sxm --gpus 8 --global-batch 8 --precision fp8",
       "--precision: fp8: expected one of fp32, bf16"},
      {"--model tiny --gpu h100-sxm --gpus 8 --global-batch 8 --verify 1",
       "--verify runs layouts on this machine's CPU"},
  };
  for (const auto& [args, msg] : cases) {
    const test::CliRun r = plan(std::string(args) + " --quiet");
    EXPECT_EQ(r.code, 2) << args << "\n" << r.out;
    EXPECT_TRUE(has(r.out, msg)) << args << "\n" << r.out;
  }
}

// Memory is judged exactly and the step time not at all (--verify-tolerance 0): timing on a
// shared 2-core VM is not a unit test (docs/readme-plan.md has the benchmark and its numbers).
TEST(PlanCli, VerifyRunsTheTopLayoutsThroughTheTrainingLibraryAndMatchesTheirMemory) {
  const std::string json = temp("verify.json");
  const test::CliRun r = plan(
      "--model tiny --gpu cpu --gpus 2 --global-batch 4 --micro-batch 1,2 --recompute none,full --zero 0,2 --overlap off "
      "--verify 4 --steps 1 --warmup-steps 0 --verify-tolerance 0 --seed 9 --json " +
      json);
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_TRUE(has(r.out, "verify: 4 layouts")) << r.out;
  EXPECT_FALSE(has(r.out, "DIFFERENT")) << r.out;
  // The host probe ran with both ranks at once (the ranks share this host's cores) and, without
  // mem results, measured the memory roof itself.
  EXPECT_TRUE(has(r.out, "shared host: host probe: 2 ranks")) << r.out;
  EXPECT_TRUE(has(r.out, "host probe: STREAM triad")) << r.out;
  EXPECT_TRUE(has(r.out, "gelu_forward ")) << r.out;
  EXPECT_TRUE(has(r.out, "with every rank at once (the slowest rank's;")) << r.out;  // the probe's rank statistic
  // The best layout is judged, ties with the fastest named (or none).
  EXPECT_TRUE(has(r.out, "tied with the fastest (their rounds overlap its rounds' min–max): ")) << r.out;
  EXPECT_TRUE(has(r.out, "best layout: right") || has(r.out, "best layout: not right")) << r.out;
  const ResultDocument doc = load_document(json);
  fs::remove(json);
  int verified = 0, trained = 0;
  for (const Result& res : doc.results) {
    if (res.key.starts_with("plan/verify/")) {
      ++verified;
      EXPECT_EQ(res.status, Status::pass) << res.key << ": " << res.reason;
      EXPECT_GT(*res.metric("step_time_measured")->value, 0.0);
      EXPECT_TRUE(res.extra.contains("tied_with_fastest")) << res.key;
      EXPECT_GT(res.extra.value("rank0_gemm_predicted", 0.0), 0.0) << res.key;
    }
    if (res.family() == "train") {
      ++trained;
      EXPECT_EQ(res.extra["seeds"]["data"], 9u) << res.key;  // --seed: the runs' synthetic tokens
    }
  }
  EXPECT_EQ(verified, 4);
  EXPECT_EQ(trained, 4);
}

TEST(PlanCli, PublishedTableWithin15PercentPerRow) {
  const std::string json = temp("published.json");
  const test::CliRun r =
      plan("--published tests/fixtures/planner/narayanan2021-table1.csv --gpu a100-sxm4-80gb --json " + json);
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_TRUE(has(r.out, "10 runs: mean |error|")) << r.out;
  const ResultDocument doc = load_document(json);
  fs::remove(json);
  ASSERT_EQ(doc.results.size(), 10u);
  for (const Result& res : doc.results) EXPECT_LT(std::abs(*res.metric("error")->value), 15.0) << res.key;
}

}  // namespace
}  // namespace gcb::bench
