// Shapes of `gcbench gemm`: list and range parsing, the presets (square, llm, small-m) and the
// llm preset's models (taken from models/model/config.hpp).
#include <algorithm>
#include <fmt/format.h>

#include "bench/gemm/gemm.hpp"
#include "core/ceil_div.hpp"
#include "core/error.hpp"
#include "core/size.hpp"
#include "core/suggest.hpp"
#include "models/model/config.hpp"

namespace gcb::bench {

namespace {

std::vector<std::string> split(const std::string& text, char sep) {
  std::vector<std::string> out;
  size_t start = 0;
  for (size_t pos; (pos = text.find(sep, start)) != std::string::npos; start = pos + 1)
    out.push_back(text.substr(start, pos - start));
  out.push_back(text.substr(start));
  return out;
}

int64_t parse_dim(const std::string& text) {
  const uint64_t v = parse_size(text);
  if (v == 0 || v > (uint64_t{1} << 31)) throw UsageError(fmt::format("GEMM dimension '{}' must be in 1 … 2^31", text));
  return static_cast<int64_t>(v);
}

void add_unique(std::vector<NamedShape>& out, NamedShape s) {
  if (std::find(out.begin(), out.end(), s) == out.end()) out.push_back(std::move(s));
}

}  // namespace

const std::vector<LlmModel>& llm_models() {
  static const std::vector<LlmModel> models = [] {
    std::vector<LlmModel> out;
    // Every GPT configuration of models/model/config.hpp: QKV 3h, MLP 4h, and the vocabulary padded up
    // to a multiple of 128 as llm.c pads it for its GEMMs (padded_vocab_size, karpathy/llm.c
    // train_gpt2.c): GPT-2's 50257 becomes 50304.
    for (const std::string& name : models::config_names()) {
      const models::GptConfig c = models::named_config(name);
      const int64_t h = c.hidden;
      out.push_back({name, h, 3 * h, 4 * h, ceil_div<int64_t>(c.vocab, 128) * 128});
    }
    // A grouped-query, SwiGLU model, which models/model/config.hpp cannot describe: Llama-2-70B's
    // config.json (meta-llama/Llama-2-70b-hf): h 8192, 64 q-heads / 8 kv-heads of 128 → QKV
    // 8192 + 2·1024, SwiGLU inner 28672 (up and gate are two GEMMs of this shape), vocab 32000.
    out.push_back({"llama-70b", 8192, 8192 + 2 * 1024, 28672, 32000});
    return out;
  }();
  return models;
}

const LlmModel& find_llm_model(const std::string& name) {
  const std::string canonical = models::canonical_config_name(name);
  std::vector<std::string> known;
  for (const auto& m : llm_models()) {
    if (m.name == canonical) return m;
    known.push_back(m.name);
  }
  std::vector<std::string> typeable = known;
  for (const std::string& alias : models::config_aliases()) typeable.push_back(alias);
  throw UsageError(fmt::format("unknown --model '{}'{} (known: {}; {} are gpt2-124m … gpt2-1558m)", name,
                               did_you_mean(name, typeable), fmt::join(known, ", "),
                               fmt::join(models::config_aliases(), ", ")));
}

std::vector<int64_t> parse_dim_list(const std::vector<std::string>& entries) {
  std::vector<int64_t> out;
  for (const auto& e : entries) {
    const auto parts = split(e, ':');
    if (parts.size() == 1) {
      out.push_back(parse_dim(parts[0]));
      continue;
    }
    if (parts.size() != 3 || parts[2].empty())
      throw UsageError(fmt::format("range '{}' is not min:max:xFACTOR or min:max:+STEP", e));
    const int64_t lo = parse_dim(parts[0]), hi = parse_dim(parts[1]);
    if (lo > hi) throw UsageError(fmt::format("range '{}' has min > max", e));
    const bool geometric = parts[2][0] == 'x' || parts[2][0] == '*';
    const std::string step_text =
        parts[2][0] == 'x' || parts[2][0] == '*' || parts[2][0] == '+' ? parts[2].substr(1) : parts[2];
    if (step_text.empty()) throw UsageError(fmt::format("range '{}' has no step", e));
    const int64_t step = parse_dim(step_text);
    if (geometric && step < 2) throw UsageError(fmt::format("range '{}' needs a factor ≥ 2", e));
    for (int64_t v = lo; v <= hi; v = geometric ? v * step : v + step) out.push_back(v);
  }
  return out;
}

std::vector<NamedShape> gemm_shapes(const GemmOptions& o) {
  std::vector<NamedShape> base;
  const auto dims_or = [](const std::vector<std::string>& v, std::vector<std::string> fallback) {
    return parse_dim_list(v.empty() ? fallback : v);
  };
  std::string preset = o.preset;
  if (preset.empty() && o.m.empty() && o.n.empty() && o.k.empty()) preset = "square";
  if (preset.empty()) {
    if (o.m.empty() || o.n.empty() || o.k.empty())
      throw UsageError("give all of --m, --n and --k, or a --preset (square, llm, small-m)");
    for (int64_t m : parse_dim_list(o.m))
      for (int64_t n : parse_dim_list(o.n))
        for (int64_t k : parse_dim_list(o.k)) add_unique(base, {"custom", {m, n, k}});
    return base;
  }
  if (preset == "square") {
    for (int64_t s : dims_or(o.sizes, {"1024:16384:x2"})) base.push_back({"square", {s, s, s}});
  } else if (preset == "small-m") {
    for (int64_t m : dims_or(o.sizes, {"1:16384:x2"})) base.push_back({"small_m", {m, 8192, 8192}});
  } else if (preset == "llm") {
    const LlmModel& mdl = find_llm_model(o.model);
    if (o.batch <= 0 || o.seq <= 0) throw UsageError("--batch and --seq must be positive");
    const int64_t tokens = o.batch * o.seq;
    // The forward GEMMs of one transformer layer plus the LM head, D[tokens, out] = X·Wᵀ.
    base = {{"qkv", {tokens, mdl.qkv_out, mdl.hidden}},
            {"attn_out", {tokens, mdl.hidden, mdl.hidden}},
            {"mlp_up", {tokens, mdl.ffn, mdl.hidden}},
            {"mlp_down", {tokens, mdl.hidden, mdl.ffn}},
            {"lm_head", {tokens, mdl.vocab, mdl.hidden}}};
  } else {
    throw UsageError(fmt::format("unknown --preset '{}' (expected square, llm, small-m)", preset));
  }
  // --m/--n/--k beside a preset replace that dimension of every preset shape.
  std::vector<NamedShape> out;
  for (const auto& b : base) {
    const auto ms = o.m.empty() ? std::vector<int64_t>{b.shape.m} : parse_dim_list(o.m);
    const auto ns = o.n.empty() ? std::vector<int64_t>{b.shape.n} : parse_dim_list(o.n);
    const auto ks = o.k.empty() ? std::vector<int64_t>{b.shape.k} : parse_dim_list(o.k);
    for (int64_t m : ms)
      for (int64_t n : ns)
        for (int64_t k : ks) add_unique(out, {b.name, {m, n, k}});
  }
  return out;
}

std::vector<DType> gemm_default_dtypes(bool gpu) {
  if (!gpu) return {DType::f32, DType::f64};
  return {DType::f32, DType::tf32, DType::f16, DType::bf16, DType::fp8_e4m3, DType::i8};
}

std::vector<DType> gemm_dtypes_for(const GemmOptions& o, bool gpu) {
  if (o.dtypes.empty()) return gemm_default_dtypes(gpu);
  std::vector<DType> out;
  for (const DType t : o.dtypes) {
    const bool on_gpu = t != DType::f64 && t != DType::i32;
    const bool on_cpu = t == DType::f32 || t == DType::f64;
    if ((gpu ? on_gpu : on_cpu) && std::find(out.begin(), out.end(), t) == out.end()) out.push_back(t);
  }
  return out;
}

}  // namespace gcb::bench
