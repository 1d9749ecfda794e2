// GPU cases of `gcbench attn` (built with CUDA): our FlashAttention-2-style kernels (forward,
// backward, both), the unfused cuBLAS baseline (forward) and cuDNN SDPA (forward, backward,
// both; plans built before timing, their build time reported as its own metric). Each case
// allocates its tensors once, verifies a fresh run on poisoned outputs against the FP64
// reference, and reports the memory it holds. Compiles here; runs only on a GPU (unvalidated).
#include <cublas_v2.h>

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <deque>
#include <memory>
#include <mutex>
#include <tuple>

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

// The inputs a case draws, kept for the cases after it: the implementations and passes of one
// shape follow each other in the grid (attn_problems: impl innermost, then pass) and draw the
// same tensors, and drawing them is most of a case's time at FlashAttention's grid (16k tokens ×
// hidden 2048 = 33.5M normals a tensor, ~0.8 s each with mt19937_64). Four entries: q, k, v, dO.
struct HostInput {
  std::vector<unsigned char> raw;
  std::vector<float> exact;
};
std::shared_ptr<const HostInput> cached_input(DType t, const ka::AttnShape& a, int kv_heads, uint64_t seed) {
  using Key = std::tuple<DType, int, int, int, int, int, uint64_t>;
  static std::mutex mutex;
  static std::deque<std::pair<Key, std::shared_ptr<const HostInput>>> entries;  // newest first
  const Key key{t, a.batch, a.heads, a.seq, a.head_dim, kv_heads, seed};
  {
    std::lock_guard lock(mutex);
    for (const auto& [k, v] : entries)
      if (k == key) return v;
  }
  auto made = std::make_shared<HostInput>();
  make_input(t, a, kv_heads, seed, made->raw, made->exact);
  std::lock_guard lock(mutex);
  entries.emplace_front(key, made);
  if (entries.size() > 4) entries.pop_back();
  return made;
}

std::vector<float> download(DType t, const DeviceBuffer& b, size_t n, gpu::Stream s) {
  std::vector<unsigned char> raw(n * dtype_size(t));
  gpu::copy_async(raw.data(), b.data(), raw.size(), gpu::CopyKind::device_to_host, s);
  gpu::synchronize(s);
  std::vector<float> x(n);
  for (size_t i = 0; i < n; ++i) x[i] = static_cast<float>(load_as(t, raw.data(), i));
  return x;
}

// The device tensors of one case: the case allocates q, k, v, o (and the backward's d_o, dq, dk,
// dv); a strategy adds what its implementation needs (lse, workspace, scores).
struct AttnTensors {
  DeviceBuffer q, k, v, o, lse, d_o, dq, dk, dv, workspace, scores;
};

// What one implementation does on the GPU; the rest of a case (inputs, poisoning, verification,
// metrics, memory checks) is shared. One strategy per row of attn_impls() (kGpuStrategies below).
class AttnGpuStrategy {
 public:
  AttnGpuStrategy(const AttnProblem& p, int gpu) : p_(p), gpu_(gpu) {}
  virtual ~AttnGpuStrategy() = default;
  // Why this shape cannot run, before the memory check ("" = it can).
  virtual std::string shape_unsupported() const { return {}; }
  // Work that decides WAIVED and is kept out of the timed launches (cuDNN: building its plans),
  // after the memory check; may create the case's stream. "" = ready.
  virtual std::string prepare(gpu::Stream& /*stream*/) { return {}; }
  // Buffers beyond q, k, v, o (and the backward's), allocated in setup.
  virtual void allocate(AttnTensors& t) = 0;
  // Device bytes those buffers take.
  virtual size_t own_bytes() const = 0;
  virtual void forward(AttnTensors& t, gpu::Stream s) = 0;
  virtual void backward(AttnTensors& /*t*/, gpu::Stream /*s*/) {}  // rows with backward = false never get here
  virtual void add_metrics(std::vector<Metric>& /*m*/) const {}
  virtual void describe(nlohmann::json& /*extra*/) const {}
  virtual void release() {}

 protected:
  AttnProblem p_;
  int gpu_;
};

