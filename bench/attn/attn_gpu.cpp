// GPU cases of `gcbench attn` (built with CUDA): our FlashAttention-2-style kernels (forward,
// backward, both), the unfused cuBLAS baseline (forward) and cuDNN SDPA (forward, backward,
// both; plans built before timing, their build time reported as its own metric). Each case
// allocates its tensors once, verifies a fresh run on poisoned outputs against the FP64
// reference, and reports the memory it holds. Compiles here; runs only on a GPU (unvalidated).
#include <cublas_v2.h>

#include <fmt/format.h>

#include <algorithm>

#include "bench/attn/attn.hpp"
#include "bench/attn/attn_internal.hpp"
#include "bench/attn/attn_verify.hpp"
#include "core/buffer.hpp"
#include "core/error.hpp"
#include "core/harness.hpp"
#include "core/size.hpp"
#include "kernels/attention/cudnn_sdpa.hpp"
#include "kernels/attention/flash_attn.hpp"
#include "reports/specs.hpp"

namespace gcb::bench {

namespace {

namespace ka = kernels::attn;

const gpu::DeviceInfo& info(int g) { return gpu::runtime().devices.at(static_cast<size_t>(g)); }

// N(0,1) values rounded to the 16-bit type: the raw device bytes and their exact float values.
// With GQA, `kv_heads` distinct heads are drawn and each is repeated for heads/kv_heads queries.
void make_input(DType t, const ka::AttnShape& a, int kv_heads, uint64_t seed, std::vector<unsigned char>& raw,
                std::vector<float>& exact) {
  const size_t per_head = static_cast<size_t>(a.seq) * static_cast<size_t>(a.head_dim);
  const auto drawn = ka::random_normal(static_cast<size_t>(a.batch) * static_cast<size_t>(kv_heads) * per_head, seed);
  raw.resize(a.elements() * dtype_size(t));
  exact.resize(a.elements());
  const int group = a.heads / kv_heads;
  for (size_t bh = 0; bh < static_cast<size_t>(a.batch) * static_cast<size_t>(a.heads); ++bh) {
    const size_t b = bh / static_cast<size_t>(a.heads), h = bh % static_cast<size_t>(a.heads);
    const size_t src = (b * static_cast<size_t>(kv_heads) + h / static_cast<size_t>(group)) * per_head;
    for (size_t i = 0; i < per_head; ++i) {
      store_as(t, raw.data(), bh * per_head + i, drawn[src + i]);
      exact[bh * per_head + i] = static_cast<float>(load_as(t, raw.data(), bh * per_head + i));
    }
  }
}

std::vector<float> download(DType t, const DeviceBuffer& b, size_t n, gpu::Stream s) {
  std::vector<unsigned char> raw(n * dtype_size(t));
  gpu::copy_async(raw.data(), b.data(), raw.size(), gpu::CopyKind::device_to_host, s);
  gpu::synchronize(s);
  std::vector<float> x(n);
  for (size_t i = 0; i < n; ++i) x[i] = static_cast<float>(load_as(t, raw.data(), i));
  return x;
}

class AttnGpuCase final : public Case {
 public:
  AttnGpuCase(AttnProblem p, int g, int check_rows, uint64_t seed)
      : p_(p), gpu_(g), check_rows_(check_rows), seed_(seed) {}
  std::string key() const override { return attn_key(p_); }
  nlohmann::json params() const override { return attn_params(p_, fmt::format("gpu:{}", gpu_)); }
  int gpu() const override { return gpu_; }
  gpu::Stream stream() const override { return stream_; }

