// `gcbench gemm`: mixed-precision GEMM throughput and accuracy. cuBLASLt on GPUs (heuristic #0
// and autotuned), OpenBLAS sgemm/dgemm on the host, shapes from lists, ranges and presets
// (square, llm, small-m), an FP64 sampled check beside every timing, and torch.matmul as the
// peer measured in the same run.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "bench/common/case.hpp"
#include "bench/common/cli.hpp"
#include "core/dtype.hpp"
#include "kernels/gemm/gemm_check.hpp"
#include "kernels/gemm/gemm_types.hpp"

namespace gcb::bench {

struct GemmOptions {
  std::string preset;                // "" (use --m/--n/--k), square, llm, small-m
  std::vector<std::string> m, n, k;  // lists and ranges: "4096", "1024:16384:x2", "128:512:+128"
  std::vector<std::string> sizes;    // square: the sizes (default 1024:16384:x2); small-m: the
                                     // M sweep (default 1:16384:x2, N = K = 8192 unless given)
  std::vector<DType> dtypes;         // --dtype, of gemm_dtypes(); empty: each device's defaults
  std::string model = "gpt2-124m";   // llm preset: which row of llm_models()
  int64_t batch = 8, seq = 1024;     // llm preset: M = batch × seq tokens
  kernels::GemmData data = kernels::GemmData::random;
  bool tune = true;            // also report the autotuned algorithm (GPU)
  int tune_top_k = 8;          // autotune over this many heuristic results
  bool fast_accum = true;      // FP8: CUBLASLT_MATMUL_DESC_FAST_ACCUM
  int samples = 256;           // sampled entries checked against FP64
  double cpu_max_gflop = 300;  // host cases above 2·M·N·K/1e9 are WAIVED (time)
  bool peer_torch = false;     // run scripts/peers/torch_matmul.py in the same run
};

// One GEMM to run: its shape and, for presets, what it is ("square", "qkv", "lm_head", …).
struct NamedShape {
  std::string name;
  kernels::GemmShape shape;
  bool operator==(const NamedShape&) const = default;
};

// A transformer's sizes for the llm preset (hidden, QKV output, MLP inner, vocab): the GPT
// configurations of models/model/config.hpp (the ones `gcbench train --model` takes) plus llama-70b.
struct LlmModel {
  std::string name;
  int64_t hidden = 0, qkv_out = 0, ffn = 0, vocab = 0;
};
const std::vector<LlmModel>& llm_models();
const LlmModel& find_llm_model(const std::string& name);  // UsageError when unknown

// "4096" → {4096}; "1024:16384:x2" → 1024, 2048, …, 16384 (geometric); "128:512:+128" or
// "128:512:128" → arithmetic; sizes may carry K/M suffixes (core/size.hpp). UsageError otherwise.
std::vector<int64_t> parse_dim_list(const std::vector<std::string>& entries);
// The shapes a set of options asks for. A preset gives its shapes; any of --m/--n/--k given
// beside it replaces that dimension in every preset shape (duplicates dropped). Without a
// preset, the Cartesian product of --m × --n × --k (all three required); with nothing at all,
// the square preset.
std::vector<NamedShape> gemm_shapes(const GemmOptions& o);

// Every type --dtype accepts: fp64, fp32, tf32, fp16, bf16, fp8_e4m3, fp8_e5m2, int8.
const std::vector<DType>& gemm_dtypes();
// Per-device default dtypes: host fp32, fp64; GPU fp32, tf32, fp16, bf16, fp8_e4m3, int8.
std::vector<DType> gemm_default_dtypes(bool gpu);
// The dtypes a device runs: the defaults, or those of --dtype that the device supports.
std::vector<DType> gemm_dtypes_for(const GemmOptions& o, bool gpu);

void validate(const GemmOptions& o);

// Result metrics every gemm case reports: tflops (2MNK / median, % of peak when known),
// tflops_max (2MNK / min), bandwidth (compulsory bytes / median, GB/s; % of HBM peak when
// known), max_rel_error (lower is better).
std::vector<Metric> gemm_metrics(const kernels::GemmShape& s, DType input, const Statistics& seconds,
                                 std::optional<double> peak_tflops, std::optional<double> peak_gbps,
                                 const std::string& peak_source, std::optional<double> max_rel_error);
// The accuracy block of a gemm result's extra: errors, the bound they are held to, the worst
// sample and how the reference is computed.
nlohmann::json gemm_accuracy_json(const kernels::GemmCheck& c, int samples);

CaseList host_gemm_cases(const GemmOptions& o, uint64_t seed);
CaseList gpu_gemm_cases(const GemmOptions& o, const DeviceSelection& sel, uint64_t seed);

// Derived results: "gemm/<dtype>/tuned_vs_default" per shape and GPU.
std::vector<Result> gemm_derived_results(const std::vector<Result>& measured);
// Runs the torch peer for the passed GPU results and returns "gemm/<dtype>/vs_torch" ratios, or
// one WAIVED result with the reason (no python3, no torch, no CUDA, no GPU case).
std::vector<Result> gemm_torch_peer_results(const std::vector<Result>& measured);
// Parses the peer script's JSON output into ratio results (separate for tests).
std::vector<Result> gemm_torch_ratios(const std::vector<Result>& measured, const nlohmann::json& peer);

// Every --dtype must run on a selected device (bf16 with --device cpu: no CPU GEMM takes it):
// gcb::UsageError (exit 2) otherwise. A selected GPU that this machine lacks is not checked here:
// its cases are WAIVED with the reason.
void check_dtypes_have_devices(const GemmOptions& o, const DeviceSelection& sel);
void run_gemm(const GemmOptions& o, const DeviceSelection& sel, uint64_t seed, Runner& runner);
// The quick suite's gemm options: host 256…1024 squares; GPU bf16 and fp8 at 4096 and 8192.
GemmOptions quick_gemm_options();

void add_gemm_command(CLI::App& root, std::function<int()>& run, const std::vector<std::string>& argv);

}  // namespace gcb::bench
