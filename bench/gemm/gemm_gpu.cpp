// GPU cases of `gcbench gemm` (built with CUDA and cuBLASLt): one case per shape × dtype × algo
// (heuristic #0, and the autotuned one with --tune on), inputs seeded on the host and copied
// over, the output poisoned before timing and checked against FP64 afterwards.
// Compiles, unvalidated: no GPU on the build machine.
#include <cmath>
#include <fmt/format.h>

#include "bench/gemm/gemm.hpp"
#include "bench/common/waived_case.hpp"
#include "core/buffer.hpp"
#include "core/error.hpp"
#include "kernels/gemm/cublaslt_gemm.hpp"
#include "kernels/gemm/fp8_scaling.hpp"
#include "reports/specs.hpp"

namespace gcb::bench {

namespace {

using kernels::GemmData;

nlohmann::json to_json(const kernels::LtAlgoConfig& c) {
  return {{"algo_id", c.algo_id},
          {"tile_id", c.tile_id},
          {"stages_id", c.stages_id},
          {"splitk_num", c.splitk_num},
          {"reduction_scheme", c.reduction_scheme},
          {"cta_swizzling", c.cta_swizzling},
          {"custom_option", c.custom_option},
          {"inner_shape_id", c.inner_shape_id},
          {"cluster_shape_id", c.cluster_shape_id},
          {"workspace_bytes", c.workspace_bytes},
          {"waves_count", c.waves_count},
          {"heuristic_rank", c.heuristic_rank}};
}

bool is_fp8(DType t) { return t == DType::fp8_e4m3 || t == DType::fp8_e5m2; }

class GpuGemmCase final : public Case {
 public:
  GpuGemmCase(int device, NamedShape s, DType t, bool tuned, const GemmOptions& o, uint64_t seed)
      : device_(device), shape_(std::move(s)), dtype_(t), tuned_(tuned), opts_(o), seed_(seed) {
    try {
      plan_ = kernels::make_lt_gemm_plan(shape_.shape, dtype_, o.fast_accum);
    } catch (const UsageError& e) {
      plan_error_ = e.what();
    }
  }
  std::string key() const override { return fmt::format("gemm/{}", dtype_name(dtype_)); }
  nlohmann::json params() const override {
    nlohmann::json p = {{"device", fmt::format("gpu:{}", device_)},
                        {"impl", "cublaslt"},
                        {"algo", tuned_ ? "tuned" : "heuristic0"},
                        {"dtype", dtype_name(dtype_)},
                        {"shape", shape_.name},
                        {"m", shape_.shape.m},
                        {"n", shape_.shape.n},
                        {"k", shape_.shape.k},
                        {"data", opts_.data == GemmData::zeros ? "zeros" : "random"}};
    if (is_fp8(dtype_)) p["fast_accum"] = opts_.fast_accum;
    if (tuned_) p["tune_top_k"] = opts_.tune_top_k;
    return p;
  }
  int gpu() const override { return device_; }
  std::string waived_reason() const override {
    if (!plan_error_.empty() || !is_fp8(dtype_) || device_ >= gpu::device_count()) return plan_error_;
    const gpu::DeviceInfo& d = gpu::runtime().devices.at(static_cast<size_t>(device_));
    return kernels::fp8_unsupported_reason(d.cc_major, d.cc_minor);
  }
  nlohmann::json model() const override {
    return {{"flops", kernels::gemm_flops(shape_.shape)},
            {"bytes", kernels::gemm_bytes(shape_.shape, dtype_, kernels::gemm_output_type(dtype_))},
            {"flop_convention", "2*M*N*K"},
            {"plan", kernels::lt_plan_key(plan_)}};
  }
  void setup() override {
    const auto& s = shape_.shape;
    const size_t mk = static_cast<size_t>(s.m * s.k), nk = static_cast<size_t>(s.n * s.k),
                 mn = static_cast<size_t>(s.m * s.n);
    stream_ = gpu::create_stream(device_);
    ctx_ = std::make_unique<kernels::LtContext>(device_);
    a_host_.assign(mk * dtype_size(plan_.b.type), 0);
    b_host_.assign(nk * dtype_size(plan_.a.type), 0);
    d_host_.assign(mn * dtype_size(plan_.d.type), 0);
    // FP8: per-tensor scale from the data's amax (fp8_scaling.hpp); cuBLASLt gets 1/scale.
    double scale_a = 1, scale_b = 1;
    if (is_fp8(dtype_) && opts_.data == GemmData::random) {
      scale_a = kernels::fp8_scale_from_amax(kernels::gemm_input_amax(mk, seed_ * 2 + 0), plan_.b.type);
      scale_b = kernels::fp8_scale_from_amax(kernels::gemm_input_amax(nk, seed_ * 2 + 1), plan_.a.type);
    }
    kernels::fill_gemm_input(dtype_ == DType::tf32 ? DType::f32 : plan_.b.type, a_host_.data(), mk, seed_ * 2 + 0,
                             opts_.data, scale_a);
    kernels::fill_gemm_input(dtype_ == DType::tf32 ? DType::f32 : plan_.a.type, b_host_.data(), nk, seed_ * 2 + 1,
                             opts_.data, scale_b);
    dequant_a_ = kernels::fp8_dequant_scale(scale_a);
    dequant_b_ = kernels::fp8_dequant_scale(scale_b);
    a_ = DeviceBuffer(device_, a_host_.size());
    b_ = DeviceBuffer(device_, b_host_.size());
    d_ = DeviceBuffer(device_, d_host_.size());
    // Each scale on a boundary of its own (kernels::kLtScaleAlign: cuBLASLt refuses them packed).
    scales_ = DeviceBuffer(device_, 2 * kernels::kLtScaleAlign);
    const float host_scale_a = static_cast<float>(dequant_a_), host_scale_b = static_cast<float>(dequant_b_);
    gpu::copy_async(a_.data(), a_host_.data(), a_host_.size(), gpu::CopyKind::host_to_device, stream_);
    gpu::copy_async(b_.data(), b_host_.data(), b_host_.size(), gpu::CopyKind::host_to_device, stream_);
    auto* scale_b_slot = static_cast<unsigned char*>(scales_.data()) + kernels::kLtScaleAlign;
    gpu::copy_async(scales_.data(), &host_scale_a, sizeof(float), gpu::CopyKind::host_to_device, stream_);
    gpu::copy_async(scale_b_slot, &host_scale_b, sizeof(float), gpu::CopyKind::host_to_device, stream_);
    ptrs_ = {a_.data(), b_.data(), d_.data(), nullptr, nullptr, nullptr, nullptr};
    if (is_fp8(dtype_)) {
      ptrs_.a_scale = scales_.as<float>();
      ptrs_.b_scale = reinterpret_cast<const float*>(scale_b_slot);
    }
    gpu::synchronize(stream_);
    mm_ = std::make_unique<kernels::LtMatmul>(*ctx_, plan_);
    if (tuned_)
      tune_ = kernels::lt_autotune(*mm_, ptrs_, stream_, opts_.tune_top_k);
    else
      mm_->use_heuristic(0);
    // Poison after tuning: 0xFF bytes are NaN in every float type, so unwritten entries FAIL.
    gpu::memset_async(d_.data(), 0xFF, d_.size(), stream_);
    gpu::synchronize(stream_);
  }
  gpu::Stream stream() const override { return stream_; }
  void launch() override { mm_->run(ptrs_, stream_); }
  std::string verify() override {
    gpu::copy_async(d_host_.data(), d_.data(), d_host_.size(), gpu::CopyKind::device_to_host, stream_);
    gpu::synchronize(stream_);
    const kernels::GemmOperandsView v{plan_.b.type, plan_.a.type, a_host_.data(), b_host_.data(),
                                      dequant_a_,   dequant_b_,   plan_.d.type,   d_host_.data()};
    check_ = kernels::check_gemm(shape_.shape, v, kernels::gemm_samples(shape_.shape, opts_.samples, seed_),
                                 kernels::gemm_error_bound(dtype_, shape_.shape.k, plan_.fast_accum));
    return check_.failure;
  }
  std::vector<Metric> metrics(const Statistics& s) const override {
    const auto& info = gpu::runtime().devices.at(static_cast<size_t>(device_));
    std::optional<double> peak, hbm;
    std::string source;
    if (const auto spec = find_gpu_spec(info.name)) {
      peak = peak_tflops(*spec, dtype_);
      hbm = spec->hbm_gbps;
      source = "spec:" + spec->sku;
    }
    return gemm_metrics(shape_.shape, dtype_, s, peak, hbm, source, check_.max_rel_error);
  }
  nlohmann::json extra() override {
    nlohmann::json e = {{"library", kernels::cublaslt_version()},
                        {"workspace_bytes", kernels::kLtWorkspaceBytes},
                        {"algorithm", to_json(mm_->chosen())},
                        {"accuracy", gemm_accuracy_json(check_, opts_.samples)}};
    if (is_fp8(dtype_))
      e["fp8"] = {{"a_dequant", dequant_a_},
                  {"b_dequant", dequant_b_},
                  {"a_type", dtype_name(plan_.b.type)},
                  {"b_type", dtype_name(plan_.a.type)}};
    if (tuned_) {
      nlohmann::json cands = nlohmann::json::array();
      for (size_t i = 0; i < tune_.candidates.size(); ++i) {
        nlohmann::json c = to_json(tune_.candidates[i]);
        c["mean_round_median_s"] = i < tune_.seconds.size() && std::isfinite(tune_.seconds[i])
                                       ? nlohmann::json(tune_.seconds[i])
                                       : nlohmann::json();
        cands.push_back(std::move(c));
      }
      e["autotune"] = {{"chosen_rank", tune_.chosen_rank},
                       {"from_cache", tune_.from_cache},
                       {"rounds", tune_.rounds},
                       {"order", "alternating forward/backward per round"},
                       {"candidates", cands}};
    }
    return e;
  }
  void teardown() override {
    mm_.reset();
    ctx_.reset();
    a_ = DeviceBuffer();
    b_ = DeviceBuffer();
    d_ = DeviceBuffer();
    scales_ = DeviceBuffer();
    a_host_ = {};
    b_host_ = {};
    d_host_ = {};
    if (stream_) gpu::destroy_stream(stream_);
    stream_ = nullptr;
  }