  std::string waived_reason() const override {
    if (gpu_ >= gpu::device_count()) return "no GPU: " + gpu::runtime().unavailable_reason;
    if (p_.impl == AttnImpl::unfused && p_.pass != AttnPass::fwd) return "the unfused baseline is forward-only";
    if (p_.impl == AttnImpl::ours)
      if (const char* why = ka::flash_unsupported(p_.dtype, p_.shape); *why) return why;
    const double need = static_cast<double>(device_bytes()), cap = static_cast<double>(info(gpu_).memory_bytes);
    if (need > 0.9 * cap) {
      std::string why =
          fmt::format("needs {} of device memory, more than 90% of {}", format_bytes(need), format_bytes(cap));
      if (p_.impl == AttnImpl::unfused)
        why += fmt::format(" (the b·h·s×s score matrix alone is {})",
                           format_bytes(static_cast<double>(ka::unfused_scores_bytes(p_.dtype, p_.shape))));
      return why;
    }
    if (p_.impl == AttnImpl::cudnn) return build_cudnn_plans();
    return {};
  }

  ~AttnGpuCase() override { AttnGpuCase::teardown(); }

  void setup() override {
    if (!stream_) stream_ = gpu::create_stream(gpu_);
    const size_t n = p_.shape.elements(), bytes = n * dtype_size(p_.dtype);
    std::vector<unsigned char> raw;
    const auto upload = [&](DeviceBuffer& dst, std::vector<float>& exact, int heads, uint64_t seed) {
      make_input(p_.dtype, p_.shape, heads, seed, raw, exact);
      dst = DeviceBuffer(gpu_, bytes);
      gpu::copy_async(dst.data(), raw.data(), bytes, gpu::CopyKind::host_to_device, stream_);
      gpu::synchronize(stream_);
    };
    upload(q_, in_.q, p_.shape.heads, seed_);
    upload(k_, in_.k, p_.kv_heads, seed_ + 1);
    upload(v_, in_.v, p_.kv_heads, seed_ + 2);
    o_ = DeviceBuffer(gpu_, bytes);
    if (p_.impl == AttnImpl::unfused) {
      scores_ = DeviceBuffer(gpu_, ka::unfused_scores_bytes(p_.dtype, p_.shape));
      cublasHandle_t h = nullptr;
      CUBLAS_CHECK(cublasCreate(&h));
      cublas_ = h;
      return;
    }
    lse_ = DeviceBuffer(gpu_, p_.shape.rows() * sizeof(float));
    if (const size_t ws = workspace_bytes(); ws > 0) workspace_ = DeviceBuffer(gpu_, ws);
    if (p_.pass == AttnPass::fwd) return;
    upload(d_o_, in_.d_o, p_.shape.heads, seed_ + 3);
    dq_ = DeviceBuffer(gpu_, bytes);
    dk_ = DeviceBuffer(gpu_, bytes);
    dv_ = DeviceBuffer(gpu_, bytes);
    if (p_.pass == AttnPass::bwd) forward();  // O and LSE for the timed backward
  }

  void launch() override {
    if (p_.impl == AttnImpl::unfused) {
      ka::unfused_forward(p_.dtype, p_.shape, q_.data(), k_.data(), v_.data(), o_.data(), scores_.data(), cublas_,
                          stream_);
      return;
    }
    if (p_.pass != AttnPass::bwd) forward();
    if (p_.pass == AttnPass::fwd) return;
    if (p_.impl == AttnImpl::cudnn)
      cudnn_bwd_->run(q_.data(), k_.data(), v_.data(), o_.data(), d_o_.data(), lse_.as<float>(), dq_.data(), dk_.data(),
                      dv_.data(), workspace_.data());
    else
      ka::flash_backward(p_.dtype, p_.shape, q_.data(), k_.data(), v_.data(), o_.data(), d_o_.data(), lse_.as<float>(),
                         dq_.data(), dk_.data(), dv_.data(), workspace_.data(), stream_);
  }

