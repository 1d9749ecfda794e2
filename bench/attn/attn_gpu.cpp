// GPU cases of `gcbench attn` (built with CUDA): every row of the attention registry
// (kernels/attention/attention_registry.hpp: our FlashAttention-2-style kernels, the unfused
// cuBLAS baseline, cuDNN SDPA, ...) for the passes it has; plans built before timing, their build
// time reported as its own metric. Each case allocates its tensors once, verifies a fresh run on poisoned outputs
// against the FP64 reference, and reports the memory it holds. Compiles here; runs only on a GPU (unvalidated).
#include <fmt/format.h>

#include <algorithm>
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
#include "kernels/attention/attention_registry.hpp"
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

// The device tensors of one case: q, k, v, o (and the backward's d_o, dq, dk, dv), and what the
// implementation needs besides (lse when it writes one, its workspace: for the unfused baseline
// the score matrix).
struct AttnDeviceTensors {
  DeviceBuffer q, k, v, o, lse, d_o, dq, dk, dv, workspace;
  ka::AttnTensors views() {
    return {q.data(),   k.data(),  v.data(),  o.data(),  lse.as<float>(),
            d_o.data(), dq.data(), dk.data(), dv.data(), workspace.data()};
  }
};

class AttnGpuCase final : public Case {
 public:
  AttnGpuCase(AttnProblem p, int g, int check_rows, uint64_t seed)
      : p_(p), gpu_(g), check_rows_(check_rows), seed_(seed), row_(attn_impl_info(p.impl)) {
    if (row_.make) impl_ = row_.make(p_.dtype, p_.shape, p_.pass != AttnPass::fwd, gpu_);
  }
  std::string key() const override { return attn_key(p_); }
  nlohmann::json params() const override { return attn_params(p_, fmt::format("gpu:{}", gpu_)); }
  int gpu() const override { return gpu_; }
  gpu::Stream stream() const override { return stream_; }

  std::string waived_reason() const override {
    if (gpu_ >= gpu::device_count()) return "no GPU: " + gpu::runtime().unavailable_reason;
    const AttnImplInfo& impl = row_;
    if (!impl_) return std::string(impl.missing);
    if (!impl.backward && p_.pass != AttnPass::fwd) return fmt::format("{} is forward-only", impl.label);
    if (std::string why = impl_->unsupported(); !why.empty()) return why;
    const double need = static_cast<double>(device_bytes()), cap = static_cast<double>(info(gpu_).memory_bytes);
    if (need > 0.9 * cap) {
      std::string why =
          fmt::format("needs {} of device memory, more than 90% of {}", format_bytes(need), format_bytes(cap));
      if (impl.scores_in_hbm)
        why += fmt::format(" (the b·h·s×s score matrix alone is {})",
                           format_bytes(static_cast<double>(ka::unfused_scores_bytes(p_.dtype, p_.shape))));
      return why;
    }
    // Work kept out of the timed launches (cuDNN: building its plans, timed by the host apart).
    if (!stream_) stream_ = gpu::create_stream(gpu_);
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
    if (impl_->writes_lse()) t_.lse = DeviceBuffer(gpu_, p_.shape.rows() * sizeof(float));
    if (const size_t ws = workspace_bytes(); ws > 0) t_.workspace = DeviceBuffer(gpu_, ws);
    if (p_.pass == AttnPass::fwd) return;
    upload(t_.d_o, in_.d_o, p_.shape.heads, seed_ + 3);
    t_.dq = DeviceBuffer(gpu_, bytes);
    t_.dk = DeviceBuffer(gpu_, bytes);
    t_.dv = DeviceBuffer(gpu_, bytes);
    if (p_.pass == AttnPass::bwd) impl_->forward(t_.views(), stream_);  // O and LSE for the timed backward
  }

  void launch() override {
    const ka::AttnTensors x = t_.views();
    if (p_.pass != AttnPass::bwd) impl_->forward(x, stream_);
    if (p_.pass != AttnPass::fwd) impl_->backward(x, stream_);
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
    // Plan building (cuDNN: graph, heuristics, finalize) happens once before timing; reported apart.
    if (const std::optional<double> plans = impl_->plan_seconds())
      m.push_back(Metric{"plan_build", *plans * 1e3, "ms", false, std::nullopt, ""});
    return m;
  }
  nlohmann::json model() const override { return attn_model(p_); }
  nlohmann::json extra() override {
    nlohmann::json x = {
        {"errors", errors_},
        {"peak_memory_bytes", device_bytes()},
        {"peak_memory_counts", "buffers this case allocates (inputs, outputs, LSE, workspace, scores)"}};
    if (attn_impl_info(p_.impl).scores_in_hbm) x["score_matrix_bytes"] = ka::unfused_scores_bytes(p_.dtype, p_.shape);
    x.update(impl_->describe());
    return x;
  }
  void teardown() override {
    t_ = AttnDeviceTensors{};
    in_ = AttnHostInputs{};  // host copies of the inputs: hundreds of MB at the FA grid
    impl_.reset();           // cuDNN's plans, cuBLAS's handle
    if (stream_) gpu::destroy_stream(stream_);
    stream_ = nullptr;
  }

 private:
  // Device memory the case holds: its peak footprint (kernels' own allocations: none).
  size_t device_bytes() const {
    const size_t t = p_.shape.elements() * dtype_size(p_.dtype);
    size_t b = 4 * t + workspace_bytes() + (impl_->writes_lse() ? p_.shape.rows() * sizeof(float) : 0);
    if (p_.pass != AttnPass::fwd && attn_impl_info(p_.impl).backward) b += 4 * t;  // dO, dQ, dK, dV
    return b;
  }

  // One workspace for the pass's launches (the forward's and the backward's run in sequence on one
  // stream); known after prepare().
  size_t workspace_bytes() const {
    const size_t f = impl_->workspace_bytes(false);
    return p_.pass == AttnPass::fwd ? f : std::max(f, impl_->workspace_bytes(true));
  }

  AttnProblem p_;
  int gpu_, check_rows_;
  uint64_t seed_;
  const AttnImplInfo& row_;
  mutable gpu::Stream stream_ = nullptr;
  // The row's kernels for this problem (null when this binary lacks them); cuDNN's plans are built
  // in waived_reason().
  std::unique_ptr<ka::AttnKernel> impl_;
  AttnDeviceTensors t_;
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
