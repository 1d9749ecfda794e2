// cuBLASLt launchers (see cublaslt_gemm.hpp). Host code; compiles, unvalidated: the build
// machine has no GPU, so no line of this file has run against a device yet.
#include "kernels/gemm/cublaslt_gemm.hpp"

#include <cublasLt.h>
#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <mutex>

#include "core/buffer.hpp"
#include "core/error.hpp"
#include "kernels/gemm/autotune_rounds.hpp"
#include "kernels/gemm/lt_cuda_types.hpp"

namespace gcb::kernels {

namespace {

template <typename T>
void set_desc(cublasLtMatmulDesc_t d, cublasLtMatmulDescAttributes_t attr, const T& value) {
  CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(d, attr, &value, sizeof(value)));
}

template <typename T>
T algo_attr(const cublasLtMatmulAlgo_t& algo, cublasLtMatmulAlgoConfigAttributes_t attr) {
  T value{};
  size_t written = 0;
  CUBLAS_CHECK(cublasLtMatmulAlgoConfigGetAttribute(&algo, attr, &value, sizeof(value), &written));
  return value;
}

LtAlgoConfig config_of(const cublasLtMatmulHeuristicResult_t& h, int rank) {
  LtAlgoConfig c;
  c.algo_id = algo_attr<int32_t>(h.algo, CUBLASLT_ALGO_CONFIG_ID);
  c.tile_id = algo_attr<uint32_t>(h.algo, CUBLASLT_ALGO_CONFIG_TILE_ID);
  c.stages_id = algo_attr<uint32_t>(h.algo, CUBLASLT_ALGO_CONFIG_STAGES_ID);
  c.splitk_num = algo_attr<int32_t>(h.algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM);
  c.reduction_scheme = algo_attr<uint32_t>(h.algo, CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME);
  c.cta_swizzling = algo_attr<uint32_t>(h.algo, CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING);
  c.custom_option = algo_attr<uint32_t>(h.algo, CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION);
  c.inner_shape_id = algo_attr<uint16_t>(h.algo, CUBLASLT_ALGO_CONFIG_INNER_SHAPE_ID);
  c.cluster_shape_id = algo_attr<uint16_t>(h.algo, CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID);
  c.workspace_bytes = h.workspaceSize;
  c.waves_count = h.wavesCount;
  c.heuristic_rank = rank;
  return c;
}

// Autotune winners per (device, plan key): the algorithm itself, so a hit needs no re-timing.
struct TuneCache {
  std::mutex mutex;
  std::map<std::string, int> rank;  // heuristic rank of the winner
};
TuneCache& tune_cache() {
  static TuneCache cache;
  return cache;
}

}  // namespace

std::string describe(const LtAlgoConfig& c) {
  return fmt::format(
      "algo={} tile={} stages={} splitk={} reduction={} swizzle={} custom={} inner={} cluster={} ws={} waves={:.2f} rank={}",
      c.algo_id, c.tile_id, c.stages_id, c.splitk_num, c.reduction_scheme, c.cta_swizzling, c.custom_option,
      c.inner_shape_id, c.cluster_shape_id, c.workspace_bytes, c.waves_count, c.heuristic_rank);
}

std::string cublaslt_version() { return fmt::format("cuBLASLt {}", cublasLtGetVersion()); }

struct LtContext::Impl {
  int device = 0;
  cublasLtHandle_t handle = nullptr;
  DeviceBuffer workspace;
};

LtContext::LtContext(int device, size_t workspace_bytes) : impl_(std::make_unique<Impl>()) {
  impl_->device = device;
  CUDA_CHECK(cudaSetDevice(device));
  CUBLAS_CHECK(cublasLtCreate(&impl_->handle));
  impl_->workspace = DeviceBuffer(device, workspace_bytes);
}

LtContext::~LtContext() {
  if (impl_ && impl_->handle) cublasLtDestroy(impl_->handle);
}

int LtContext::device() const { return impl_->device; }
void* LtContext::handle() const { return impl_->handle; }
void* LtContext::workspace() const { return impl_->workspace.data(); }
size_t LtContext::workspace_bytes() const { return impl_->workspace.size(); }

struct LtMatmul::Impl {
  LtContext* ctx = nullptr;
  LtGemmPlan plan;
  cublasLtMatmulDesc_t op = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr, d = nullptr;
  cublasLtMatmulPreference_t pref = nullptr;
  std::vector<cublasLtMatmulHeuristicResult_t> results;
  std::vector<LtAlgoConfig> configs;
  int chosen = -1;
  // Which FP8 scale/amax pointers are set on `op` (bit 0 A, 1 B, 2 D, 3 amax D), now and when
  // `results` were queried: cuBLASLt picks kernels for the descriptor as it stands, scale pointers
  // included, so an algorithm found without them is not one for a descriptor that has them
  // (NVIDIA CUDALibrarySamples, cuBLASLt/LtFp8Matmul: every pointer is set before the heuristic).
  unsigned bound_scales = 0, queried_scales = 0;

