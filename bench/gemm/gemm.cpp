// `gcbench gemm`: options, validation, metrics, derived results and registration. Cases live in
// gemm_cpu.cpp and gemm_gpu.cpp (or gemm_gpu_none.cpp), shapes in gemm_shapes.cpp, the torch
// peer in gemm_peer.cpp.
#include "bench/gemm/gemm.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "core/error.hpp"
#include "models/model/config.hpp"

namespace gcb::bench {

const std::vector<DType>& gemm_dtypes() {
  static const std::vector<DType> types = {DType::f64,  DType::f32,      DType::tf32,     DType::f16,
                                           DType::bf16, DType::fp8_e4m3, DType::fp8_e5m2, DType::i8};
  return types;
}

void validate(const GemmOptions& o) {
  for (DType t : o.dtypes)
    if (std::find(gemm_dtypes().begin(), gemm_dtypes().end(), t) == gemm_dtypes().end())
      throw UsageError(
          fmt::format("unsupported --dtype '{}' for gemm (expected {})", dtype_name(t), dtype_list(gemm_dtypes())));
  if (o.tune_top_k < 1 || o.tune_top_k > 64) throw UsageError("--tune-top-k must be in 1 … 64");
  if (o.samples < 4) throw UsageError("--samples must be at least 4 (the four corners)");
  if (!(o.cpu_max_gflop > 0)) throw UsageError("--cpu-max-gflop must be positive");
  if (gemm_shapes(o).empty()) throw UsageError("no GEMM shapes selected");
}

std::vector<Metric> gemm_metrics(const kernels::GemmShape& s, DType input, const Statistics& seconds,
                                 std::optional<double> peak_tflops, std::optional<double> peak_gbps,
                                 const std::string& peak_source, std::optional<double> max_rel_error) {
  const double flops = kernels::gemm_flops(s);
  const double bytes = kernels::gemm_bytes(s, input, kernels::gemm_output_type(input));
  std::vector<Metric> m;
  // TFLOP/s = 2·M·N·K / t / 1e12 (NVIDIA Matrix Multiplication Background guide); int8 counts integer ops (TOPS).
  m.push_back(
      Metric{"tflops", flops / seconds.median / 1e12, "TFLOP/s", true, peak_tflops, peak_tflops ? peak_source : ""});
  m.push_back(
      Metric{"tflops_max", flops / seconds.min / 1e12, "TFLOP/s", true, peak_tflops, peak_tflops ? peak_source : ""});
  // Compulsory bytes / t (NVIDIA Matrix Multiplication Background guide): meaningful for memory-bound (small-M) shapes.
  m.push_back(Metric{"bandwidth", bytes / seconds.median / 1e9, "GB/s", true, peak_gbps, peak_gbps ? peak_source : ""});
  m.push_back(Metric{"max_rel_error", max_rel_error, "", false, std::nullopt, ""});
  return m;
}

nlohmann::json gemm_accuracy_json(const kernels::GemmCheck& c, int samples) {
  return {{"samples", samples},
          {"max_rel_error", c.max_rel_error},
          {"max_error_vs_bound", c.max_error_vs_bound},
          {"bound", {{"output", c.bound.output}, {"accumulation", c.bound.accumulation}}},
          {"worst", {c.worst_i, c.worst_j}},
          {"reference",
           "FP64 dot products of the stored (dequantised) inputs; allowed |error| = output*|ref| + "
           "accumulation*sqrt(sum_k (a_ik*b_jk)^2); max_rel_error = |error| / sqrt(sum_k (a_ik*b_jk)^2)"}};
}

std::vector<Result> gemm_derived_results(const std::vector<Result>& rs) {
  std::vector<Result> out;
  for (const auto& tuned : rs) {
    if (tuned.family() != "gemm" || tuned.status != Status::pass || tuned.params.value("algo", "") != "tuned") continue;
    nlohmann::json same = tuned.params;
    same["algo"] = "heuristic0";
    for (const auto& base : rs) {
      if (base.key != tuned.key || base.params != same || base.status != Status::pass) continue;
      const auto* a = tuned.metric("tflops");
      const auto* b = base.metric("tflops");
      if (!a || !b || !a->value || !b->value || *b->value <= 0) continue;
      Result r;
      r.key = tuned.key + "/tuned_vs_default";
      r.params = tuned.params;
      r.params.erase("algo");
      r.metrics.push_back(Metric{"ratio", *a->value / *b->value, "x", true, std::nullopt, ""});
      r.extra = {{"compares", "autotuned / heuristic #0 TFLOP/s (median)"},
                 {"tuned_tflops", *a->value},
                 {"default_tflops", *b->value}};
      out.push_back(std::move(r));
    }
  }
  return out;
}

void check_dtypes_have_devices(const GemmOptions& o, const DeviceSelection& sel) {
  for (const DType t : o.dtypes) {
    const std::vector<DType> one = {t};
    GemmOptions only = o;
    only.dtypes = one;
    const bool on_cpu = !gemm_dtypes_for(only, false).empty(), on_gpu = !gemm_dtypes_for(only, true).empty();
    if ((sel.cpu && on_cpu) || (sel.gpu_requested && on_gpu)) continue;
    GemmOptions every = o;
    every.dtypes = gemm_dtypes();
    throw UsageError(fmt::format("--dtype {}: no GEMM of --device {} takes it (the CPU takes {}; the GPU {})",
                                 dtype_name(t), sel.cpu ? "cpu" : "gpu", dtype_list(gemm_dtypes_for(every, false)),
                                 dtype_list(gemm_dtypes_for(every, true))));
  }
}

void run_gemm(const GemmOptions& o, const DeviceSelection& sel, uint64_t seed, Runner& runner) {
  validate(o);
  CaseList cases;
  if (sel.cpu) cases = host_gemm_cases(o, seed);
  for (auto& c : gpu_gemm_cases(o, sel, seed)) cases.push_back(std::move(c));
  const size_t first = runner.results().size();
  runner.run_all(cases);
  const std::vector<Result> mine(runner.results().begin() + static_cast<long>(first), runner.results().end());
  for (auto& r : gemm_derived_results(mine)) runner.add(std::move(r));
  if (o.peer_torch)
    for (auto& r : gemm_torch_peer_results(mine)) runner.add(std::move(r));
}

GemmOptions quick_gemm_options() {
  GemmOptions o;
  o.preset = "square";
  o.sizes = {"512", "2048"};
  o.dtypes = {DType::f32, DType::bf16, DType::fp8_e4m3};
  o.tune_top_k = 4;
  return o;
}

void add_gemm_command(CLI::App& root, std::function<int()>& run, const std::vector<std::string>& argv) {
  auto* app = root.add_subcommand("gemm", "GEMM throughput and accuracy: cuBLASLt (fp32 … fp8, int8) and OpenBLAS");
  auto common = std::make_shared<CommonOptions>();
  auto g = std::make_shared<GemmOptions>();
  auto data = std::make_shared<std::string>("random");
  auto tune = std::make_shared<std::string>("on");
  auto fast = std::make_shared<std::string>("on");
  add_common_options(*app, *common);
  app->add_option("--preset", g->preset, "Shape preset: square, llm, small-m (default: square when no --m/--n/--k)")
      ->check(CLI::IsMember({"square", "llm", "small-m"}));
  app->add_option("--m", g->m, "M values: list and ranges, e.g. 1024,4096 or 1024:16384:x2 or 128:512:+128")
      ->delimiter(',');
  app->add_option("--n", g->n, "N values (same syntax); with a preset, replaces N of every preset shape")
      ->delimiter(',');
  app->add_option("--k", g->k, "K values (same syntax); with a preset, replaces K of every preset shape")
      ->delimiter(',');
  app->add_option("--sizes", g->sizes, "square: sizes [1024:16384:x2]; small-m: M sweep [1:16384:x2]")->delimiter(',');
  app->add_option("--dtype", g->dtypes, "fp32, tf32, fp16, bf16, fp8_e4m3, fp8_e5m2, int8 (GPU); fp32, fp64 (CPU)")
      ->delimiter(',')
      ->transform(dtype_names(gemm_dtypes()));
  app->add_option("--model", g->model,
                  "llm preset: a model of `gcbench train --model` (gpt2-124m … gpt3-175b; gpt2, gpt2-medium, "
                  "gpt2-large, gpt2-xl) or llama-70b")
      ->transform([](const std::string& s) { return models::canonical_config_name(s); })
      ->capture_default_str();
  app->add_option("--batch", g->batch, "llm preset: batch (M = batch x seq)")->capture_default_str();
  app->add_option("--seq", g->seq, "llm preset: sequence length")->capture_default_str();
  app->add_option("--data", *data, "Input data: random (seeded N(0,1)) or zeros (only to show the power effect)")
      ->check(CLI::IsMember({"random", "zeros"}))
      ->capture_default_str();
  app->add_option("--tune", *tune, "Also autotune over the top-K cuBLASLt heuristics: on, off")
      ->check(CLI::IsMember({"on", "off"}))
      ->capture_default_str();
  app->add_option("--tune-top-k", g->tune_top_k, "Heuristic results the autotuner times")->capture_default_str();
  app->add_option("--fast-accum", *fast, "FP8: CUBLASLT_MATMUL_DESC_FAST_ACCUM on, off")
      ->check(CLI::IsMember({"on", "off"}))
      ->capture_default_str();
  app->add_option("--samples", g->samples, "Output entries checked against the FP64 reference")->capture_default_str();
  app->add_option("--cpu-max-gflop", g->cpu_max_gflop, "Host shapes above this many GFLOP are WAIVED")
      ->capture_default_str();
  app->add_flag("--peer-torch", g->peer_torch, "Time torch.matmul on the same shapes (scripts/peers/torch_matmul.py)");
  run = [=, &argv] {
    g->data = *data == "zeros" ? kernels::GemmData::zeros : kernels::GemmData::random;
    g->tune = *tune == "on";
    g->fast_accum = *fast == "on";
    validate(*g);
    const DeviceSelection sel = select_devices(common->device);
    check_dtypes_have_devices(*g, sel);
    Session session(*common, argv);
    run_gemm(*g, sel, common->seed, session.runner());
    return session.finish();
  };
}

}  // namespace gcb::bench
