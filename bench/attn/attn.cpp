// `gcbench attn`: options, presets, the grid, FLOP/byte models and metrics, the CPU path (the
// FP32 tiled reference) and the subcommand's registration. GPU cases live in attn_gpu.cpp, the
// torch peer in attn_peer.cpp, the accuracy check in attn_verify.cpp.
#include "bench/attn/attn.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "bench/attn/attn_internal.hpp"
#include "bench/attn/attn_verify.hpp"
#include "bench/common/waived_case.hpp"
#include "core/error.hpp"
#include "core/gpu.hpp"
#include "kernels/attention/attention_ref.hpp"
#include "kernels/attention/flash_attn.hpp"

namespace gcb::bench {

namespace {

using kernels::attn::AttnShape;

// The CPU path runs the FP32 tiled reference: single-threaded and O(s²·d), so it is limited to
// small problems (about a second per launch on one core at ~2 GFLOP/s).
constexpr double kCpuFlopLimit = 2e9;

// What to run instead of a shape too large for the CPU reference: a GPU when this host has one,
// else the same sequence with fewer heads (FLOPs are linear in batch · heads), or, when one head
// is already too much, a shorter sequence (quadratic in it) at a multiple of 64.
std::string cpu_sized_hint(const AttnShape& a, double flops) {
  const double per_head = flops / (static_cast<double>(a.batch) * static_cast<double>(a.heads));
  std::string smaller;
  if (per_head <= kCpuFlopLimit) {
    const int heads = static_cast<int>(std::min<double>(a.heads, std::floor(kCpuFlopLimit / per_head)));
    smaller = fmt::format("--batch 1 --heads {}", std::max(heads, 1));
  } else {
    const double scale = std::sqrt(kCpuFlopLimit / per_head);
    const int seq = std::max(64, static_cast<int>(std::floor(a.seq * scale / 64)) * 64);
    smaller = fmt::format("--batch 1 --heads 1 --seq {}", seq);
  }
  if (gpu::device_count() > 0) return fmt::format("use --device gpu, or a smaller shape ({})", smaller);
  return fmt::format("this host has no GPU: a smaller shape fits, e.g. {}", smaller);
}

class CpuTiledCase final : public Case {
 public:
  CpuTiledCase(AttnProblem p, int check_rows, uint64_t seed) : p_(p), check_rows_(check_rows), seed_(seed) {}
  std::string key() const override { return attn_key(p_); }
  nlohmann::json params() const override { return attn_params(p_, "cpu"); }
  std::string waived_reason() const override {
    const double f = attn_flops(p_, false);
    if (f > kCpuFlopLimit)
      return fmt::format("CPU tiled reference limited to {:.0g} FLOP per launch (this case: {:.3g}); {}", kCpuFlopLimit,
                         f, cpu_sized_hint(p_.shape, f));
    return {};
  }
  void setup() override {
    const size_t n = p_.shape.elements();
    in_.q = kernels::attn::random_normal(n, seed_);
    in_.k = kernels::attn::random_normal(n, seed_ + 1);
    in_.v = kernels::attn::random_normal(n, seed_ + 2);
    in_.d_o = kernels::attn::random_normal(n, seed_ + 3);
    out_.o.assign(n, 0.0f);
    out_.lse.assign(p_.shape.rows(), 0.0f);
    if (p_.pass != AttnPass::fwd) {
      out_.dq.assign(n, 0.0f);
      out_.dk.assign(n, 0.0f);
      out_.dv.assign(n, 0.0f);
    }
    if (p_.pass == AttnPass::bwd) forward();  // the backward pass consumes O and LSE
  }
  void launch() override {
    if (p_.pass != AttnPass::bwd) forward();
    if (p_.pass != AttnPass::fwd)
      kernels::attn::tiled_backward(p_.shape, kernels::attn::backward_tiles(p_.shape.head_dim), in_.q.data(),
                                    in_.k.data(), in_.v.data(), out_.o.data(), in_.d_o.data(), out_.lse.data(),
                                    out_.dq.data(), out_.dk.data(), out_.dv.data());
  }
  std::string verify() override {
    for (auto* x : {&out_.o, &out_.lse, &out_.dq, &out_.dk, &out_.dv}) std::fill(x->begin(), x->end(), NAN);  // poison
    if (p_.pass == AttnPass::bwd) forward();
    launch();
    // A bwd pass also hands over the O and LSE it consumed (from the forward above).
    const AttnVerdict v = verify_attention(p_.shape, DType::f32, in_, out_, check_rows_);
    errors_ = v.errors;
    return v.failure;
  }
  std::vector<Metric> metrics(const Statistics& s) const override { return attn_metrics(p_, s, std::nullopt, ""); }
  nlohmann::json model() const override { return attn_model(p_); }
  nlohmann::json extra() override {
    const auto f = kernels::attn::forward_tiles(p_.shape.head_dim);
    const auto b = kernels::attn::backward_tiles(p_.shape.head_dim);
    return {{"errors", errors_},
            {"tiles", fmt::format("fwd {}x{}, bwd {}x{} (the GPU kernels')", f.rows, f.cols, b.rows, b.cols)}};
  }

