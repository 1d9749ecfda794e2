// `gcbench gemm` without a GPU: range parsing, presets and their FLOP counts, per-device dtypes,
// validation, metrics, derived tuned/default ratios and the torch peer's JSON → ratio results.
#include <gtest/gtest.h>

#include "bench/gemm/gemm.hpp"
#include "core/error.hpp"
#include "kernels/gemm/cpu_gemm.hpp"

namespace gcb::bench {
namespace {

using kernels::GemmShape;

TEST(GemmDims, ListsAndRanges) {
  EXPECT_EQ(parse_dim_list({"4096"}), (std::vector<int64_t>{4096}));
  EXPECT_EQ(parse_dim_list({"1024:16384:x2"}), (std::vector<int64_t>{1024, 2048, 4096, 8192, 16384}));
  EXPECT_EQ(parse_dim_list({"1K:4K:x2", "100"}), (std::vector<int64_t>{1024, 2048, 4096, 100}));
  EXPECT_EQ(parse_dim_list({"128:512:+128"}), (std::vector<int64_t>{128, 256, 384, 512}));
  EXPECT_EQ(parse_dim_list({"100:350:100"}), (std::vector<int64_t>{100, 200, 300}));
  EXPECT_EQ(parse_dim_list({"3:30:x3"}), (std::vector<int64_t>{3, 9, 27}));
  for (const std::string bad : {"0", "abc", "8:4:x2", "1:8:x1", "1:8", "1:8:", "1:8:x", "-4", "1:2:3:4"})
    EXPECT_THROW(parse_dim_list({bad}), UsageError) << bad;
}

TEST(GemmShapes, SquarePresetDefaultAndOverrides) {
  GemmOptions o;  // nothing given: the square preset
  const auto sq = gemm_shapes(o);
  ASSERT_EQ(sq.size(), 5u);
  EXPECT_EQ(sq.front().shape, (GemmShape{1024, 1024, 1024}));
  EXPECT_EQ(sq.back().shape, (GemmShape{16384, 16384, 16384}));
  EXPECT_DOUBLE_EQ(kernels::gemm_flops(sq.back().shape), 2.0 * 16384.0 * 16384.0 * 16384.0);
  o.preset = "square";
  o.m = o.n = o.k = {"256"};  // replaces every dimension: five identical shapes collapse to one
  const auto one = gemm_shapes(o);
  ASSERT_EQ(one.size(), 1u);
  EXPECT_EQ(one[0].shape, (GemmShape{256, 256, 256}));
  GemmOptions s;
  s.preset = "square";
  s.sizes = {"512", "2048"};
  ASSERT_EQ(gemm_shapes(s).size(), 2u);
  EXPECT_EQ(gemm_shapes(s)[1].shape, (GemmShape{2048, 2048, 2048}));
}

TEST(GemmShapes, CustomIsTheCartesianProduct) {
  GemmOptions o;
  o.m = {"1:4:x2"};
  o.n = {"8", "16"};
  o.k = {"32"};
  const auto s = gemm_shapes(o);
  ASSERT_EQ(s.size(), 6u);
  EXPECT_EQ(s[0].shape, (GemmShape{1, 8, 32}));
  EXPECT_EQ(s[5].shape, (GemmShape{4, 16, 32}));
  o.k.clear();
  EXPECT_THROW(gemm_shapes(o), UsageError);
}

TEST(GemmShapes, SmallMSweepsMAtFixedNK) {
  GemmOptions o;
  o.preset = "small-m";
  const auto s = gemm_shapes(o);
  ASSERT_EQ(s.size(), 15u);  // 1, 2, 4, …, 16384
  EXPECT_EQ(s.front().shape, (GemmShape{1, 8192, 8192}));
  EXPECT_EQ(s.back().shape, (GemmShape{16384, 8192, 8192}));
  o.n = {"4096"};
  o.k = {"2048"};
  EXPECT_EQ(gemm_shapes(o)[3].shape, (GemmShape{8, 4096, 2048}));
}

TEST(GemmShapes, LlmPresetFollowsTheModel) {
  GemmOptions o;
  o.preset = "llm";
  o.model = "gpt2-124m";
  o.batch = 4;
  o.seq = 1024;
  const auto s = gemm_shapes(o);
  ASSERT_EQ(s.size(), 5u);
  const int64_t t = 4096, h = 768;
  EXPECT_EQ(s[0], (NamedShape{"qkv", {t, 3 * h, h}}));
  EXPECT_EQ(s[1], (NamedShape{"attn_out", {t, h, h}}));
  EXPECT_EQ(s[2], (NamedShape{"mlp_up", {t, 4 * h, h}}));
  EXPECT_EQ(s[3], (NamedShape{"mlp_down", {t, h, 4 * h}}));
  EXPECT_EQ(s[4], (NamedShape{"lm_head", {t, 50304, h}}));
  // Forward FLOPs of one layer's four GEMMs = 2·T·(3h² + h² + 4h² + 4h²) = 24·T·h² (Megatron's 24Bsh²).
  double layer = 0;
  for (int i = 0; i < 4; ++i) layer += kernels::gemm_flops(s[size_t(i)].shape);
  EXPECT_DOUBLE_EQ(layer, 24.0 * t * h * h);
  o.model = "llama-70b";
  EXPECT_EQ(gemm_shapes(o)[0].shape, (GemmShape{t, 10240, 8192}));  // GQA: 8192 + 2·8·128
  // The GPT sizes come from models/config: gpt2-1558m is h 1600, its vocabulary 50257 → 50304.
  o.model = "gpt2-1558m";
  EXPECT_EQ(gemm_shapes(o)[2].shape, (GemmShape{t, 4 * 1600, 1600}));
  EXPECT_EQ(gemm_shapes(o)[4].shape, (GemmShape{t, 50304, 1600}));
  const auto xl = gemm_shapes(o);
  o.model = "gpt2-xl";  // Hugging Face's name of the same model
  EXPECT_EQ(gemm_shapes(o), xl);
  o.model = "gpt5";
  EXPECT_THROW(gemm_shapes(o), UsageError);
}

TEST(GemmDtypes, PerDevice) {
  GemmOptions o;
  EXPECT_EQ(gemm_dtypes_for(o, false), (std::vector<DType>{DType::f32, DType::f64}));
  EXPECT_EQ(gemm_dtypes_for(o, true).size(), 6u);
  o.dtypes = {DType::bf16, DType::f32, DType::f64, DType::bf16};
  EXPECT_EQ(gemm_dtypes_for(o, false), (std::vector<DType>{DType::f32, DType::f64}));
  EXPECT_EQ(gemm_dtypes_for(o, true), (std::vector<DType>{DType::bf16, DType::f32}));
}

TEST(GemmOptionsValidate, RejectsBadValues) {
  GemmOptions o;
  EXPECT_NO_THROW(validate(o));
  o.dtypes = {DType::i32};
  EXPECT_THROW(validate(o), UsageError);
  o = {};
  o.tune_top_k = 0;
  EXPECT_THROW(validate(o), UsageError);
  o = {};
  o.samples = 3;
  EXPECT_THROW(validate(o), UsageError);
  o = {};
  o.preset = "cube";
  EXPECT_THROW(validate(o), UsageError);
}

TEST(GemmMetrics, TflopsBandwidthAndPeak) {
  Statistics st;
  st.median = 1e-3;
  st.min = 0.5e-3;
  const GemmShape s{1024, 1024, 1024};
  const auto m = gemm_metrics(s, DType::bf16, st, 989.4, 3350.0, "spec:H100 SXM5", 1e-3);
  ASSERT_EQ(m.size(), 4u);
  EXPECT_EQ(m[0].name, "tflops");
  EXPECT_DOUBLE_EQ(*m[0].value, 2.0 * 1024 * 1024 * 1024 / 1e-3 / 1e12);
  EXPECT_NEAR(*m[0].percent_of_peak(), 100.0 * *m[0].value / 989.4, 1e-9);
  EXPECT_DOUBLE_EQ(*m[1].value, 2 * *m[0].value);
  EXPECT_DOUBLE_EQ(*m[2].value, 3.0 * 1024 * 1024 * 2 / 1e-3 / 1e9);
  EXPECT_EQ(m[3].name, "max_rel_error");
  EXPECT_FALSE(m[3].higher_is_better);
}

Result gemm_result(const std::string& algo, double tflops, const std::string& dtype = "bf16") {
  Result r;
  r.key = "gemm/" + dtype;
  r.params = {{"device", "gpu:0"}, {"impl", "cublaslt"}, {"algo", algo}, {"dtype", dtype},  {"shape", "square"},
              {"m", 4096},         {"n", 4096},          {"k", 4096},    {"data", "random"}};
  r.metrics.push_back(Metric{"tflops", tflops, "TFLOP/s", true, std::nullopt, ""});
  return r;
}

TEST(GemmDerived, TunedOverDefault) {
  const std::vector<Result> rs = {gemm_result("heuristic0", 600), gemm_result("tuned", 660)};
  const auto d = gemm_derived_results(rs);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].key, "gemm/bf16/tuned_vs_default");
  EXPECT_DOUBLE_EQ(*d[0].metrics[0].value, 1.1);
  EXPECT_FALSE(d[0].params.contains("algo"));
}

