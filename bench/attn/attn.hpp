// `gcbench attn`: fused attention — our FlashAttention-2-style kernels, the unfused cuBLAS
// baseline and cuDNN SDPA on the GPU, the FP32 tiled reference on the CPU — with TFLOP/s under
// the FlashAttention convention, exact counts, HBM bytes fused vs unfused, memory, and error
// against the FP64 reference beside every timing.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "bench/common/case.hpp"
#include "bench/common/cli.hpp"
#include "core/dtype.hpp"
#include "kernels/attention/attention_registry.hpp"
#include "kernels/attention/attention_shape.hpp"

namespace gcb::bench {

enum class AttnPass { fwd, bwd, fwdbwd };
// An implementation: a row of the attention registry (kernels/attention/attention_registry.hpp),
// which holds everything the grid, the byte and memory models, the verification and the GPU case
// know about it (name, types, forward/backward, workspace, score matrix, tolerance, its kernels).
// Nothing here names an implementation: a new row is benchmarked as it is added.
using AttnImpl = kernels::attn::AttnImplId;
using AttnImplInfo = kernels::attn::AttnImplRow;
const AttnImplInfo& attn_impl_info(AttnImpl i);
std::string attn_pass_name(AttnPass p);
std::string attn_impl_name(AttnImpl i);
// Name → enum maps of --pass and --impl (CLI11 transformers, bench/common/cli.hpp).
std::vector<std::pair<std::string, AttnPass>> attn_pass_names();
std::vector<std::pair<std::string, AttnImpl>> attn_impl_names();

// The types of the GPU kernels: fp16, bf16 (the CPU path is FP32 whatever --dtype says).
const std::vector<DType>& attn_dtypes();

struct AttnOptions {
  std::vector<int> batch = {4}, heads = {16}, seq = {1024}, head_dim = {128};
  int kv_heads = 0;                           // GQA: K/V heads (0 = heads); expanded to heads
  std::string causal = "both";                // on | off | both
  std::vector<DType> dtypes = {DType::bf16};  // --dtype, of attn_dtypes()
  std::vector<AttnPass> passes = {AttnPass::fwd};
  std::vector<AttnImpl> impls = kernels::attn::attention_impl_ids();  // every row
  std::string preset;                                                 // "" | fa | llama: replaces the shape lists
  int check_rows = 256;                                               // rows checked against FP64 for large shapes
  bool peer_torch = false;
  // Whether --batch, --heads, --seq, --head-dim or --preset was given. When none was, the CPU path
  // runs batch 1 with 1 head (its FP32 reference is single-threaded; the GPU default of 4 × 16
  // heads is 17–34 GFLOP a launch, over the CPU path's limit): kCpuDefaultBatch, kCpuDefaultHeads.
  bool shape_given = false;
};
inline constexpr int kCpuDefaultBatch = 1, kCpuDefaultHeads = 1;

// One problem of the grid.
struct AttnProblem {
  kernels::attn::AttnShape shape;
  int kv_heads = 0;  // as requested (GQA); the kernels see K/V expanded to shape.heads
  DType dtype = DType::bf16;
  AttnPass pass = AttnPass::fwd;
  AttnImpl impl{};  // the registry's first row
};

// Validates names and values; throws gcb::UsageError.
void validate(const AttnOptions& o);
// Applies a preset (fa: 16k tokens, hidden 2048, d ∈ {64,128}, s 512…16k; llama: b = 1, 64/8
// heads, d = 128, s 2k…32k). `pass_given`: the user chose --pass (else fa runs all three).
AttnOptions apply_preset(AttnOptions o, bool pass_given);
// The Cartesian grid of shapes × causal × dtypes × passes × impls.
std::vector<AttnProblem> attn_problems(const AttnOptions& o);
nlohmann::json attn_params(const AttnProblem& p, const std::string& device);

// CPU path: the FP32 tiled reference (small shapes; larger ones WAIVED with the limit).
CaseList cpu_attn_cases(const AttnOptions& o, uint64_t seed);
// GPU cases (attn_gpu.cpp), or WAIVED ones with the reason when no GPU or no CUDA build.
CaseList gpu_attn_cases(const AttnOptions& o, const DeviceSelection& sel, uint64_t seed);
// One WAIVED case per pass × impl when GPUs were requested but none can run (no device, no CUDA).
CaseList waived_gpu_attn_cases(const AttnOptions& o, const std::string& reason);
// Ratios against the torch SDPA peer (scripts/peers/torch_sdpa.py); `peer` is its JSON.
std::vector<Result> attn_torch_ratios(const std::vector<Result>& rs, const nlohmann::json& peer);
std::vector<Result> attn_torch_peer_results(const std::vector<Result>& rs);

void run_attn(const AttnOptions& o, const DeviceSelection& sel, uint64_t seed, Runner& runner);
// The quick suite's share: tiny CPU shapes and one small GPU shape per pass.
AttnOptions quick_attn_options();

void add_attn_command(CLI::App& root, std::function<int()>& run, const std::vector<std::string>& argv);

}  // namespace gcb::bench