  static cublasLtMatrixLayout_t layout(const LtLayout& l) { return make_lt_layout(l); }
};

LtMatmul::LtMatmul(LtContext& ctx, const LtGemmPlan& plan) : impl_(std::make_unique<Impl>()) {
  Impl& m = *impl_;
  m.ctx = &ctx;
  m.plan = plan;
  CUBLAS_CHECK(cublasLtMatmulDescCreate(&m.op, cuda_compute(plan.compute), cuda_type(plan.scale_type)));
  set_desc(m.op, CUBLASLT_MATMUL_DESC_TRANSA, static_cast<int32_t>(plan.trans_a ? CUBLAS_OP_T : CUBLAS_OP_N));
  set_desc(m.op, CUBLASLT_MATMUL_DESC_TRANSB, static_cast<int32_t>(plan.trans_b ? CUBLAS_OP_T : CUBLAS_OP_N));
  if (plan.fp8) set_desc(m.op, CUBLASLT_MATMUL_DESC_FAST_ACCUM, static_cast<int8_t>(plan.fast_accum ? 1 : 0));
  m.a = Impl::layout(plan.a);
  m.b = Impl::layout(plan.b);
  m.c = Impl::layout(plan.c);
  m.d = Impl::layout(plan.d);
  CUBLAS_CHECK(cublasLtMatmulPreferenceCreate(&m.pref));
  const uint64_t ws = ctx.impl().workspace.size();
  CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(m.pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof(ws)));
}

LtMatmul::~LtMatmul() {
  if (!impl_) return;
  if (impl_->pref) cublasLtMatmulPreferenceDestroy(impl_->pref);
  for (auto l : {impl_->a, impl_->b, impl_->c, impl_->d})
    if (l) cublasLtMatrixLayoutDestroy(l);
  if (impl_->op) cublasLtMatmulDescDestroy(impl_->op);
}

const std::vector<LtAlgoConfig>& LtMatmul::heuristics(int requested) {
  Impl& m = *impl_;
  if (static_cast<int>(m.results.size()) >= requested) return m.configs;
  m.results.assign(static_cast<size_t>(requested), cublasLtMatmulHeuristicResult_t{});
  int returned = 0;
  CUBLAS_CHECK(cublasLtMatmulAlgoGetHeuristic(m.ctx->impl().handle, m.op, m.a, m.b, m.c, m.d, m.pref, requested,
                                              m.results.data(), &returned));
  m.results.resize(static_cast<size_t>(returned));
  if (returned == 0) throw Fault(fmt::format("cuBLASLt returned no algorithm for {}", lt_plan_key(m.plan)));
  m.queried_scales = m.bound_scales;
  m.configs.clear();
  for (int r = 0; r < returned; ++r) m.configs.push_back(config_of(m.results[static_cast<size_t>(r)], r));
  return m.configs;
}

void LtMatmul::use_heuristic(int rank) {
  heuristics(rank + 1);
  GCB_CHECK(rank >= 0 && rank < static_cast<int>(impl_->configs.size()), "heuristic rank out of range");
  impl_->chosen = rank;
}

const LtAlgoConfig& LtMatmul::chosen() const {
  GCB_CHECK(impl_->chosen >= 0, "no algorithm chosen yet (call use_heuristic or lt_autotune)");
  return impl_->configs[static_cast<size_t>(impl_->chosen)];
}

const LtGemmPlan& LtMatmul::plan() const { return impl_->plan; }

void LtMatmul::bind(const LtGemmPointers& p) {
  Impl& m = *impl_;
  if (!m.plan.fp8) return;
  // An attribute is set only for a pointer given now or before (to clear it). D's scale and amax
  // only for an FP8 D: cuBLASLt computes no amax for another output type (pytorch/pytorch#122821).
  // (Setting them to null with a bf16 D ran on an H200: the lease's "not supported" was the scale
  // pointers' alignment, kLtScaleAlign.)
  const unsigned mask = lt_scale_mask(p), was = m.bound_scales;
  const bool fp8_d = m.plan.d.type == DType::fp8_e4m3 || m.plan.d.type == DType::fp8_e5m2;
  GCB_CHECK(fp8_d || (mask & 12u) == 0, "LtMatmul: D's scale and amax apply to an FP8 D only");
  for (const void* q : {static_cast<const void*>(p.a_scale), static_cast<const void*>(p.b_scale),
                        static_cast<const void*>(p.d_scale), static_cast<const void*>(p.amax_d)})
    GCB_CHECK(reinterpret_cast<uintptr_t>(q) % kLtScaleAlign == 0,
              fmt::format("LtMatmul: an FP8 scale pointer off a {}-byte boundary (cuBLASLt refuses the matmul)",
                          kLtScaleAlign));
  if ((mask | was) & 2u)
    set_desc(m.op, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, static_cast<const void*>(p.b_scale));  // cuBLASLt's A = our B
  if ((mask | was) & 1u) set_desc(m.op, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, static_cast<const void*>(p.a_scale));
  if ((mask | was) & 4u) set_desc(m.op, CUBLASLT_MATMUL_DESC_D_SCALE_POINTER, static_cast<const void*>(p.d_scale));
  if ((mask | was) & 8u) set_desc(m.op, CUBLASLT_MATMUL_DESC_AMAX_D_POINTER, static_cast<void*>(p.amax_d));
  m.bound_scales = mask;
  if (!m.results.empty() && m.queried_scales != m.bound_scales) {
    // Queried for another descriptor: ask again for as many (the chosen rank is kept).
    const int requested = static_cast<int>(m.results.size());
    m.results.clear();
    heuristics(requested);
  }
}