// Our FlashAttention-2-style kernels (kernels/attention/flash_attn.hpp).
class FlashStrategy final : public AttnGpuStrategy {
 public:
  using AttnGpuStrategy::AttnGpuStrategy;
  std::string shape_unsupported() const override {
    if (std::string why = ka::flash_unsupported(p_.dtype, p_.shape); !why.empty()) return why;
    // The backward needs more shared memory per block than sm_86/89/120 allow.
    return ka::flash_smem_unsupported(p_.shape.head_dim, p_.pass != AttnPass::fwd, info(gpu_).smem_per_block_optin);
  }
  void allocate(AttnTensors& t) override {
    t.lse = DeviceBuffer(gpu_, p_.shape.rows() * sizeof(float));
    if (const size_t ws = workspace_bytes(); ws > 0) t.workspace = DeviceBuffer(gpu_, ws);
  }
  size_t own_bytes() const override { return p_.shape.rows() * sizeof(float) + workspace_bytes(); }
  void forward(AttnTensors& t, gpu::Stream s) override {
    ka::flash_forward(p_.dtype, p_.shape, t.q.data(), t.k.data(), t.v.data(), t.o.data(), t.lse.as<float>(), s);
  }
  void backward(AttnTensors& t, gpu::Stream s) override {
    ka::flash_backward(p_.dtype, p_.shape, t.q.data(), t.k.data(), t.v.data(), t.o.data(), t.d_o.data(),
                       t.lse.as<float>(), t.dq.data(), t.dk.data(), t.dv.data(), t.workspace.data(), s);
  }
  void describe(nlohmann::json& x) const override {
    const auto f = ka::forward_tiles(p_.shape.head_dim), b = ka::backward_tiles(p_.shape.head_dim);
    const auto fwd = fmt::format("fwd {}x{}, {} warps", f.rows, f.cols, ka::ForwardTiling<128>::kWarps);
    x["tiles"] = p_.pass == AttnPass::fwd
                     ? fwd
                     : fmt::format("{} / bwd {}x{}, {} warps", fwd, b.rows, b.cols, ka::BackwardTiling<128>::kWarps);
  }

 private:
  // The backward kernel's dQ accumulator.
  size_t workspace_bytes() const { return p_.pass == AttnPass::fwd ? 0 : ka::flash_backward_workspace_bytes(p_.shape); }
};

// The unfused cuBLAS baseline (forward only): S = QKᵀ materialised in HBM, softmax, O = PV.
class UnfusedStrategy final : public AttnGpuStrategy {
 public:
  using AttnGpuStrategy::AttnGpuStrategy;
  void allocate(AttnTensors& t) override {
    t.scores = DeviceBuffer(gpu_, ka::unfused_scores_bytes(p_.dtype, p_.shape));
    cublasHandle_t h = nullptr;
    CUBLAS_CHECK(cublasCreate(&h));
    cublas_ = h;
  }
  size_t own_bytes() const override { return ka::unfused_scores_bytes(p_.dtype, p_.shape); }
  void forward(AttnTensors& t, gpu::Stream s) override {
    ka::unfused_forward(p_.dtype, p_.shape, t.q.data(), t.k.data(), t.v.data(), t.o.data(), t.scores.data(), cublas_,
                        s);
  }
  void release() override {
    if (cublas_) cublasDestroy(static_cast<cublasHandle_t>(cublas_));
    cublas_ = nullptr;
  }
  ~UnfusedStrategy() override { UnfusedStrategy::release(); }

 private:
  void* cublas_ = nullptr;
};

// cuDNN SDPA (kernels/attention/cudnn_sdpa.hpp): forward and backward plans, one workspace.
class CudnnStrategy final : public AttnGpuStrategy {
 public:
  using AttnGpuStrategy::AttnGpuStrategy;
  // cuDNN's verdict on this shape decides WAIVED before setup, so the plans are built here, once,
  // timed by the harness's host timer and kept out of the measured launches. Every pass needs
  // the forward plan (bwd: O and Stats for the timed backward); bwd and fwdbwd the backward one.
  std::string prepare(gpu::Stream& stream) override {
    if (!fwd_) {
      if (!stream) stream = gpu::create_stream(gpu_);
      HostTimer timer;
      plan_seconds_ = timer.time_batch(
          [&] {
            fwd_ = std::make_unique<ka::CudnnSdpaForward>(p_.dtype, p_.shape, stream);
            if (p_.pass != AttnPass::fwd && fwd_->unsupported().empty())
              bwd_ = std::make_unique<ka::CudnnSdpaBackward>(p_.dtype, p_.shape, stream);
          },
          1);
    }
    if (!fwd_->unsupported().empty()) return "cuDNN SDPA forward: " + fwd_->unsupported();
    if (bwd_ && !bwd_->unsupported().empty()) return "cuDNN SDPA backward: " + bwd_->unsupported();
    return {};
  }
  void allocate(AttnTensors& t) override {
    t.lse = DeviceBuffer(gpu_, p_.shape.rows() * sizeof(float));
    if (const size_t ws = workspace_bytes(); ws > 0) t.workspace = DeviceBuffer(gpu_, ws);
  }
  size_t own_bytes() const override { return p_.shape.rows() * sizeof(float) + workspace_bytes(); }
  // cuDNN's forward for cuDNN: its backward reads its own Stats.
  void forward(AttnTensors& t, gpu::Stream) override {
    fwd_->run(t.q.data(), t.k.data(), t.v.data(), t.o.data(), t.lse.as<float>(), t.workspace.data());
  }
  void backward(AttnTensors& t, gpu::Stream) override {
    bwd_->run(t.q.data(), t.k.data(), t.v.data(), t.o.data(), t.d_o.data(), t.lse.as<float>(), t.dq.data(), t.dk.data(),
              t.dv.data(), t.workspace.data());
  }
  // Plan building (graph, heuristics, finalize) happens once before timing; reported apart.
  void add_metrics(std::vector<Metric>& m) const override {
    m.push_back(Metric{"plan_build", plan_seconds_ * 1e3, "ms", false, std::nullopt, ""});
  }
  void describe(nlohmann::json& x) const override {
    if (fwd_) {
      x["cudnn_plan_build_seconds"] = plan_seconds_;  // forward and backward plans; not timed launches
      x["cudnn_engine"] = fwd_->engine();
      x["cudnn_route"] = fwd_->route();
    }
    if (bwd_) {
      x["cudnn_bwd_engine"] = bwd_->engine();
      x["cudnn_bwd_route"] = bwd_->route();
    }
  }
  void release() override {
    fwd_.reset();
    bwd_.reset();
  }