TEST(GemmTorchPeer, RatiosFromPeerJson) {
  const std::vector<Result> rs = {gemm_result("heuristic0", 600), gemm_result("tuned", 700),
                                  gemm_result("heuristic0", 100, "int8")};
  const nlohmann::json peer = {
      {"available", true},
      {"torch", "2.7"},
      {"results",
       {{{"m", 4096},
         {"n", 4096},
         {"k", 4096},
         {"dtype", "bf16"},
         {"tflops", 700.0},
         {"op", "torch.matmul"},
         {"calls_per_sample", 12}},
        {{"m", 4096}, {"n", 4096}, {"k", 4096}, {"dtype", "int8"}, {"tflops", nullptr}, {"reason", "no kernel"}}}}};
  const auto out = gemm_torch_ratios(rs, peer);
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0].key, "gemm/bf16/vs_torch");
  EXPECT_NEAR(*out[0].metrics[0].value, 600.0 / 700.0, 1e-12);
  EXPECT_EQ(out[0].extra.at("torch_op"), "torch.matmul");
  EXPECT_EQ(out[0].extra.at("torch_calls_per_sample"), 12);  // how the peer batched its samples
  EXPECT_DOUBLE_EQ(*out[1].metrics[0].value, 1.0);
  EXPECT_EQ(out[2].status, Status::waived);
  EXPECT_NE(out[2].reason.find("no kernel"), std::string::npos);
  const auto none = gemm_torch_ratios(rs, {{"available", false}, {"reason", "torch not importable"}});
  ASSERT_EQ(none.size(), 1u);
  EXPECT_EQ(none[0].status, Status::waived);
  EXPECT_NE(none[0].reason.find("torch not importable"), std::string::npos);
}

TEST(GemmTorchPeer, WaivedWithoutGpuResults) {
  const auto out = gemm_torch_peer_results({});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].status, Status::waived);
}

TEST(GemmHostCases, OneCasePerShapeAndDtypeAndBigOnesWaived) {
  GemmOptions o;
  o.preset = "square";
  o.sizes = {"64", "8192"};
  o.cpu_max_gflop = 10;
  const CaseList cases = host_gemm_cases(o, 1);
  std::string reason;
  if (!kernels::cpu_gemm_available(&reason)) {
    ASSERT_EQ(cases.size(), 2u);  // one WAIVED case per dtype, with the reason
    EXPECT_EQ(cases[0]->waived_reason(), reason);
    return;
  }
  ASSERT_EQ(cases.size(), 4u);  // fp32, fp64 × 2 sizes
  EXPECT_EQ(cases[0]->key(), "gemm/fp32");
  EXPECT_NE(cases[1]->waived_reason(), "");  // 8192³ = 1100 GFLOP > 10
}

}  // namespace
}  // namespace gcb::bench
