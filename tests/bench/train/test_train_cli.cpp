// `gcbench train`: invalid combinations exit 2 with one line before any allocation; a sweep writes
// one schema result per layout with the extra fields `gcbench report` reads; the quick-suite
// sweep; --dump runs are bitwise reproducible. (The sweep grammar: tests/models/model/test_sweep.cpp.)
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <numbers>
#include <sstream>
#include <string>

#include "bench/common/runner.hpp"
#include "bench/train/train.hpp"
#include "bench/train/train_ledger.hpp"
#include "core/error.hpp"
#include "gcb/config.hpp"
#include "core/gpu.hpp"
#include "reports/result.hpp"
#include "tests/bench/run_cli.hpp"

namespace gcb::bench {
namespace {

namespace fs = std::filesystem;

test::CliRun gcbench(const std::string& args) { return test::run_gcbench("train " + args, true); }

std::string temp(const std::string& name) { return test::temp_path("train", name); }

std::string slurp(const std::string& path) { return test::read_file(path); }

TEST(TrainCli, InvalidCombinationsExit2WithOneLine) {
  const std::pair<const char*, const char*> cases[] = {
      {"--tp 3", "does not divide heads"},
      {"--pp 3", "pp 3 > layers 2"},
      {"--dp 2 --ranks 4", "≠ 4 ranks"},
      {"--dp 2 --global-batch 3", "not divisible"},
      {"--tp 2 --zero 4", "--zero: 4: expected one of 0, 1, 2, 3"},
      {"--recompute some", "--recompute: some (did you mean 'none'?): expected one of none, selective, full"},
      {"--recompute full --recompute-every 0", "--recompute-every must be ≥ 1"},
      {"--recompute-every 2", "--recompute-every 2 needs --recompute full"},
      {"--recompute full --recompute-every 3", "--recompute-every 3 > 2 layers of the smallest pipeline stage"},
      {"--schedule zigzag", "--schedule: zigzag: expected one of gpipe, 1f1b"},
      {"--sweep tp2,bogus --ranks 2", "unknown token 'bogus'"},
      {"--precision fp8", "--precision: fp8: expected one of fp32, bf16"},
      {"--offload swap", "--offload: swap: expected one of none, optimizer, activations, optimizer+activations"},
      {"--backend tpu", "--backend: tpu (did you mean 'cpu'?): expected one of cpu, cuda"},
      {"--backend cdua", "--backend: cdua (did you mean 'cuda'?): expected one of cpu, cuda"},
      {"--attn triton", "--attn: triton: expected one of auto, ours, cudnn"},
      {"--data /nonexistent/tokens.bin", "cannot open"},
      {"--lr -0.1", "--lr -0.1: expected a finite value ≥ 0"},
      {"--weight-decay -1", "--weight-decay -1: expected a finite value ≥ 0"},
      {"--beta1 1", "--beta1 1: expected 0 ≤ beta1 < 1"},
      {"--beta2 1.5", "--beta2 1.5: expected 0 ≤ beta2 < 1"},
      {"--eps 0", "--eps 0: expected a finite value > 0"},
      {"--grad-clip -1", "--grad-clip -1: expected a finite value ≥ 0 (0: no clipping)"},
      {"--lr-schedule linear", "--lr-schedule: linear: expected one of constant, cosine"},
      {"--lr-warmup-steps -2", "--lr-warmup-steps -2: expected ≥ 0"},
      {"--min-lr 0.0001", "--min-lr and --lr-decay-steps shape the cosine schedule: add --lr-schedule cosine"},
      {"--lr-decay-steps 10", "--min-lr and --lr-decay-steps shape the cosine schedule"},
      {"--lr-schedule cosine --lr-warmup-steps 6 --steps 5 --warmup-steps 1",
       "--lr-decay-steps 6 must exceed --lr-warmup-steps 6 for the cosine schedule"},
      {"--lr-schedule cosine --min-lr 0.5", "--min-lr 0.5: expected 0 ≤ min-lr ≤ --lr 0.001"},
  };
  for (const auto& [args, msg] : cases) {
    const test::CliRun r = gcbench(std::string(args) + " --quiet");
    EXPECT_EQ(r.code, 2) << args << "\n" << r.out;
    EXPECT_NE(r.out.find(msg), std::string::npos) << args << "\n" << r.out;
  }
}

// The results record the optimizer and, per step, the learning rate (here nanoGPT's warm-up and
// cosine) and the gradient norm clipping used (null with --grad-clip 0: no norm computed).
TEST(TrainCli, ResultsRecordTheOptimizerScheduleAndGradNorms) {
  const std::string j = temp("optim.json");
  const test::CliRun r = gcbench(
      "--dp 2 --zero 2 --steps 3 --warmup-steps 1 --lr 2e-3 --weight-decay 0.05 --beta2 0.99 --lr-schedule cosine "
      "--lr-warmup-steps 1 --grad-clip 0.5 --peak-flops 1e15 --quiet --json " +
      j);
  ASSERT_EQ(r.code, 0) << r.out;
  const ResultDocument d = load_document(j);
  ASSERT_EQ(d.results.size(), 1u);
  const nlohmann::json& ex = d.results[0].extra;
  const nlohmann::json& op = ex.at("optimizer");
  EXPECT_FLOAT_EQ(op.at("lr").get<float>(), 2e-3f);
  EXPECT_FLOAT_EQ(op.at("weight_decay").get<float>(), 0.05f);
  EXPECT_FLOAT_EQ(op.at("beta2").get<float>(), 0.99f);
  EXPECT_EQ(op.at("lr_schedule"), "cosine");
  EXPECT_EQ(op.at("lr_decay_steps"), 4);  // --warmup-steps + --steps
  EXPECT_FLOAT_EQ(op.at("min_lr").get<float>(), 2e-4f);
  EXPECT_EQ(op.at("grad_clip"), 0.5);
  // Steps 1…4: warm-up lr/2, then the cosine from lr at step 2 to min_lr at step 5 (3 steps of 3).
  const std::vector<double> lrs = ex.at("lrs").get<std::vector<double>>();
  ASSERT_EQ(lrs.size(), 4u);
  const double lr = 2e-3f, min_lr = 2e-4f;
  EXPECT_DOUBLE_EQ(lrs[0], lr / 2);
  EXPECT_DOUBLE_EQ(lrs[1], lr);
  EXPECT_NEAR(lrs[2], min_lr + 0.5 * (1 + std::cos(std::numbers::pi / 3)) * (lr - min_lr), 1e-12);
  EXPECT_NEAR(lrs[3], min_lr + 0.5 * (1 + std::cos(2 * std::numbers::pi / 3)) * (lr - min_lr), 1e-12);
  const nlohmann::json& norms = ex.at("grad_norms");
  ASSERT_EQ(norms.size(), 4u);
  for (const auto& n : norms) EXPECT_GT(n.get<double>(), 0.5);  // tiny's norms: the clip scaled each step
  // The clip's all-reduce over dp is step communication, equal to the theory.
  EXPECT_EQ(ex.at("comm_bytes").at("grad_norm_all_reduce").at("measured"), 8);
  EXPECT_EQ(ex.at("comm_bytes").at("grad_norm_all_reduce").at("theory"), 8);
  const test::CliRun off = gcbench("--steps 1 --warmup-steps 0 --grad-clip 0 --peak-flops 1e15 --quiet --json " + j);
  ASSERT_EQ(off.code, 0) << off.out;
  const ResultDocument d0 = load_document(j);
  fs::remove(j);
  EXPECT_TRUE(d0.results[0].extra.at("grad_norms").at(0).is_null());
}

// Hugging Face's GPT-2 names are models of their own; results record the canonical name.
TEST(TrainCli, HuggingFaceGpt2NameIsRecordedAsTheCanonicalName) {
  const std::string j = temp("alias.json");
  const test::CliRun r = gcbench(
      "--model gpt2 --layers 1 --hidden 32 --heads 4 --vocab 64 --seq 16 --steps 1 --warmup-steps 0 "
      "--peak-flops 1e15 --quiet --json " +
      j);
  ASSERT_EQ(r.code, 0) << r.out;
  const ResultDocument d = load_document(j);
  fs::remove(j);
  ASSERT_EQ(d.results.size(), 1u);
  EXPECT_EQ(d.results[0].params.at("model").get<std::string>(), "gpt2-124m+custom");
  const test::CliRun typo = gcbench("--model gpt2-medum --quiet");
  EXPECT_EQ(typo.code, 2) << typo.out;
  EXPECT_NE(typo.out.find("(did you mean 'gpt2-medium'?)"), std::string::npos) << typo.out;
}

// Full recomputation in blocks of K layers: the result records K (absent for K = 1), the engine's
// activation bytes its theory.
TEST(TrainCli, RecomputeEveryIsRecordedWithItsActivationBytes) {
  const std::string j = temp("recompute_every.json");
  const test::CliRun r = gcbench(
      "--layers 5 --recompute full --recompute-every 2 --steps 1 --warmup-steps 0 --peak-flops 1e15 --quiet --json " +
      j);
  ASSERT_EQ(r.code, 0) << r.out;
  const ResultDocument d = load_document(j);
  fs::remove(j);
  ASSERT_EQ(d.results.size(), 1u);
  EXPECT_EQ(d.results[0].params.at("recompute").get<std::string>(), "full");
  EXPECT_EQ(d.results[0].params.at("recompute_every").get<int>(), 2);
  const auto& act = d.results[0].extra.at("memory").at("activations");
  EXPECT_EQ(act.at("measured"), act.at("analytic"));
  EXPECT_GT(act.at("measured").get<double>(), 0.0);
}

#if GCB_HAVE_CUDA_TRAINING
// Without a GPU, the cuda backend's sweep is a row per layout, WAIVED with the reason (exit 0):
// nothing is measured and nothing fails. tp2 takes GPT-2's vocabulary padded (50257 → 50432
// rows), so it too waits only for a GPU.
TEST(TrainCli, CudaSweepWithoutAGpuIsWaivedRowsWithTheReason) {
  if (gpu::device_count() > 0) GTEST_SKIP() << "this machine has a GPU";
  const std::string json = temp("cuda-waived.json");
  const test::CliRun r = gcbench("--backend cuda --model gpt2-124m --sweep dp,zero1,tp2,pp2-1f1b --json " + json);
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("0 passed, 0 failed, 4 waived"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("no GPU"), std::string::npos) << r.out;
  const nlohmann::json doc = nlohmann::json::parse(slurp(json));
  ASSERT_EQ(doc["results"].size(), 4u);
  for (const auto& row : doc["results"]) {
    EXPECT_EQ(row["status"], "WAIVED") << row.dump();
    EXPECT_EQ(row["params"]["backend"], "cuda");
  }
  fs::remove(json);
}

// A sweep says where it is after each layout (k of n, its step time, elapsed, an estimate), and
// the results are printed once, in train's own table: no generic case table after it.
TEST(TrainCli, SweepPrintsProgressAndItsTableOnce) {
  const test::CliRun r = gcbench("--model tiny --sweep dp2,tp2 --steps 2 --warmup-steps 0");
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  const size_t first = r.out.find("train: layout 1 of 2 dp2: "), second = r.out.find("train: layout 2 of 2 dp1-tp2: ");
  ASSERT_NE(first, std::string::npos) << r.out;
  ASSERT_NE(second, std::string::npos) << r.out;
  EXPECT_NE(r.out.substr(first, second - first).find("s left)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(" ms/step ("), std::string::npos) << r.out;
  EXPECT_LT(second, r.out.find("layout                            step ms")) << r.out;
  EXPECT_EQ(r.out.find("case "), std::string::npos) << r.out;  // the generic table's header
  EXPECT_NE(r.out.find("2 passed, 0 failed"), std::string::npos) << r.out;
  const test::CliRun quiet = gcbench("--model tiny --sweep dp2,tp2 --steps 2 --warmup-steps 0 -q");
  ASSERT_EQ(quiet.code, 0) << quiet.out;
  EXPECT_EQ(quiet.out.find("train: layout"), std::string::npos) << quiet.out;
}

// --device gpu picks the compute backend on device memory (the cuda row), as --backend cuda does.
TEST(TrainCli, DeviceGpuIsTheDeviceMemoryBackend) {
  if (gpu::device_count() > 0) GTEST_SKIP() << "this machine has a GPU";
  const std::string json = temp("device-gpu.json");
  const test::CliRun r = gcbench("--device gpu --model tiny --steps 1 --peak-flops 1e15 --json " + json);
  EXPECT_EQ(r.code, 0) << r.out;
  const nlohmann::json doc = nlohmann::json::parse(slurp(json));
  ASSERT_EQ(doc["results"].size(), 1u);
  EXPECT_EQ(doc["results"][0]["params"]["backend"], "cuda");
  EXPECT_EQ(doc["results"][0]["status"], "WAIVED");
  fs::remove(json);
}
#else
TEST(TrainCli, CudaNotBuiltIsAUsageError) {
  const test::CliRun r = gcbench("--backend cuda --quiet");
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("built without CUDA"), std::string::npos) << r.out;
}
#endif

TEST(TrainCli, QuickSweepWritesOneResultPerLayoutWithReportFields) {
  Runner runner(RunnerOptions{}, nullptr);
  run_train_quick(runner, 7, 10);
  ASSERT_EQ(runner.results().size(), 5u);
  for (const Result& r : runner.results()) {
    EXPECT_TRUE(r.key.starts_with("train/")) << r.key;
    for (const char* p : {"model", "layout", "dp", "tp", "pp", "sp", "zero", "schedule", "micro_batch", "global_batch",
                          "recompute", "precision", "backend", "ranks"}) {
      EXPECT_TRUE(r.params.contains(p)) << r.key << " " << p;
    }
    // Defaults leave no trace in the params, so the suite's rows pair with earlier versions'.
    for (const char* p : {"offload", "recompute_every", "logit_rows"}) EXPECT_FALSE(r.params.contains(p)) << p;
    for (const char* m : {"step_time", "tokens_per_s", "mfu", "hfu", "final_loss"}) {
      ASSERT_NE(r.metric(m), nullptr) << r.key << " " << m;
      ASSERT_TRUE(r.metric(m)->value.has_value()) << r.key << " " << m;
    }
    EXPECT_GT(*r.metric("step_time")->value, 0.0);
    // The shared 1024³ probe: MFU a fraction of the peak, never above it (a 256³ probe gave 135–166 %).
    EXPECT_EQ(r.status, Status::pass) << r.reason;
    EXPECT_LT(*r.metric("mfu")->value, 100.0) << r.key;
    EXPECT_EQ(r.extra["peak_probe"]["n"], models::kHostPeakSize) << r.key;
    EXPECT_EQ(r.samples.size(), 10u);  // one per timed step: enough for compare's U test
    // run's --seed reaches the suite's tokens; the initialisation keeps the command line's default.
    ASSERT_TRUE(r.extra.contains("seeds")) << r.key;
    EXPECT_EQ(r.extra["seeds"]["data"], 7u) << r.key;
    EXPECT_EQ(r.extra["seeds"]["init"], 1u) << r.key;
    for (const char* e : {"time_split", "memory", "comm_bytes", "bubble"}) {
      EXPECT_TRUE(r.extra.contains(e)) << r.key << " " << e;
    }
    // Persistent model states equal the formulas byte-exact on every layout.
    for (const char* cat : {"params", "grads", "master", "adam_m", "adam_v", "activations"}) {
      EXPECT_EQ(r.extra["memory"][cat]["measured"], r.extra["memory"][cat]["analytic"]) << r.key << " " << cat;
    }
    for (const auto& [kind, v] : r.extra["comm_bytes"].items()) {
      EXPECT_EQ(v["measured"], v["theory"]) << r.key << " " << kind;
    }
  }
  // Same model, same global batch, same init: the first loss agrees across layouts (fp32 rtol).
  const double l0 = runner.results()[0].extra["losses"][0].get<double>();
  for (const Result& r : runner.results()) {
    EXPECT_NEAR(r.extra["losses"][0].get<double>(), l0, 1e-5 * l0) << r.key;
  }
  const Result& pp = runner.results()[4];
  EXPECT_EQ(pp.params["pp"], 2);
  EXPECT_DOUBLE_EQ(pp.extra["bubble"]["theory"].get<double>(), 1.0 / 5.0);  // (p−1)/(m+p−1), m = 4
}

// ZeRO-2/3 with tp and pp: between steps rank 0 holds exactly the persistent formula of its stage
// (ZeRO paper §3.1 over the stage's parameters), and each dp collective moves its theory's bytes.
TEST(TrainCli, Zero2And3WithTpAndPpReportPersistentBytesAndCommTheory) {
  TrainCliOptions o;
  o.ranks = 4;
  o.sweep = "dp2-tp2-zero2,dp2-pp2-zero3-gpipe,dp2-tp2-sp-zero3";
  o.steps = 1;
  o.warmup = 0;
  o.peak_flops = 1e15;
  o.global_batch = 4;  // m = 2 micro-batches per dp rank
  const std::vector<Result> results = models::run_training(train_request(o));
  ASSERT_EQ(results.size(), 3u);
  for (const Result& r : results) {
    for (const char* cat : {"params", "grads", "adam_m", "adam_v"}) {
      EXPECT_EQ(r.extra["memory"][cat]["persistent"], r.extra["memory"][cat]["analytic"]) << r.key << " " << cat;
    }
    // Buckets (and ZeRO-3's gathered units) are transient: the peak is above the persistent bytes.
    EXPECT_GT(r.extra["memory"]["grads"]["measured"].get<double>(),
              r.extra["memory"]["grads"]["analytic"].get<double>())
        << r.key;
    for (const auto& [kind, v] : r.extra["comm_bytes"].items()) {
      EXPECT_EQ(v["measured"], v["theory"]) << r.key << " " << kind;
    }
    EXPECT_GT(r.extra["comm_bytes"]["reduce_scatter"]["measured"].get<double>(), 0.0) << r.key;
    EXPECT_GT(r.extra["comm_bytes"]["all_gather"]["measured"].get<double>(), 0.0) << r.key;
  }
}

// The mixed-precision sweep of docs/readme-train.md: 8 ranks by default (the fewest every layout
// fits); per layout, rank 0's model states between steps and its activation peak equal the
// formulas byte for byte, bf16 parameters next to fp32 master weights (16 bytes per parameter).
TEST(TrainCli, Bf16SweepReportsMemoryPerCategoryEqualToTheFormulas) {
  TrainCliOptions o;
  o.sweep = "dp,zero1,zero2,zero3,tp2,tp2-sp,pp2-1f1b,dp2-tp2-pp2";
  o.precision = models::Precision::bf16;
  o.steps = 1;
  o.warmup = 0;
  o.peak_flops = 1e15;
  const models::TrainRequest request = train_request(o);
  EXPECT_EQ(request.ranks, 8);
  const std::vector<Result> results = models::run_training(request);
  ASSERT_EQ(results.size(), 8u);
  for (const Result& r : results) {
    EXPECT_EQ(r.params["precision"], "bf16");
    for (const char* cat : {"params", "grads", "master", "adam_m", "adam_v"}) {
      EXPECT_EQ(r.extra["memory"][cat]["persistent"], r.extra["memory"][cat]["analytic"]) << r.key << " " << cat;
    }
    EXPECT_EQ(r.extra["memory"]["activations"]["measured"], r.extra["memory"]["activations"]["analytic"]) << r.key;
    // bf16 parameters are half the fp32 master copy wherever both are unsharded or both sharded.
    if (r.params["zero"] == 0) {
      EXPECT_EQ(2 * r.extra["memory"]["params"]["persistent"].get<int64_t>(),
                r.extra["memory"]["master"]["persistent"].get<int64_t>())
          << r.key;
    }
  }
}

// --offload optimizer: the device's master, m and v go to the host; per category the device's and
// the host's persistent bytes equal the formulas, and the bytes copied per step equal the theory.
TEST(TrainCli, OffloadReportsHostMemoryAndCopiesEqualToTheTheory) {
  TrainCliOptions o;
  o.sweep = "dp,zero1,zero3";
  o.precision = models::Precision::bf16;
  o.offload = models::Offload::optimizer;
  o.steps = 1;
  o.warmup = 0;
  o.peak_flops = 1e15;
  const std::vector<Result> results = models::run_training(train_request(o));
  ASSERT_EQ(results.size(), 3u);
  for (const Result& r : results) {
    EXPECT_EQ(r.params["offload"], "optimizer");
    for (const char* cat : {"params", "grads", "master", "adam_m", "adam_v"}) {
      EXPECT_EQ(r.extra["memory"][cat]["persistent"], r.extra["memory"][cat]["analytic"]) << r.key << " " << cat;
      EXPECT_EQ(r.extra["memory"][cat]["host_persistent"], r.extra["memory"][cat]["host_analytic"])
          << r.key << " " << cat;
    }
    EXPECT_EQ(r.extra["memory"]["master"]["persistent"], 0) << r.key;
    EXPECT_GT(r.extra["memory"]["master"]["host_persistent"].get<int64_t>(), 0) << r.key;
    for (const char* dir : {"d2h", "h2d"}) {
      EXPECT_EQ(r.extra["offload_bytes"][dir]["measured"], r.extra["offload_bytes"][dir]["theory"]) << r.key;
      EXPECT_GT(r.extra["offload_bytes"][dir]["measured"].get<int64_t>(), 0) << r.key;
    }
  }
  // The table names the offload and shows the host's side.
  const test::CliRun c = gcbench("--dp 2 --zero 1 --offload optimizer --steps 1 --warmup-steps 0 --peak-flops 1e15");
  ASSERT_EQ(c.code, 0) << c.out;
  EXPECT_NE(c.out.find(", offload optimizer,"), std::string::npos) << c.out;
  EXPECT_NE(c.out.find("on the host: params"), std::string::npos) << c.out;
  EXPECT_NE(c.out.find("; per step out "), std::string::npos) << c.out;
}

// --offload activations: the saved activations' host bytes and the device's equal the formulas, the
// copies per step equal the theory, and the losses are those without offload (bitwise on the CPU).
TEST(TrainCli, ActivationOffloadReportsHostActivationsEqualToTheTheory) {
  TrainCliOptions o;
  o.sweep = "dp,pp2-1f1b";
  o.ranks = 2;
  o.overrides.layers = 4;
  o.global_batch = 4;  // dp2: 2 micro-batches per rank; pp2: 4 in flight through the pipeline
  o.steps = 2;
  o.warmup = 0;
  o.peak_flops = 1e15;
  TrainCliOptions plain = o;
  o.offload = models::Offload::activations;
  const std::vector<Result> results = models::run_training(train_request(o));
  const std::vector<Result> without = models::run_training(train_request(plain));
  ASSERT_EQ(results.size(), 2u);
  ASSERT_EQ(without.size(), 2u);
  for (size_t i = 0; i < results.size(); ++i) {
    const Result& r = results[i];
    EXPECT_EQ(r.params["offload"], "activations");
    const auto& a = r.extra["memory"]["activations"];
    EXPECT_EQ(a["measured"], a["analytic"]) << r.key;
    EXPECT_EQ(a["host_persistent"], a["host_analytic"]) << r.key;
    EXPECT_GT(a["host_persistent"].get<int64_t>(), 0) << r.key;
    EXPECT_LT(a["measured"].get<int64_t>(), without[i].extra["memory"]["activations"]["measured"].get<int64_t>())
        << r.key;
    EXPECT_EQ(r.extra["memory"]["master"]["host_persistent"], 0) << r.key;  // the optimizer stays
    for (const char* dir : {"d2h", "h2d"}) {
      EXPECT_EQ(r.extra["offload_bytes"][dir]["measured"], r.extra["offload_bytes"][dir]["theory"]) << r.key;
      EXPECT_GT(r.extra["offload_bytes"][dir]["measured"].get<int64_t>(), 0) << r.key;
    }
    EXPECT_EQ(r.extra["losses"], without[i].extra["losses"]) << r.key;
  }
  const test::CliRun c =
      gcbench("--layers 4 --global-batch 2 --offload activations --steps 1 --warmup-steps 0 --peak-flops 1e15");
  ASSERT_EQ(c.code, 0) << c.out;
  EXPECT_NE(c.out.find(", offload activations,"), std::string::npos) << c.out;
  EXPECT_NE(c.out.find("on the host: activations"), std::string::npos) << c.out;
  EXPECT_EQ(c.out.find("on the host: params"), std::string::npos) << c.out;
}

// --explain: each layout that ran gets its step ledger in the JSON and on the console; the GEMM row's
// FLOPs per step are the planner's, the collectives have no floor, the CPU backend has no memory
// bandwidth to floor the element-wise rows with (said, and their floors are null, not 0).
TEST(TrainCli, ExplainAddsTheStepLedger) {
  const test::CliRun c = gcbench("--dp 2 --zero 1 --steps 1 --warmup-steps 0 --peak-flops 1e11 --explain");
  ASSERT_EQ(c.code, 0) << c.out;
  EXPECT_NE(c.out.find("step ledger of dp2-zero1, rank 0 (stage 0), per step: peak 0.1 TFLOP/s"), std::string::npos)
      << c.out;
  EXPECT_NE(c.out.find("none for the cpu backend: memory floors not computed"), std::string::npos) << c.out;
  EXPECT_NE(c.out.find("comm:reduce_scatter"), std::string::npos) << c.out;
  EXPECT_NE(c.out.find("sum of the known floors"), std::string::npos) << c.out;
  TrainCliOptions o;
  o.dp = 2;
  o.zero = models::ZeroStage::one;
  o.steps = 1;
  o.warmup = 0;
  o.peak_flops = 1e11;
  o.explain = true;
  const models::TrainRequest request = train_request(o);
  std::vector<Result> results = models::run_training(request);
  EXPECT_FALSE(add_step_ledgers(request, results).empty());
  ASSERT_EQ(results.size(), 1u);
  const auto& ledger = results[0].extra["step_ledger"];
  ASSERT_TRUE(ledger.is_array());
  bool gemm = false;
  for (const auto& row : ledger) {
    if (row["family"] == "gemm") {
      gemm = true;
      EXPECT_GT(row["flops"].get<double>(), 0) << row;
      EXPECT_DOUBLE_EQ(row["floor_s"].get<double>(), row["flops"].get<double>() / 1e11) << row;
    }
    if (row["family"] == "residual_add" || std::string(row["family"]).starts_with("comm:")) {
      EXPECT_TRUE(row["floor_s"].is_null()) << row;
    }
  }
  EXPECT_TRUE(gemm);
  EXPECT_EQ(results[0].extra["step_ledger_rates"]["bandwidth"], 0.0);
}

// The MFU denominator, when measured, is the best of several sgemm repetitions, recorded with
// the median and worst so a reader sees how steady the probe was; a given peak records none.
TEST(TrainCli, MeasuredPeakRecordsItsRepetitionsAndSpread) {
  TrainCliOptions o;
  o.ranks = 1;
  o.steps = 1;
  o.warmup = 0;
  o.peak_size = 64;
  const std::vector<Result> measured = models::run_training(train_request(o));
  ASSERT_EQ(measured.size(), 1u);
  const nlohmann::json& p = measured[0].extra["peak_probe"];
  ASSERT_TRUE(p.is_object()) << measured[0].extra.dump();
  EXPECT_EQ(p["n"], 64);
  EXPECT_GE(p["repetitions"].get<int>(), 5);
  const double best = p["best_flops"], median = p["median_flops"], worst = p["worst_flops"];
  EXPECT_GT(worst, 0.0);
  EXPECT_GE(best, median);
  EXPECT_GE(median, worst);
  EXPECT_DOUBLE_EQ(p["spread"].get<double>(), 1.0 - median / best);
  EXPECT_DOUBLE_EQ(measured[0].extra["peak_flops"].get<double>(), best);

  o.peak_flops = 1e15;
  const std::vector<Result> given = models::run_training(train_request(o));
  ASSERT_EQ(given.size(), 1u);
  EXPECT_FALSE(given[0].extra.contains("peak_probe"));
}

TEST(TrainCli, DumpIsBitwiseReproducibleAndJsonIsWritten) {
  const std::string a = temp("a.txt"), b = temp("b.txt"), j = temp("r.json");
  const std::string args = "--dp 2 --tp 2 --sp --zero 1 --steps 2 --warmup-steps 0 --peak-flops 1e15 --quiet";
  const test::CliRun r1 = gcbench(args + " --dump " + a + " --json " + j);
  const test::CliRun r2 = gcbench(args + " --dump " + b);
  ASSERT_EQ(r1.code, 0) << r1.out;
  ASSERT_EQ(r2.code, 0) << r2.out;
  EXPECT_FALSE(slurp(a).empty());
  EXPECT_EQ(slurp(a), slurp(b));
  const ResultDocument d = load_document(j);
  ASSERT_EQ(d.results.size(), 1u);
  EXPECT_EQ(d.results[0].key, "train/dp2-zero1-tp2-sp");
  fs::remove(a);
  fs::remove(b);
  fs::remove(j);
}

// --seed seeds the inputs (synthetic tokens) as in every family and --init-seed the parameters;
// their defaults (42, 1) reproduce a plain run bit for bit, and each changes the run on its own.
TEST(TrainCli, SeedIsTheDataAndInitSeedTheParameters) {
  TrainCliOptions o;
  o.data_seed = 7;
  o.seed = 9;
  const models::TrainRequest r = train_request(o);
  EXPECT_EQ(r.base.data_seed, 7u);
  EXPECT_EQ(r.base.seed, 9u);
  const std::string args = "--model tiny --steps 1 --warmup-steps 0 --peak-flops 1e15 --quiet --dump ";
  const auto dump = [&](const std::string& name, const std::string& extra) {
    const std::string f = temp(name);
    const test::CliRun run = gcbench(args + f + extra);
    EXPECT_EQ(run.code, 0) << extra << run.out;
    std::string text = slurp(f);
    fs::remove(f);
    return text;
  };
  const std::string plain = dump("plain.txt", ""), given = dump("given.txt", " --seed 42 --init-seed 1");
  ASSERT_FALSE(plain.empty());
  EXPECT_EQ(plain, given);
  EXPECT_NE(dump("data.txt", " --seed 7"), plain);
  EXPECT_NE(dump("init.txt", " --init-seed 7"), plain);
}

}  // namespace
}  // namespace gcb::bench