 private:
  // One workspace shared by the forward and backward plans (they run in sequence on one stream).
  size_t workspace_bytes() const {
    return std::max(fwd_ ? fwd_->workspace_bytes() : 0, bwd_ ? bwd_->workspace_bytes() : 0);
  }

  std::unique_ptr<ka::CudnnSdpaForward> fwd_;  // built by prepare()
  std::unique_ptr<ka::CudnnSdpaBackward> bwd_;
  double plan_seconds_ = 0;
};

template <typename S>
std::unique_ptr<AttnGpuStrategy> make_strategy(const AttnProblem& p, int gpu) {
  return std::make_unique<S>(p, gpu);
}

// The GPU strategy of each row of attn_impls(), in its (the enum's) order.
using MakeStrategy = std::unique_ptr<AttnGpuStrategy> (*)(const AttnProblem&, int);
constexpr std::array<MakeStrategy, 3> kGpuStrategies = {
    make_strategy<FlashStrategy>,    // AttnImpl::ours
    make_strategy<UnfusedStrategy>,  // AttnImpl::unfused
    make_strategy<CudnnStrategy>,    // AttnImpl::cudnn
};

std::unique_ptr<AttnGpuStrategy> gpu_strategy(const AttnProblem& p, int gpu) {
  GCB_CHECK(kGpuStrategies.size() == attn_impls().size(), "every attention implementation needs its GPU strategy");
  return kGpuStrategies.at(static_cast<size_t>(p.impl))(p, gpu);
}

class AttnGpuCase final : public Case {
 public:
  AttnGpuCase(AttnProblem p, int g, int check_rows, uint64_t seed)
      : p_(p), gpu_(g), check_rows_(check_rows), seed_(seed), impl_(gpu_strategy(p, g)) {}
  std::string key() const override { return attn_key(p_); }
  nlohmann::json params() const override { return attn_params(p_, fmt::format("gpu:{}", gpu_)); }
  int gpu() const override { return gpu_; }
  gpu::Stream stream() const override { return stream_; }

  std::string waived_reason() const override {
    if (gpu_ >= gpu::device_count()) return "no GPU: " + gpu::runtime().unavailable_reason;
    const AttnImplInfo& impl = attn_impl_info(p_.impl);
    if (!impl.backward && p_.pass != AttnPass::fwd) return fmt::format("{} is forward-only", impl.label);
    if (std::string why = impl_->shape_unsupported(); !why.empty()) return why;
    const double need = static_cast<double>(device_bytes()), cap = static_cast<double>(info(gpu_).memory_bytes);
    if (need > 0.9 * cap) {
      std::string why =
          fmt::format("needs {} of device memory, more than 90% of {}", format_bytes(need), format_bytes(cap));
      if (impl.scores_in_hbm)
        why += fmt::format(" (the b·h·s×s score matrix alone is {})",
                           format_bytes(static_cast<double>(ka::unfused_scores_bytes(p_.dtype, p_.shape))));
      return why;
    }
    return impl_->prepare(stream_);
  }

  ~AttnGpuCase() override { AttnGpuCase::teardown(); }