  std::string verify() override {
    // Poison every output this pass writes (0xFF bytes are NaN in fp16, bf16 and fp32), run once.
    const bool writes_forward = p_.pass != AttnPass::bwd;
    if (writes_forward) {
      gpu::memset_async(o_.data(), 0xFF, o_.size(), stream_);
      if (lse_.data()) gpu::memset_async(lse_.data(), 0xFF, lse_.size(), stream_);
    }
    for (auto* b : {&dq_, &dk_, &dv_})
      if (b->data()) gpu::memset_async(b->data(), 0xFF, b->size(), stream_);
    launch();
    gpu::synchronize(stream_);
    const size_t n = p_.shape.elements();
    AttnHostOutputs out;
    // A backward pass's dK/dV check needs the O and LSE it consumed (from setup's forward for bwd).
    if (writes_forward || p_.pass != AttnPass::fwd) {
      out.o = download(p_.dtype, o_, n, stream_);
      if (lse_.data()) out.lse = download(DType::f32, lse_, p_.shape.rows(), stream_);
    }
    if (p_.pass != AttnPass::fwd) {
      out.dq = download(p_.dtype, dq_, n, stream_);
      out.dk = download(p_.dtype, dk_, n, stream_);
      out.dv = download(p_.dtype, dv_, n, stream_);
    }
    // The unfused path rounds S to 16 bits before the softmax: one more rounding, 2× tolerance.
    const AttnVerdict v =
        verify_attention(p_.shape, p_.dtype, in_, out, check_rows_, p_.impl == AttnImpl::unfused ? 2.0 : 1.0);
    errors_ = v.errors;
    return v.failure;
  }

  std::vector<Metric> metrics(const Statistics& s) const override {
    const auto spec = find_gpu_spec(info(gpu_).name);
    const auto peak = spec ? peak_tflops(*spec, p_.dtype) : std::nullopt;
    auto m = attn_metrics(p_, s, peak, spec ? "spec:" + spec->sku + " dense" : "");
    // Plan building (graph, heuristics, finalize) happens once before timing; reported apart.
    if (p_.impl == AttnImpl::cudnn)
      m.push_back(Metric{"plan_build", plan_seconds_ * 1e3, "ms", false, std::nullopt, ""});
    return m;
  }
  nlohmann::json model() const override { return attn_model(p_); }
  nlohmann::json extra() override {
    nlohmann::json x = {
        {"errors", errors_},
        {"peak_memory_bytes", device_bytes()},
        {"peak_memory_counts", "buffers this case allocates (inputs, outputs, LSE, workspace, scores)"}};
    if (p_.impl == AttnImpl::ours) {
      const auto f = ka::forward_tiles(p_.shape.head_dim), b = ka::backward_tiles(p_.shape.head_dim);
      const auto fwd = fmt::format("fwd {}x{}, {} warps", f.rows, f.cols, ka::ForwardTiling<128>::kWarps);
      x["tiles"] = p_.pass == AttnPass::fwd
                       ? fwd
                       : fmt::format("{} / bwd {}x{}, {} warps", fwd, b.rows, b.cols, ka::BackwardTiling<128>::kWarps);
    }
    if (p_.impl == AttnImpl::unfused) x["score_matrix_bytes"] = ka::unfused_scores_bytes(p_.dtype, p_.shape);
    if (cudnn_) {
      x["cudnn_plan_build_seconds"] = plan_seconds_;  // forward and backward plans; not timed launches
      x["cudnn_engine"] = cudnn_->engine();
      x["cudnn_route"] = cudnn_->route();
    }
    if (cudnn_bwd_) {
      x["cudnn_bwd_engine"] = cudnn_bwd_->engine();
      x["cudnn_bwd_route"] = cudnn_bwd_->route();
    }
    return x;
  }
  void teardown() override {
    for (auto* b : {&q_, &k_, &v_, &o_, &lse_, &d_o_, &dq_, &dk_, &dv_, &workspace_, &scores_}) *b = DeviceBuffer();
    cudnn_.reset();
    cudnn_bwd_.reset();
    if (cublas_) cublasDestroy(static_cast<cublasHandle_t>(cublas_));
    cublas_ = nullptr;
    if (stream_) gpu::destroy_stream(stream_);
    stream_ = nullptr;
  }

