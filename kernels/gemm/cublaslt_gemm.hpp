// cuBLASLt matmul launchers for FP32, TF32, FP16, BF16, FP8 (E4M3/E5M2, per-tensor scales, amax,
// fast accumulate) and INT8 on the TN problem of gemm_types.hpp; heuristic #0 or an autotune
// over the top-K heuristic results, cached per plan; the chosen algorithm's configuration is
// recorded. Reused as the compute path of the CUDA training backend. Built only with CUDA;
// no CUDA header leaks out of this header. Compiles, unvalidated (no GPU on the build machine).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/gpu.hpp"
#include "core/harness.hpp"
#include "kernels/gemm/gemm_types.hpp"

namespace gcb::kernels {

// 32 MiB: "only Hopper needs 32, for others 4 is OK" (llm.c cublas_common.h; PyTorch's default;
// cuBLAS docs, ..._PREF_MAX_WORKSPACE_BYTES). The preference defaults to 0, which hides split-K and stream-K.
inline constexpr size_t kLtWorkspaceBytes = size_t{32} << 20;

// What cublasLtMatmulAlgoConfigGetAttribute reports for one algorithm, enough to rebuild it
// with cublasLtMatmulAlgoInit + ConfigSetAttribute.
struct LtAlgoConfig {
  int32_t algo_id = -1;
  uint32_t tile_id = 0, stages_id = 0;
  int32_t splitk_num = 1;
  uint32_t reduction_scheme = 0, cta_swizzling = 0, custom_option = 0;
  uint16_t inner_shape_id = 0, cluster_shape_id = 0;
  size_t workspace_bytes = 0;
  float waves_count = 0;
  int heuristic_rank = -1;  // position in cuBLASLt's heuristic list (0 = its first choice)
};
std::string describe(const LtAlgoConfig& c);
// "cuBLASLt <cublasLtGetVersion()>", for results' params.
std::string cublaslt_version();

// Device pointers for one launch. Scales are FP32 device scalars (cuBLASLt: "NULL means 1.0");
// a_scale/b_scale dequantise FP8 inputs (1/scale of fp8_scaling.hpp), d_scale quantises an FP8
// output, amax_d receives max|D| (FP8 outputs only). Ignored for non-FP8 plans.
struct LtGemmPointers {
  const void* a = nullptr;  // row-major [M, K] (cuBLASLt's B)
  const void* b = nullptr;  // row-major [N, K] (cuBLASLt's A)
  void* d = nullptr;        // row-major [M, N]
  const float* a_scale = nullptr;
  const float* b_scale = nullptr;
  const float* d_scale = nullptr;
  float* amax_d = nullptr;
};
// Where each FP8 scale pointer must lie: on a boundary of its own, as a separate cudaMalloc gives.
// On an H200 (cuBLASLt 13, 2026-11-27) two scales 4 bytes apart in one allocation made every FP8
// cublasLtMatmul "not supported" though the heuristic had offered the algorithm; each in its own
// allocation ran (test Fp8DescriptorVariantsOnThisGpu). LtMatmul::bind checks it.
inline constexpr size_t kLtScaleAlign = 256;
// Which of the FP8 pointers are set: bit 0 a_scale, 1 b_scale, 2 d_scale, 3 amax_d.
constexpr unsigned lt_scale_mask(const LtGemmPointers& p) {
  return (p.a_scale ? 1u : 0u) | (p.b_scale ? 2u : 0u) | (p.d_scale ? 4u : 0u) | (p.amax_d ? 8u : 0u);
}

// One handle and one workspace per device; not thread-safe (one per rank thread).
class LtContext {
 public:
  explicit LtContext(int device, size_t workspace_bytes = kLtWorkspaceBytes);
  ~LtContext();
  LtContext(const LtContext&) = delete;
  LtContext& operator=(const LtContext&) = delete;
  int device() const;
  void* handle() const;     // the cublasLtHandle_t
  void* workspace() const;  // device memory of workspace_bytes()
  size_t workspace_bytes() const;
  struct Impl;
  Impl& impl() const { return *impl_; }

 private:
  std::unique_ptr<Impl> impl_;
};

// One GEMM problem: its descriptors (built from an LtGemmPlan) and the algorithm in use.
class LtMatmul {
 public:
  LtMatmul(LtContext& ctx, const LtGemmPlan& plan);
  ~LtMatmul();
  LtMatmul(const LtMatmul&) = delete;
  LtMatmul& operator=(const LtMatmul&) = delete;

  // Up to `requested` algorithms in cuBLASLt's order ("increasing estimated compute time").
  // Throws gcb::Fault when cuBLASLt offers none for this plan on this device.
  const std::vector<LtAlgoConfig>& heuristics(int requested);
  // Uses the heuristic at `rank` (0 = heuristic #0, cuBLASLt's default choice).
  void use_heuristic(int rank);
  const LtAlgoConfig& chosen() const;
  const LtGemmPlan& plan() const;
  // Sets p's FP8 scale and amax pointers on the descriptor (no-op for other plans). Heuristics
  // depend on which of them are set, so when that changes, the algorithms are queried again (as
  // many as before; the chosen rank is kept). run() binds; bind first where the heuristics are read before a run
  // (autotune).
  void bind(const LtGemmPointers& p);
  // Enqueues D = A·Bᵀ (α = 1, β = 0) on `stream`. Stream-ordered; never synchronises.
  void run(const LtGemmPointers& p, gpu::Stream stream);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

struct LtAutotune {
  std::vector<LtAlgoConfig> candidates;
  std::vector<double> seconds;  // per candidate: mean over rounds of its per-round median; NaN = failed
  int rounds = 0;
  int chosen_rank = 0;
  bool from_cache = false;
};
inline constexpr int kLtAutotuneRounds = 4;
// Times each of the top `top_k` heuristic results through the harness (CUDA events, median of a
// few samples per round; NVIDIA's LtSgemmSimpleAutoTuning method) in kLtAutotuneRounds rounds of
// alternating order (autotune_rounds.hpp: drift hits every candidate alike) and switches `mm` to
// the fastest mean. Each round primes its candidate first (a launch outside the timer's latch), so
// loading a candidate's kernel is never timed. The winner is cached per lt_plan_key
// (gemm_types.hpp) + device: a second call for the same plan only selects it. Blocking. The output
// buffer is overwritten by the trial runs.
LtAutotune lt_autotune(LtMatmul& mm, const LtGemmPointers& p, gpu::Stream stream, int top_k = 8);

}  // namespace gcb::kernels