  void setup() override {
    if (!stream_) stream_ = gpu::create_stream(gpu_);
    const size_t n = p_.shape.elements(), bytes = n * dtype_size(p_.dtype);
    const auto upload = [&](DeviceBuffer& dst, std::vector<float>& exact, int heads, uint64_t seed) {
      const auto input = cached_input(p_.dtype, p_.shape, heads, seed);
      exact = input->exact;
      dst = DeviceBuffer(gpu_, bytes);
      gpu::copy_async(dst.data(), input->raw.data(), bytes, gpu::CopyKind::host_to_device, stream_);
      gpu::synchronize(stream_);
    };
    upload(t_.q, in_.q, p_.shape.heads, seed_);
    upload(t_.k, in_.k, p_.kv_heads, seed_ + 1);
    upload(t_.v, in_.v, p_.kv_heads, seed_ + 2);
    t_.o = DeviceBuffer(gpu_, bytes);
    impl_->allocate(t_);
    if (p_.pass == AttnPass::fwd) return;
    upload(t_.d_o, in_.d_o, p_.shape.heads, seed_ + 3);
    t_.dq = DeviceBuffer(gpu_, bytes);
    t_.dk = DeviceBuffer(gpu_, bytes);
    t_.dv = DeviceBuffer(gpu_, bytes);
    if (p_.pass == AttnPass::bwd) impl_->forward(t_, stream_);  // O and LSE for the timed backward
  }

  void launch() override {
    if (p_.pass != AttnPass::bwd) impl_->forward(t_, stream_);
    if (p_.pass != AttnPass::fwd) impl_->backward(t_, stream_);
  }

  std::string verify() override {
    // Poison every output this pass writes (0xFF bytes are NaN in fp16, bf16 and fp32), run once.
    const bool writes_forward = p_.pass != AttnPass::bwd;
    if (writes_forward) {
      gpu::memset_async(t_.o.data(), 0xFF, t_.o.size(), stream_);
      if (t_.lse.data()) gpu::memset_async(t_.lse.data(), 0xFF, t_.lse.size(), stream_);
    }
    for (auto* b : {&t_.dq, &t_.dk, &t_.dv})
      if (b->data()) gpu::memset_async(b->data(), 0xFF, b->size(), stream_);
    launch();
    gpu::synchronize(stream_);
    const size_t n = p_.shape.elements();
    AttnHostOutputs out;
    // A backward pass's dK/dV check needs the O and LSE it consumed (from setup's forward for bwd).
    if (writes_forward || p_.pass != AttnPass::fwd) {
      out.o = download(p_.dtype, t_.o, n, stream_);
      if (t_.lse.data()) out.lse = download(DType::f32, t_.lse, p_.shape.rows(), stream_);
    }
    if (p_.pass != AttnPass::fwd) {
      out.dq = download(p_.dtype, t_.dq, n, stream_);
      out.dk = download(p_.dtype, t_.dk, n, stream_);
      out.dv = download(p_.dtype, t_.dv, n, stream_);
    }
    // The unfused path rounds S to 16 bits before the softmax: one more rounding (the table's factor).
    const AttnVerdict v =
        verify_attention(p_.shape, p_.dtype, in_, out, check_rows_, attn_impl_info(p_.impl).tolerance_factor);
    errors_ = v.errors;
    return v.failure;
  }

  std::vector<Metric> metrics(const Statistics& s) const override {
    const auto spec = find_gpu_spec(info(gpu_).name);
    const auto peak = spec ? peak_tflops(*spec, p_.dtype) : std::nullopt;
    auto m = attn_metrics(p_, s, peak, spec ? "spec:" + spec->sku + " dense" : "");
    impl_->add_metrics(m);
    return m;
  }
  nlohmann::json model() const override { return attn_model(p_); }
  nlohmann::json extra() override {
    nlohmann::json x = {
        {"errors", errors_},
        {"peak_memory_bytes", device_bytes()},
        {"peak_memory_counts", "buffers this case allocates (inputs, outputs, LSE, workspace, scores)"}};
    if (attn_impl_info(p_.impl).scores_in_hbm) x["score_matrix_bytes"] = ka::unfused_scores_bytes(p_.dtype, p_.shape);
    impl_->describe(x);
    return x;
  }
  void teardown() override {
    t_ = AttnTensors{};
    in_ = AttnHostInputs{};  // host copies of the inputs: hundreds of MB at the FA grid
    impl_->release();
    if (stream_) gpu::destroy_stream(stream_);
    stream_ = nullptr;
  }

 private:
  // Device memory the case holds: its peak footprint (kernels' own allocations: none).
  size_t device_bytes() const {
    const size_t t = p_.shape.elements() * dtype_size(p_.dtype);
    size_t b = 4 * t + impl_->own_bytes();
    if (p_.pass != AttnPass::fwd && attn_impl_info(p_.impl).backward) b += 4 * t;  // dO, dQ, dK, dV
    return b;
  }

  AttnProblem p_;
  int gpu_, check_rows_;
  uint64_t seed_;
  mutable gpu::Stream stream_ = nullptr;
  std::unique_ptr<AttnGpuStrategy> impl_;  // what this implementation does; cuDNN's plans built in waived_reason()
  AttnTensors t_;
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
