// Hugging Face GPT-2 weights (hf_gpt2.hpp): hf_gpt2_config reads config.json; load_hf_gpt2 and save_hf_gpt2 map
// GPT2LMHeadModel's safetensors names onto the canonical layout (transformers modeling_gpt2.py).
#include "models/io/hf_gpt2.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "core/input_file.hpp"
#include "models/model/param_layout.hpp"
#include "models/io/safetensors.hpp"
#include "reports/writer.hpp"

namespace gcb::models {

namespace fs = std::filesystem;

std::string config_json_path(const std::string& path) {
  return (fs::path(path).parent_path() / "config.json").string();
}

namespace {

// "transformer." for GPT2LMHeadModel files, "" for the bare GPT2Model.
std::string name_prefix(const std::string& path, const SafetensorsFile& f) {
  if (f.find("transformer.wte.weight") != nullptr) return "transformer.";
  if (f.find("wte.weight") != nullptr) return "";
  throw UsageError(fmt::format("{}: no transformer.wte.weight: not a GPT-2 checkpoint", path));
}

const SafeTensor& need(const std::string& path, const SafetensorsFile& f, const std::string& name,
                       const std::vector<int64_t>& shape) {
  const SafeTensor* t = f.find(name);
  if (t == nullptr) throw UsageError(fmt::format("{}: no tensor {}", path, name));
  if (t->shape != shape) {
    throw UsageError(fmt::format("{}: {} has shape [{}], expected [{}]", path, name, fmt::join(t->shape, ", "),
                                 fmt::join(shape, ", ")));
  }
  return *t;
}

// One tensor's place in both layouts: the HF name (after the prefix), its HF shape, where it
// goes in the canonical vector, and whether it is a Conv1D weight stored [in, out].
struct Mapping {
  std::string name;
  std::vector<int64_t> shape;
  size_t offset;
  bool conv1d;
};

std::vector<Mapping> mappings(const GptConfig& c) {
  const ParamLayout pl(c);
  const EmbedUnit& e = pl.embed();
  const LayerUnit& u = pl.layer();
  const int64_t C = c.hidden, V = c.vocab, T = c.seq;
  std::vector<Mapping> m = {{"wte.weight", {V, C}, e.wte, false}, {"wpe.weight", {T, C}, e.wpe, false}};
  for (int l = 0; l < c.layers; ++l) {
    const size_t at = pl.unit_offset(1 + l);
    const std::string h = fmt::format("h.{}.", l);
    m.push_back({h + "ln_1.weight", {C}, at + u.ln1w, false});
    m.push_back({h + "ln_1.bias", {C}, at + u.ln1b, false});
    m.push_back({h + "attn.c_attn.weight", {C, 3 * C}, at + u.qkvw, true});
    m.push_back({h + "attn.c_attn.bias", {3 * C}, at + u.qkvb, false});
    m.push_back({h + "attn.c_proj.weight", {C, C}, at + u.projw, true});
    m.push_back({h + "attn.c_proj.bias", {C}, at + u.projb, false});
    m.push_back({h + "ln_2.weight", {C}, at + u.ln2w, false});
    m.push_back({h + "ln_2.bias", {C}, at + u.ln2b, false});
    m.push_back({h + "mlp.c_fc.weight", {C, 4 * C}, at + u.fcw, true});
    m.push_back({h + "mlp.c_fc.bias", {4 * C}, at + u.fcb, false});
    m.push_back({h + "mlp.c_proj.weight", {4 * C, C}, at + u.fcprojw, true});
    m.push_back({h + "mlp.c_proj.bias", {C}, at + u.fcprojb, false});
  }
  m.push_back({"ln_f.weight", {C}, e.lnfw, false});
  m.push_back({"ln_f.bias", {C}, e.lnfb, false});
  return m;
}

// Buffers older transformers versions saved beside the weights (the causal mask): not weights.
bool is_buffer(const std::string& name) { return name.ends_with(".attn.bias") || name.ends_with(".attn.masked_bias"); }

}  // namespace

GptConfig hf_gpt2_config(const std::string& path, int heads) {
  const SafetensorsFile f = read_safetensors(path);
  const std::string p = name_prefix(path, f);
  const SafeTensor& wte = *f.find(p + "wte.weight");
  const SafeTensor* wpe = f.find(p + "wpe.weight");
  if (wte.shape.size() != 2) throw UsageError(fmt::format("{}: {}wte.weight is not a matrix", path, p));
  if (wpe == nullptr || wpe->shape.size() != 2) throw UsageError(fmt::format("{}: no matrix {}wpe.weight", path, p));
  GptConfig c;
  c.name = fs::path(path).filename().string();
  c.vocab = static_cast<int>(wte.shape[0]);
  c.hidden = static_cast<int>(wte.shape[1]);
  c.seq = static_cast<int>(wpe->shape[0]);
  while (f.find(fmt::format("{}h.{}.ln_1.weight", p, c.layers)) != nullptr) ++c.layers;
  nlohmann::json cfg = nlohmann::json::object();
  const std::string cfg_path = config_json_path(path);
  if (std::error_code ec; fs::exists(cfg_path, ec)) {
    try {
      cfg = parse_json_input(read_input_file(cfg_path, "model config file"), cfg_path);
      if (!cfg.is_object()) throw UsageError(fmt::format("{}: not a JSON object", cfg_path));
    } catch (const nlohmann::json::exception& e) {
      throw UsageError(fmt::format("{}: not JSON ({})", cfg_path, e.what()));
    }
  }
  // The file decides the shapes; a config.json beside it must agree.
  for (const auto& [key, value] : {std::pair{"n_layer", c.layers}, std::pair{"n_embd", c.hidden},
                                   std::pair{"vocab_size", c.vocab}, std::pair{"n_positions", c.seq}}) {
    if (cfg.contains(key) && cfg[key] != value) {
      throw UsageError(fmt::format("{}: {} = {} but the weights give {}", cfg_path, key, cfg[key].dump(), value));
    }
  }
  // Our math is GPT-2's: tanh GELU ("gelu_new"), LayerNorm eps 1e-5, scores scaled by 1/√d.
  if (cfg.contains("activation_function")) {
    const std::string act = cfg["activation_function"].get<std::string>();
    if (act != "gelu_new" && act != "gelu_pytorch_tanh") {
      throw UsageError(
          fmt::format("{}: activation_function {} (this model computes GPT-2's tanh GELU, gelu_new)", cfg_path, act));
    }
  }
  if (cfg.contains("n_inner") && !cfg["n_inner"].is_null() && cfg["n_inner"] != 4 * c.hidden) {
    throw UsageError(fmt::format("{}: n_inner {} (this model's MLP is 4 × n_embd)", cfg_path, cfg["n_inner"].dump()));
  }
  if (cfg.value("scale_attn_by_inverse_layer_idx", false) || !cfg.value("scale_attn_weights", true)) {
    throw UsageError(fmt::format("{}: attention scores scaled otherwise than by 1/√head_dim", cfg_path));
  }
  if (cfg.contains("layer_norm_epsilon") && cfg["layer_norm_epsilon"].get<double>() != 1e-5) {
    throw UsageError(
        fmt::format("{}: layer_norm_epsilon {} (this model uses 1e-5)", cfg_path, cfg["layer_norm_epsilon"].dump()));
  }
  if (heads > 0) {
    c.heads = heads;
  } else if (cfg.contains("n_head")) {
    c.heads = cfg["n_head"].get<int>();
  } else {
    throw UsageError(fmt::format("{}: no config.json beside it gives n_head; pass --heads", path));
  }
  validate(c);
  return c;
}

std::vector<float> load_hf_gpt2(const std::string& path, const GptConfig& c) {
  const SafetensorsFile f = read_safetensors(path);
  const std::string p = name_prefix(path, f);
  std::vector<float> out(ParamLayout(c).total());
  const std::vector<Mapping> all = mappings(c);
  for (const Mapping& m : all) {
    const std::vector<float> v = tensor_floats(need(path, f, p + m.name, m.shape));
    if (!m.conv1d) {
      std::copy(v.begin(), v.end(), out.begin() + static_cast<std::ptrdiff_t>(m.offset));
      continue;
    }
    const auto in = static_cast<size_t>(m.shape[0]), outs = static_cast<size_t>(m.shape[1]);
    for (size_t i = 0; i < in; ++i)
      for (size_t o = 0; o < outs; ++o) out[m.offset + o * in + i] = v[i * outs + o];
  }
  for (const SafeTensor& t : f.tensors) {
    if (t.name == "lm_head.weight") {
      if (tensor_floats(t) != tensor_floats(*f.find(p + "wte.weight"))) {
        throw UsageError(
            fmt::format("{}: lm_head.weight differs from wte: an untied LM head (this model ties them)", path));
      }
    } else if (!is_buffer(t.name) &&
               std::none_of(all.begin(), all.end(), [&](const Mapping& m) { return t.name == p + m.name; })) {
      throw UsageError(fmt::format("{}: unexpected tensor {} (not in GPT-2)", path, t.name));
    }
  }
  return out;
}

void save_hf_gpt2(const std::string& path, const GptConfig& c, const std::vector<float>& canonical) {
  GCB_CHECK(canonical.size() == ParamLayout(c).total(), "save_hf_gpt2: parameter vector does not match the model");
  std::vector<SafeTensor> tensors;
  for (const Mapping& m : mappings(c)) {
    std::vector<float> v(static_cast<size_t>(m.shape[0]) * (m.shape.size() > 1 ? static_cast<size_t>(m.shape[1]) : 1));
    if (!m.conv1d) {
      std::copy_n(canonical.begin() + static_cast<std::ptrdiff_t>(m.offset), v.size(), v.begin());
    } else {
      const auto in = static_cast<size_t>(m.shape[0]), outs = static_cast<size_t>(m.shape[1]);
      for (size_t i = 0; i < in; ++i)
        for (size_t o = 0; o < outs; ++o) v[i * outs + o] = canonical[m.offset + o * in + i];
    }
    tensors.push_back(f32_tensor("transformer." + m.name, m.shape, v.data()));
  }
  // transformers refuses safetensors files whose metadata lacks the framework ("format": "pt").
  write_safetensors(path, tensors, {{"format", "pt"}});
  const nlohmann::json cfg = {{"architectures", {"GPT2LMHeadModel"}},
                              {"model_type", "gpt2"},
                              {"n_layer", c.layers},
                              {"n_embd", c.hidden},
                              {"n_head", c.heads},
                              {"vocab_size", c.vocab},
                              {"n_positions", c.seq},
                              {"n_ctx", c.seq},
                              {"activation_function", "gelu_new"},
                              {"layer_norm_epsilon", 1e-5},
                              {"tie_word_embeddings", true},
                              {"embd_pdrop", 0.0},
                              {"resid_pdrop", 0.0},
                              {"attn_pdrop", 0.0}};
  write_output(config_json_path(path), cfg.dump(2) + "\n");
}

}  // namespace gcb::models