void LtMatmul::run(const LtGemmPointers& p, gpu::Stream stream) {
  Impl& m = *impl_;
  bind(p);
  if (m.chosen < 0) use_heuristic(0);
  GCB_CHECK(
      m.chosen < static_cast<int>(m.results.size()),
      fmt::format("heuristic rank {} not offered for {} once its FP8 scales are bound", m.chosen, lt_plan_key(m.plan)));
  const float alpha_f = 1.0f, beta_f = 0.0f;
  const int32_t alpha_i = 1, beta_i = 0;
  const bool integer = m.plan.scale_type == DType::i32;
  const void* alpha = integer ? static_cast<const void*>(&alpha_i) : static_cast<const void*>(&alpha_f);
  const void* beta = integer ? static_cast<const void*>(&beta_i) : static_cast<const void*>(&beta_f);
  const auto& h = m.results[static_cast<size_t>(m.chosen)];
  const DeviceBuffer& ws = m.ctx->impl().workspace;
  // β = 0: C is never read, so D stands in for it (same layout).
  CUBLAS_CHECK(cublasLtMatmul(m.ctx->impl().handle, m.op, alpha, p.b, m.a, p.a, m.b, beta, p.d, m.c, p.d, m.d, &h.algo,
                              ws.data(), ws.size(), static_cast<cudaStream_t>(stream)));
}

LtAutotune lt_autotune(LtMatmul& mm, const LtGemmPointers& p, gpu::Stream stream, int top_k) {
  GCB_CHECK(top_k >= 1, "autotune needs top_k >= 1");
  LtAutotune out;
  const int device = [&] {
    int d = 0;
    CUDA_CHECK(cudaGetDevice(&d));
    return d;
  }();
  const std::string key = fmt::format("dev{}/{}/top{}", device, lt_plan_key(mm.plan()), top_k);
  mm.bind(p);  // the candidates are those of the descriptor the runs will use
  out.candidates = mm.heuristics(top_k);
  {
    std::lock_guard lock(tune_cache().mutex);
    if (auto it = tune_cache().rank.find(key); it != tune_cache().rank.end()) {
      mm.use_heuristic(it->second);
      out.chosen_rank = it->second;
      out.from_cache = true;
      return out;
    }
  }
  // A short budget per candidate and round: enough to rank them, not a benchmark (the benchmark
  // of the winner is the harness run that follows).
  HarnessOptions h;
  h.warmup = 2;
  h.min_samples = 3;
  h.max_samples = 10;
  h.min_time = 0.005;
  h.max_time = 0.25;
  h.noise = 0.02;
  auto timer = gpu::make_event_timer(device, stream);
  std::string first_failure;  // what the first candidate that failed to launch said
  const RoundRobinTiming timing =
      time_round_robin(static_cast<int>(out.candidates.size()), kLtAutotuneRounds, [&](int i) {
        mm.use_heuristic(out.candidates[static_cast<size_t>(i)].heuristic_rank);
        try {
          return measure(
                     *timer, [&] { mm.run(p, stream); }, h)
              .stats.median;
        } catch (const Fault& f) {
          // A candidate the heuristic offered but that fails to launch is skipped, not fatal.
          if (first_failure.empty())
            first_failure = fmt::format("rank {}: {}", out.candidates[static_cast<size_t>(i)].heuristic_rank, f.what());
          CUDA_CHECK(cudaStreamSynchronize(static_cast<cudaStream_t>(stream)));
          return std::numeric_limits<double>::quiet_NaN();
        }
      });
  if (timing.best < 0)
    throw Fault(fmt::format("no autotune candidate of {} launched ({} offered; first failure, {})",
                            lt_plan_key(mm.plan()), out.candidates.size(), first_failure));
  out.seconds = timing.mean_seconds;
  out.rounds = kLtAutotuneRounds;
  out.chosen_rank = out.candidates[static_cast<size_t>(timing.best)].heuristic_rank;
  mm.use_heuristic(out.chosen_rank);
  std::lock_guard lock(tune_cache().mutex);
  tune_cache().rank[key] = out.chosen_rank;
  return out;
}

}  // namespace gcb::kernels