 private:
  void forward() {
    kernels::attn::tiled_forward(p_.shape, kernels::attn::forward_tiles(p_.shape.head_dim), in_.q.data(), in_.k.data(),
                                 in_.v.data(), out_.o.data(), out_.lse.data());
  }
  AttnProblem p_;
  int check_rows_;
  uint64_t seed_;
  AttnHostInputs in_;
  AttnHostOutputs out_;
  nlohmann::json errors_ = nlohmann::json::object();
};

// The first registry row that keeps no score matrix in HBM: the CPU path's byte model.
AttnImpl fused_impl() {
  for (const AttnImpl i : kernels::attn::attention_impl_ids())
    if (!attn_impl_info(i).scores_in_hbm) return i;
  GCB_CHECK(false, "the attention registry has no fused implementation");
  return AttnImpl{};
}

// The registry row of `name`, which the quick suite picks by name.
AttnImpl impl_named(std::string_view name) {
  const std::optional<AttnImpl> i = kernels::attn::find_attention_impl(name);
  GCB_CHECK(i.has_value(), fmt::format("no attention implementation '{}' in the registry", name));
  return *i;
}

}  // namespace

const std::vector<DType>& attn_dtypes() {
  static const std::vector<DType> types = {DType::f16, DType::bf16};
  return types;
}

const AttnImplInfo& attn_impl_info(AttnImpl i) { return kernels::attn::attention_impl(i); }

std::vector<std::pair<std::string, AttnPass>> attn_pass_names() {
  return {{"fwd", AttnPass::fwd}, {"bwd", AttnPass::bwd}, {"fwdbwd", AttnPass::fwdbwd}};
}

std::vector<std::pair<std::string, AttnImpl>> attn_impl_names() {
  std::vector<std::pair<std::string, AttnImpl>> names;
  for (const AttnImpl i : kernels::attn::attention_impl_ids()) names.emplace_back(attn_impl_name(i), i);
  return names;
}

std::string attn_pass_name(AttnPass p) {
  for (const auto& [name, pass] : attn_pass_names())
    if (pass == p) return name;
  return "?";
}
std::string attn_impl_name(AttnImpl i) { return std::string(attn_impl_info(i).name); }

void validate(const AttnOptions& o) {
  const auto positive = [](const std::vector<int>& v, const char* flag) {
    if (v.empty()) throw UsageError(fmt::format("{} needs at least one value", flag));
    for (int x : v)
      if (x <= 0) throw UsageError(fmt::format("{} {} must be positive", flag, x));
  };
  if (o.preset != "fa") {  // the fa grid derives batch and heads from each s and d (attn_problems)
    positive(o.batch, "--batch");
    positive(o.heads, "--heads");
  }
  positive(o.seq, "--seq");
  positive(o.head_dim, "--head-dim");
  for (int d : o.head_dim)
    if (d % 8 != 0) throw UsageError(fmt::format("--head-dim {} must be a multiple of 8 (16-byte rows)", d));
  if (o.kv_heads < 0) throw UsageError("--kv-heads must be ≥ 0");
  if (o.kv_heads > 0)
    for (int h : o.heads)
      if (h % o.kv_heads != 0)
        throw UsageError(fmt::format("--heads {} is not a multiple of --kv-heads {}", h, o.kv_heads));
  if (o.causal != "on" && o.causal != "off" && o.causal != "both")
    throw UsageError(fmt::format("--causal '{}' (expected on, off, both)", o.causal));
  for (DType t : o.dtypes)
    if (std::find(attn_dtypes().begin(), attn_dtypes().end(), t) == attn_dtypes().end())
      throw UsageError(
          fmt::format("unsupported --dtype '{}' for attn (expected {})", dtype_name(t), dtype_list(attn_dtypes())));
  if (o.passes.empty()) throw UsageError("--pass needs at least one value");
  if (o.impls.empty()) throw UsageError("--impl needs at least one value");
  if (!o.preset.empty() && o.preset != "fa" && o.preset != "llama")
    throw UsageError(fmt::format("unknown --preset '{}' (expected fa, llama)", o.preset));
  if (o.check_rows < 1) throw UsageError("--check-rows must be ≥ 1");
}

AttnOptions apply_preset(AttnOptions o, bool pass_given) {
  if (o.preset == "fa") {
    // FA2 README grid (Dao-AILab/flash-attention README): 16k tokens, hidden 2048 → heads = 2048/d, batch = 16384/s.
    o.batch.clear();
    o.heads.clear();
    o.seq = {512, 1024, 2048, 4096, 8192, 16384};
    o.head_dim = {64, 128};
    o.kv_heads = 0;
    if (!pass_given) o.passes = {AttnPass::fwd, AttnPass::bwd, AttnPass::fwdbwd};
  } else if (o.preset == "llama") {
    // cuDNN FE Llama-3.1 grid (NVIDIA/cudnn-frontend sdpa_benchmark_training): b = 1, 64 query / 8 KV heads, d = 128.
    o.batch = {1};
    o.heads = {64};
    o.kv_heads = 8;
    o.seq = {2048, 4096, 8192, 16384, 32768};
    o.head_dim = {128};
  }
  return o;
}

std::vector<AttnProblem> attn_problems(const AttnOptions& o) {
  std::vector<AttnShape> shapes;
  if (o.preset == "fa") {
    for (int d : o.head_dim)
      for (int s : o.seq) shapes.push_back(AttnShape{16384 / s, 2048 / d, s, d, false});
  } else {
    for (int b : o.batch)
      for (int h : o.heads)
        for (int s : o.seq)
          for (int d : o.head_dim) shapes.push_back(AttnShape{b, h, s, d, false});
  }
  std::vector<bool> causal;
  if (o.causal != "on") causal.push_back(false);
  if (o.causal != "off") causal.push_back(true);
  std::vector<AttnProblem> out;
  for (const auto& base : shapes)
    for (bool c : causal)
      for (const DType dt : o.dtypes)
        for (const AttnPass pass : o.passes)
          for (const AttnImpl impl : o.impls) {
            AttnProblem p;
            p.shape = base;
            p.shape.causal = c;
            p.kv_heads = o.kv_heads > 0 ? o.kv_heads : base.heads;
            p.dtype = dt;
            p.pass = pass;
            p.impl = impl;
            out.push_back(p);
          }
  return out;
}

nlohmann::json attn_params(const AttnProblem& p, const std::string& device) {
  const auto& a = p.shape;
  nlohmann::json j = {{"device", device},
                      {"impl", device == "cpu" ? "cpu_tiled" : attn_impl_name(p.impl)},
                      {"dtype", device == "cpu" ? "fp32" : std::string(dtype_name(p.dtype))},
                      {"pass", attn_pass_name(p.pass)},
                      {"batch", a.batch},
                      {"heads", a.heads},
                      {"seq", a.seq},
                      {"head_dim", a.head_dim},
                      {"causal", a.causal}};
  if (p.kv_heads != a.heads) {
    j["kv_heads"] = p.kv_heads;
    j["gqa"] = "K/V heads expanded to the query heads before the kernel";
  }
  return j;
}

std::string attn_key(const AttnProblem& p) { return "attn/" + attn_pass_name(p.pass); }

double attn_flops(const AttnProblem& p, bool exact) {
  namespace ka = kernels::attn;
  const double f = exact ? ka::exact_forward_flops(p.shape) : ka::fa_forward_flops(p.shape);
  const double b = exact ? ka::exact_backward_flops(p.shape) : ka::fa_backward_flops(p.shape);
  switch (p.pass) {
    case AttnPass::fwd: return f;
    case AttnPass::bwd: return b;
    case AttnPass::fwdbwd: return f + b;
  }
  return f;
}

double attn_hbm_bytes(const AttnProblem& p) {
  namespace ka = kernels::attn;
  const double e = static_cast<double>(dtype_size(p.dtype));
  if (attn_impl_info(p.impl).scores_in_hbm) return ka::unfused_forward_bytes(p.shape, e);
  const double f = ka::fused_forward_bytes(p.shape, e);
  const double b = ka::fused_backward_bytes(p.shape, e, ka::backward_tiles(p.shape.head_dim).cols);
  return p.pass == AttnPass::fwd ? f : p.pass == AttnPass::bwd ? b : f + b;
}

nlohmann::json attn_model(const AttnProblem& p) {
  namespace ka = kernels::attn;
  const double e = static_cast<double>(dtype_size(p.dtype));
  return {{"flops", attn_flops(p, false)},
          {"flops_convention",
           "FlashAttention: fwd 4*b*h*s^2*d, /2 causal, bwd 2.5x fwd "
           "(Dao-AILab/flash-attention benchmarks/benchmark_flash_attention.py)"},
          {"flops_exact", attn_flops(p, true)},
          {"bytes", attn_hbm_bytes(p)},
          {"bytes_fused_fwd", ka::fused_forward_bytes(p.shape, e)},
          {"bytes_unfused_fwd", ka::unfused_forward_bytes(p.shape, e)},
          {"score_matrix_bytes_unfused", ka::unfused_score_bytes(p.shape, e)}};
}

std::vector<Metric> attn_metrics(const AttnProblem& p, const Statistics& s, std::optional<double> peak,
                                 const std::string& peak_source) {
  if (s.median <= 0) return {};
  return {Metric{"tflops", attn_flops(p, false) / s.median / 1e12, "TFLOP/s", true, peak, peak_source},
          Metric{"tflops_exact", attn_flops(p, true) / s.median / 1e12, "TFLOP/s", true, peak, peak_source},
          Metric{"time", s.median * 1e3, "ms", false, std::nullopt, ""},
          Metric{"hbm_gbps_model", attn_hbm_bytes(p) / s.median / 1e9, "GB/s", true, std::nullopt, ""}};
}

CaseList cpu_attn_cases(const AttnOptions& o, uint64_t seed) {
  CaseList cases;
  std::map<std::string, bool> seen;  // the CPU path is FP32 and has one impl: one case per shape/pass
  for (const auto& p : attn_problems(o)) {
    AttnProblem cpu = p;
    cpu.dtype = DType::f32;
    cpu.impl = fused_impl();  // the tiled reference follows the fused IO model
    const std::string id = attn_params(cpu, "cpu").dump();
    if (seen[id]) continue;
    seen[id] = true;
    cases.push_back(std::make_unique<CpuTiledCase>(cpu, o.check_rows, seed));
  }
  return cases;
}

CaseList waived_gpu_attn_cases(const AttnOptions& o, const std::string& reason) {
  CaseList cases;
  for (const AttnPass pass : o.passes)
    for (const AttnImpl impl : o.impls)
      cases.push_back(std::make_unique<WaivedCase>(
          "attn/" + attn_pass_name(pass), nlohmann::json{{"device", "gpu"}, {"impl", attn_impl_name(impl)}}, reason));
  return cases;
}

void run_attn(const AttnOptions& o, const DeviceSelection& sel, uint64_t seed, Runner& runner) {
  validate(o);
  CaseList cases;
  if (sel.cpu) {
    AttnOptions cpu = o;
    if (!o.shape_given) {  // the GPU default is over the CPU reference's limit: a shape it runs in seconds
      cpu.batch = {kCpuDefaultBatch};
      cpu.heads = {kCpuDefaultHeads};
    }
    cases = cpu_attn_cases(cpu, seed);
  }
  for (auto& c : gpu_attn_cases(o, sel, seed)) cases.push_back(std::move(c));
  const size_t first = runner.results().size();
  runner.run_all(cases);
  if (o.peer_torch) {
    const std::vector<Result> mine(runner.results().begin() + static_cast<long>(first), runner.results().end());
    for (auto& r : attn_torch_peer_results(mine)) runner.add(std::move(r));
  }
}

AttnOptions quick_attn_options() {
  AttnOptions o;
  o.batch = {1};
  o.heads = {2};
  o.seq = {200};  // not a multiple of the 64-row tile
  o.head_dim = {64};
  o.passes = {AttnPass::fwd, AttnPass::bwd};
  o.impls = {impl_named("ours"), impl_named("unfused")};  // ours against the unfused baseline
  o.shape_given = true;
  return o;
}

void add_attn_command(CLI::App& root, std::function<int()>& run, const std::vector<std::string>& argv) {
  auto* app =
      root.add_subcommand("attn", "Fused attention: our FlashAttention-2-style kernels, unfused cuBLAS, cuDNN SDPA");
  auto common = std::make_shared<CommonOptions>();
  auto attn = std::make_shared<AttnOptions>();
  add_common_options(*app, *common);
  auto* batch =
      app->add_option("--batch", attn->batch, fmt::format("Batch sizes (the CPU path's default: {})", kCpuDefaultBatch))
          ->delimiter(',')
          ->capture_default_str();
  auto* heads =
      app->add_option("--heads", attn->heads, fmt::format("Query heads (the CPU path's default: {})", kCpuDefaultHeads))
          ->delimiter(',')
          ->capture_default_str();
  app->add_option("--kv-heads", attn->kv_heads, "K/V heads for GQA (0 = --heads; expanded before the kernel)");
  auto* seq = app->add_option("--seq", attn->seq, "Sequence lengths")->delimiter(',')->capture_default_str();
  auto* head_dim = app->add_option("--head-dim", attn->head_dim, "Head dims (our kernels: 64, 128)")
                       ->delimiter(',')
                       ->capture_default_str();
  app->add_option("--causal", attn->causal, "on, off or both")->capture_default_str();
  app->add_option("--dtype", attn->dtypes, "Element types of the GPU kernels (the CPU path is FP32)")
      ->delimiter(',')
      ->transform(dtype_names(attn_dtypes()))
      ->default_str("bf16");
  auto* pass = app->add_option("--pass", attn->passes, "Passes (default: fwd)")
                   ->delimiter(',')
                   ->transform(enum_names(attn_pass_names()));
  app->add_option("--impl", attn->impls, "Implementations (default: all)")
      ->delimiter(',')
      ->transform(enum_names(attn_impl_names()));
  app->add_option("--preset", attn->preset, "fa (16k tokens, hidden 2048) or llama (b=1, 64/8 heads, d=128, s 2k-32k)");
  app->add_option("--check-rows", attn->check_rows, "Rows checked against FP64 on large shapes")->capture_default_str();
  app->add_flag("--peer-torch", attn->peer_torch, "Time torch SDPA (flash backend) on the same shapes");
  run = [=, &argv] {
    AttnOptions o = apply_preset(*attn, pass->count() > 0);
    o.shape_given = !o.preset.empty() || batch->count() + heads->count() + seq->count() + head_dim->count() > 0;
    validate(o);
    const DeviceSelection sel = select_devices(common->device);
    Session session(*common, argv);
    run_attn(o, sel, common->seed, session.runner());
    return session.finish();
  };
}

}  // namespace gcb::bench
