// `gcbench attn` without a GPU: option validation, the presets' grids, FLOP metrics from known
// times, the CPU tiled path end to end (PASS, and FAIL is possible), WAIVED GPU cases, the
// torch-peer ratio logic on a fixture, and the binary's exit codes.
#include <gtest/gtest.h>

#include "core/gpu.hpp"
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <optional>
#include <string>
#include <string_view>

#include "bench/attn/attn.hpp"
#include "bench/attn/attn_internal.hpp"
#include "bench/attn/attn_verify.hpp"
#include "bench/common/runner.hpp"
#include "core/error.hpp"
#include "kernels/attention/attention_ref.hpp"
#include "kernels/attention/attention_registry.hpp"

namespace gcb::bench {
namespace {

TEST(AttnOptions, RejectsBadValues) {
  const auto bad = [](auto change) {
    AttnOptions o;
    change(o);
    return o;
  };
  EXPECT_THROW(validate(bad([](AttnOptions& o) { o.causal = "maybe"; })), UsageError);
  EXPECT_THROW(validate(bad([](AttnOptions& o) { o.dtypes = {DType::fp8_e4m3}; })), UsageError);
  EXPECT_THROW(validate(bad([](AttnOptions& o) { o.passes = {}; })), UsageError);
  EXPECT_THROW(validate(bad([](AttnOptions& o) { o.impls = {}; })), UsageError);
  EXPECT_THROW(validate(bad([](AttnOptions& o) { o.seq = {0}; })), UsageError);
  EXPECT_THROW(validate(bad([](AttnOptions& o) { o.head_dim = {60}; })), UsageError);
  EXPECT_THROW(validate(bad([](AttnOptions& o) { o.kv_heads = 5; })), UsageError);  // 16 % 5 ≠ 0
  EXPECT_THROW(validate(bad([](AttnOptions& o) { o.preset = "gpt"; })), UsageError);
  EXPECT_NO_THROW(validate(AttnOptions{}));
}

AttnImpl impl(std::string_view name) {
  const std::optional<AttnImpl> i = kernels::attn::find_attention_impl(name);
  EXPECT_TRUE(i.has_value()) << name;
  return i.value_or(AttnImpl{});
}

// The attention registry (kernels/attention/attention_registry.hpp) is the one place an
// implementation's name and data live: --impl offers every row, names round-trip, and the
// per-impl data the models use.
TEST(AttnImplTable, EveryRegistryRowIsOfferedAndNamesRoundTrip) {
  const auto& rows = kernels::attn::attention_impls();
  ASSERT_EQ(attn_impl_names().size(), rows.size());
  for (size_t i = 0; i < rows.size(); ++i) {
    EXPECT_EQ(attn_impl_names()[i].first, rows[i].name);
    EXPECT_EQ(static_cast<size_t>(attn_impl_names()[i].second), i);
  }
  for (const auto& [name, i] : attn_impl_names()) EXPECT_EQ(attn_impl_name(i), name);
  for (const auto& [name, pass] : attn_pass_names()) EXPECT_EQ(attn_pass_name(pass), name);
  EXPECT_EQ(AttnOptions{}.impls, kernels::attn::attention_impl_ids());  // the default: every row
  EXPECT_EQ(attn_impl_name(impl("cudnn")), "cudnn");
  // Of today's rows only the unfused baseline is forward-only, keeps S in HBM and needs the 2x
  // tolerance.
  for (const std::string_view name : {"ours", "unfused", "cudnn"}) {
    const AttnImplInfo& info = attn_impl_info(impl(name));
    const bool unfused = name == "unfused";
    EXPECT_EQ(info.backward, !unfused) << name;
    EXPECT_EQ(info.trains, !unfused) << name;
    EXPECT_EQ(info.scores_in_hbm, unfused) << name;
    EXPECT_EQ(info.tolerance_factor, unfused ? 2.0 : 1.0) << name;
  }
  // The byte model follows the row: unfused is the unfused IO model whatever the pass.
  AttnProblem p;
  p.shape = {1, 2, 256, 64, false};
  p.impl = impl("unfused");
  EXPECT_EQ(attn_hbm_bytes(p), kernels::attn::unfused_forward_bytes(p.shape, 2.0));
  p.impl = impl("ours");
  EXPECT_EQ(attn_hbm_bytes(p), kernels::attn::fused_forward_bytes(p.shape, 2.0));
}

// A row refuses a type or head dim outside its lists, or says this binary lacks it.
TEST(AttnImplTable, RowsRefuseTypesAndHeadDimsOutsideTheirLists) {
  const AttnImpl ours = impl("ours");
  const bool built = attn_impl_info(ours).make != nullptr;
  EXPECT_EQ(kernels::attn::attention_impl_refuses(ours, DType::bf16, 64).empty(), built);
  EXPECT_FALSE(kernels::attn::attention_impl_refuses(ours, DType::f32, 64).empty());
  EXPECT_FALSE(kernels::attn::attention_impl_refuses(ours, DType::bf16, 96).empty());
  if (built) {
    EXPECT_NE(kernels::attn::attention_impl_refuses(ours, DType::bf16, 96).find("not among 64, 128"),
              std::string::npos);
  }
}

TEST(AttnPresets, FaGridKeeps16kTokensAndHidden2048) {
  AttnOptions o;
  o.preset = "fa";
  o.impls = {impl("ours")};
  o.dtypes = {DType::bf16};
  const AttnOptions fa = apply_preset(o, false);
  EXPECT_NO_THROW(validate(fa));  // batch and heads come from the grid, not from --batch / --heads
  EXPECT_EQ(fa.passes, (std::vector<AttnPass>{AttnPass::fwd, AttnPass::bwd, AttnPass::fwdbwd}));
  const auto problems = attn_problems(fa);
  // 2 head dims × 6 seqs × 2 causal × 3 passes.
  ASSERT_EQ(problems.size(), 72u);
  for (const auto& p : problems) {
    EXPECT_EQ(p.shape.batch * p.shape.seq, 16384);
    EXPECT_EQ(p.shape.heads * p.shape.head_dim, 2048);
  }
  EXPECT_EQ(apply_preset(o, true).passes, o.passes);  // an explicit --pass wins
}

TEST(AttnPresets, LlamaIsGqa64Over8) {
  AttnOptions o;
  o.preset = "llama";
  o.causal = "off";
  o.impls = {impl("ours")};
  const auto problems = attn_problems(apply_preset(o, false));
  ASSERT_EQ(problems.size(), 5u);  // s = 2k … 32k
  EXPECT_EQ(problems.front().shape.seq, 2048);
  EXPECT_EQ(problems.back().shape.seq, 32768);
  for (const auto& p : problems) {
    EXPECT_EQ(p.shape.batch, 1);
    EXPECT_EQ(p.shape.heads, 64);
    EXPECT_EQ(p.kv_heads, 8);
    EXPECT_EQ(attn_params(p, "gpu:0").at("kv_heads"), 8);
  }
}

TEST(AttnMetrics, TflopsFollowTheFlashAttentionConvention) {
  AttnProblem p;
  p.shape = {2, 16, 2048, 128, true};
  p.pass = AttnPass::fwdbwd;
  Statistics s;
  s.median = 1e-3;
  const auto m = attn_metrics(p, s, 989.4, "spec");
  ASSERT_EQ(m.size(), 4u);
  // 3.5 × 4·b·h·s²·d / 2 (causal) per ms.
  EXPECT_DOUBLE_EQ(*m[0].value, 3.5 * 4.0 * 2 * 16 * 2048.0 * 2048 * 128 / 2 / 1e-3 / 1e12);
  EXPECT_EQ(m[0].name, "tflops");
  EXPECT_GT(*m[1].value, *m[0].value);  // exact causal counts s(s+1)/2 entries > s²/2
  EXPECT_DOUBLE_EQ(*m[2].value, 1.0);   // ms
}

RunnerOptions fast() {
  RunnerOptions r;
  r.quiet = true;
  r.harness.min_samples = 2;
  r.harness.max_samples = 3;
  r.harness.min_time = 0;
  r.harness.max_time = 0.2;
  r.harness.warmup = 1;
  return r;
}

TEST(AttnCpuPath, TiledReferencePassesAndLargeShapesAreWaived) {
  AttnOptions o;
  o.batch = {1};
  o.heads = {2};
  o.seq = {70, 20000};
  o.head_dim = {64};
  o.passes = {AttnPass::fwd, AttnPass::bwd, AttnPass::fwdbwd};
  Runner runner(fast(), nullptr);
  auto cases = cpu_attn_cases(o, 1);
  ASSERT_EQ(cases.size(), 12u);  // 2 seqs × 2 causal × 3 passes (impls and dtypes collapse)
  runner.run_all(cases);
  int pass = 0, waived = 0;
  for (const auto& r : runner.results()) {
    if (r.params.at("seq") == 70) {
      EXPECT_EQ(r.status, Status::pass) << r.key << " " << r.reason;
      EXPECT_EQ(r.params.at("impl"), "cpu_tiled");
      EXPECT_GT(*r.metric("tflops")->value, 0.0);
      ++pass;
    } else {
      EXPECT_EQ(r.status, Status::waived);
      EXPECT_NE(r.reason.find("CPU tiled reference limited"), std::string::npos);
      // The hint names a shape that fits (one head is too much at s 20000: a shorter sequence),
      // and sends the user to a GPU only where one exists.
      const size_t at = r.reason.find("--seq ");
      ASSERT_NE(at, std::string::npos) << r.reason;
      AttnProblem fits;
      fits.shape = {1, 1, std::stoi(r.reason.substr(at + 6)), 64, r.params.at("causal").get<bool>()};
      fits.pass = AttnPass::fwd;
      EXPECT_LE(attn_flops(fits, false), 2e9) << r.reason;
      EXPECT_EQ(r.reason.find("use --device gpu") != std::string::npos, gpu::device_count() > 0) << r.reason;
      ++waived;
    }
  }
  EXPECT_EQ(pass, 6);
  EXPECT_EQ(waived, 6);
}

// The check can fail: a corrupted output of a correct run is reported with the tensor's name.
TEST(AttnVerify, CorruptedOutputFails) {
  const kernels::attn::AttnShape a{1, 1, 70, 64, true};
  AttnHostInputs in;
  in.q = kernels::attn::random_normal(a.elements(), 1);
  in.k = kernels::attn::random_normal(a.elements(), 2);
  in.v = kernels::attn::random_normal(a.elements(), 3);
  AttnHostOutputs out;
  out.o.resize(a.elements());
  out.lse.resize(a.rows());
  kernels::attn::tiled_forward(a, {64, 64}, in.q.data(), in.k.data(), in.v.data(), out.o.data(), out.lse.data());
  EXPECT_EQ(verify_attention(a, DType::f32, in, out, 256).failure, "");
  out.o[5 * 64 + 3] += 0.05f;
  EXPECT_NE(verify_attention(a, DType::f32, in, out, 256).failure.find("O:"), std::string::npos);
  out.o[5 * 64 + 3] = NAN;
  EXPECT_NE(verify_attention(a, DType::f32, in, out, 256).failure.find("non-finite"), std::string::npos);
}

// dK and dV are checked on sampled key rows at a sequence length above the old full-head limit
// (2048): a correct CPU-computed backward passes; one wrong key row fails, named.
class AttnVerifyKeyRows : public ::testing::TestWithParam<bool> {};

TEST_P(AttnVerifyKeyRows, SampledKeyRowsCatchAWrongDkOrDv) {
  const kernels::attn::AttnShape a{1, 1, 2304, 16, GetParam()};
  AttnHostInputs in;
  in.q = kernels::attn::random_normal(a.elements(), 11);
  in.k = kernels::attn::random_normal(a.elements(), 12);
  in.v = kernels::attn::random_normal(a.elements(), 13);
  in.d_o = kernels::attn::random_normal(a.elements(), 14);
  AttnHostOutputs out;
  out.o.resize(a.elements());
  out.lse.resize(a.rows());
  out.dq.resize(a.elements());
  out.dk.resize(a.elements());
  out.dv.resize(a.elements());
  kernels::attn::tiled_forward(a, {64, 64}, in.q.data(), in.k.data(), in.v.data(), out.o.data(), out.lse.data());
  kernels::attn::tiled_backward(a, {64, 64}, in.q.data(), in.k.data(), in.v.data(), out.o.data(), in.d_o.data(),
                                out.lse.data(), out.dq.data(), out.dk.data(), out.dv.data());
  const AttnVerdict ok = verify_attention(a, DType::f32, in, out, 64);
  EXPECT_EQ(ok.failure, "");
  EXPECT_EQ(ok.errors.at("key_rows_checked"), 64);
  ASSERT_TRUE(ok.errors.contains("dK"));
  EXPECT_LT(ok.errors.at("dK").at("rel_rmse").get<double>(), 1e-5);  // FP32 vs FP64: far below the limit
  // Key row 2303 is the last sampled one; row 0 under the causal mask sees every query.
  for (const size_t key : {size_t{2303}, size_t{0}}) {
    for (auto* tensor : {&out.dk, &out.dv}) {
      const float saved = (*tensor)[key * 16 + 5];
      (*tensor)[key * 16 + 5] += 0.5f;
      const std::string failure = verify_attention(a, DType::f32, in, out, 64).failure;
      EXPECT_NE(failure.find(tensor == &out.dk ? "dK:" : "dV:"), std::string::npos) << key << ": " << failure;
      (*tensor)[key * 16 + 5] = saved;
    }
  }
  // Without the O and LSE the backward consumed there is nothing to check dK/dV against.
  AttnHostOutputs no_forward = out;
  no_forward.lse.clear();
  EXPECT_NE(verify_attention(a, DType::f32, in, no_forward, 64).failure.find("needs the O and LSE"), std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(CausalAndNot, AttnVerifyKeyRows, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& p) { return p.param ? "causal" : "full"; });

TEST(AttnGpuPath, WaivedWithTheReasonWhenNoGpu) {
  AttnOptions o;
  o.passes = {AttnPass::fwd, AttnPass::bwd};
  const auto cases = waived_gpu_attn_cases(o, "no GPU: test");
  ASSERT_EQ(cases.size(), 2 * kernels::attn::attention_impls().size());  // 2 passes × every impl
  EXPECT_EQ(cases[0]->key(), "attn/fwd");
  EXPECT_EQ(cases[0]->waived_reason(), "no GPU: test");
}

TEST(AttnTorchPeer, RatiosJoinOnTheFullCase) {
  Result ours;
  ours.key = "attn/fwd";
  ours.params = {{"device", "gpu:0"}, {"impl", "ours"}, {"dtype", "bf16"}, {"pass", "fwd"},  {"batch", 4},
                 {"heads", 16},       {"seq", 1024},    {"head_dim", 128}, {"causal", false}};
  ours.metrics.push_back(Metric{"tflops", 300.0, "TFLOP/s", true, std::nullopt, ""});
  const nlohmann::json peer = {{"available", true},
                               {"torch", "2.9"},
                               {"results",
                                {{{"batch", 4},
                                  {"heads", 16},
                                  {"seq", 1024},
                                  {"head_dim", 128},
                                  {"causal", false},
                                  {"dtype", "bf16"},
                                  {"pass", "fwd"},
                                  {"tflops", 400.0}}}}};
  const auto rs = attn_torch_ratios({ours}, peer);
  ASSERT_EQ(rs.size(), 1u);
  EXPECT_EQ(rs[0].key, "attn/fwd/vs_torch");
  EXPECT_DOUBLE_EQ(*rs[0].metrics.at(0).value, 0.75);
  ours.params["causal"] = true;  // no torch entry for the causal case
  EXPECT_EQ(attn_torch_ratios({ours}, peer).at(0).status, Status::waived);
  EXPECT_EQ(attn_torch_ratios({ours}, {{"available", false}, {"reason", "no torch"}}).at(0).reason,
            "torch peer unavailable: no torch");
}

int run_gcbench(const std::string& args) {
  const std::string cmd = std::string(GCB_BINARY) + " " + args + " >/dev/null 2>&1";
  const int status = std::system(cmd.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST(AttnCli, ExitCodes) {
  EXPECT_EQ(run_gcbench("attn --device cpu --causal sometimes"), 2);
  EXPECT_EQ(run_gcbench("attn --device cpu --dtype int8"), 2);
  EXPECT_EQ(run_gcbench("attn --device cpu --preset nope"), 2);
  const std::string fast_flags = " --min-samples 2 --max-samples 3 --min-time 0 --max-time 0.2 --quiet";
  EXPECT_EQ(run_gcbench("attn --device cpu --batch 1 --heads 1 --seq 65 --head-dim 64 --pass fwd,bwd" + fast_flags), 0);
  // Without a GPU the GPU cases are WAIVED, which is not a failure.
  EXPECT_EQ(run_gcbench("attn --device all --batch 1 --heads 1 --seq 65 --head-dim 64" + fast_flags), 0);
}

// With no shape given, the CPU path measures the default sequence and head dim at batch 1 and one
// head (the GPU default, 4 × 16 heads, is over its FLOP limit and would only be WAIVED); a shape
// given on the command line is run as given.
TEST(AttnCli, TheCpuPathsDefaultShapeRuns) {
  const std::string json = ::testing::TempDir() + "attn_cpu_default.json";
  const std::string fast_flags = " --min-samples 2 --max-samples 3 --min-time 0 --max-time 0.2 --quiet";
  ASSERT_EQ(run_gcbench("attn --device cpu --causal off" + fast_flags + " --json " + json), 0);
  std::ifstream in(json);
  const nlohmann::json doc = nlohmann::json::parse(in);
  ASSERT_EQ(doc.at("results").size(), 1u);
  const nlohmann::json& r = doc.at("results")[0];
  EXPECT_EQ(r.at("status"), "PASS");
  EXPECT_EQ(r.at("params").at("batch"), kCpuDefaultBatch);
  EXPECT_EQ(r.at("params").at("heads"), kCpuDefaultHeads);
  EXPECT_EQ(r.at("params").at("seq"), AttnOptions{}.seq.at(0));
  EXPECT_EQ(r.at("params").at("head_dim"), AttnOptions{}.head_dim.at(0));
  ASSERT_EQ(run_gcbench("attn --device cpu --causal off --heads 2 --seq 128" + fast_flags + " --json " + json), 0);
  std::ifstream again(json);
  EXPECT_EQ(nlohmann::json::parse(again).at("results")[0].at("params").at("heads"), 2);
}

}  // namespace
}  // namespace gcb::bench