 private:
  // The forward pass of this impl (cuDNN's for cuDNN: its backward reads its own Stats).
  void forward() {
    if (p_.impl == AttnImpl::cudnn)
      cudnn_->run(q_.data(), k_.data(), v_.data(), o_.data(), lse_.as<float>(), workspace_.data());
    else
      ka::flash_forward(p_.dtype, p_.shape, q_.data(), k_.data(), v_.data(), o_.data(), lse_.as<float>(), stream_);
  }
  // cuDNN's verdict on this shape decides WAIVED before setup, so the plans are built here, once,
  // timed by the harness's host timer and kept out of the measured launches. Every pass needs
  // the forward plan (bwd: O and Stats for the timed backward); bwd and fwdbwd the backward one.
  std::string build_cudnn_plans() const {
    if (!cudnn_) {
      if (!stream_) stream_ = gpu::create_stream(gpu_);
      HostTimer timer;
      plan_seconds_ = timer.time_batch(
          [this] {
            cudnn_ = std::make_unique<ka::CudnnSdpaForward>(p_.dtype, p_.shape, stream_);
            if (p_.pass != AttnPass::fwd && cudnn_->unsupported().empty())
              cudnn_bwd_ = std::make_unique<ka::CudnnSdpaBackward>(p_.dtype, p_.shape, stream_);
          },
          1);
    }
    if (!cudnn_->unsupported().empty()) return "cuDNN SDPA forward: " + cudnn_->unsupported();
    if (cudnn_bwd_ && !cudnn_bwd_->unsupported().empty()) return "cuDNN SDPA backward: " + cudnn_bwd_->unsupported();
    return {};
  }
  // cuDNN: one workspace shared by its forward and backward plans (they run in sequence on one
  // stream); ours: the backward kernel's dQ accumulator.
  size_t workspace_bytes() const {
    if (p_.impl == AttnImpl::cudnn)
      return std::max(cudnn_ ? cudnn_->workspace_bytes() : 0, cudnn_bwd_ ? cudnn_bwd_->workspace_bytes() : 0);
    return p_.pass == AttnPass::fwd ? 0 : ka::flash_backward_workspace_bytes(p_.shape);
  }
  // Device memory the case holds: its peak footprint (kernels' own allocations: none).
  size_t device_bytes() const {
    const size_t t = p_.shape.elements() * dtype_size(p_.dtype);
    if (p_.impl == AttnImpl::unfused) return 4 * t + ka::unfused_scores_bytes(p_.dtype, p_.shape);
    size_t b = 4 * t + p_.shape.rows() * sizeof(float) + workspace_bytes();
    if (p_.pass != AttnPass::fwd) b += 4 * t;
    return b;
  }

  AttnProblem p_;
  int gpu_, check_rows_;
  uint64_t seed_;
  mutable gpu::Stream stream_ = nullptr;
  mutable std::unique_ptr<ka::CudnnSdpaForward> cudnn_;  // built by waived_reason(), see build_cudnn_plans()
  mutable std::unique_ptr<ka::CudnnSdpaBackward> cudnn_bwd_;
  mutable double plan_seconds_ = 0;
  void* cublas_ = nullptr;
  DeviceBuffer q_, k_, v_, o_, lse_, d_o_, dq_, dk_, dv_, workspace_, scores_;
  AttnHostInputs in_;
  nlohmann::json errors_ = nlohmann::json::object();
};

}  // namespace

CaseList gpu_attn_cases(const AttnOptions& o, const DeviceSelection& sel, uint64_t seed) {
  if (!sel.gpu_requested) return {};
  if (sel.gpus.empty()) return waived_gpu_attn_cases(o, sel.gpu_missing);
  CaseList cases;
  for (int g : sel.gpus)
    for (const auto& p : attn_problems(o)) cases.push_back(std::make_unique<AttnGpuCase>(p, g, o.check_rows, seed));
  return cases;
}

}  // namespace gcb::bench