 private:
  int device_;
  NamedShape shape_;
  DType dtype_;
  bool tuned_;
  GemmOptions opts_;
  uint64_t seed_;
  kernels::LtGemmPlan plan_;
  std::string plan_error_;
  gpu::Stream stream_ = nullptr;
  std::unique_ptr<kernels::LtContext> ctx_;
  std::unique_ptr<kernels::LtMatmul> mm_;
  std::vector<unsigned char> a_host_, b_host_, d_host_;
  DeviceBuffer a_, b_, d_, scales_;
  double dequant_a_ = 1, dequant_b_ = 1;
  kernels::LtGemmPointers ptrs_;
  kernels::LtAutotune tune_;
  kernels::GemmCheck check_;
};

}  // namespace

CaseList gpu_gemm_cases(const GemmOptions& o, const DeviceSelection& sel, uint64_t seed) {
  CaseList cases;
  if (!sel.gpu_requested) return cases;
  if (sel.gpus.empty()) {
    cases.push_back(std::make_unique<WaivedCase>("gemm/gpu", nlohmann::json{{"device", "gpu"}}, sel.gpu_missing));
    return cases;
  }
  for (int g : sel.gpus)
    for (DType t : gemm_dtypes_for(o, true))
      for (const auto& s : gemm_shapes(o)) {
        cases.push_back(std::make_unique<GpuGemmCase>(g, s, t, false, o, seed));
        if (o.tune) cases.push_back(std::make_unique<GpuGemmCase>(g, s, t, true, o, seed));
      }
  return cases;
}

}  // namespace gcb::bench
