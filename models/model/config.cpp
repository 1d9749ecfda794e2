// GPT configurations (GPT-2 model card sizes; GPT-3 paper, Brown et al. 2020, table 2.1) and
// their parameter counts.
#include "models/model/config.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "core/input_file.hpp"
#include "core/suggest.hpp"

namespace gcb::models {
namespace {

struct NamedConfig {
  const char* name;
  int layers, hidden, heads, vocab, seq;
};

// GPT-3 table 2.1 lists XL as 24 heads of 128 and 13B as d_model 5140 with 40 heads of 128;
// neither divides evenly, so XL uses 16 heads of 128 and 13B uses d_model 5120 (40 × 128), the
// shapes public reproductions use. All GPT-3 sizes use n_ctx 2048 and the GPT-2 vocabulary.
// `small` is a CPU-scale model between tiny and GPT-2: steps of a fraction of a second per core,
// big enough that GEMMs, attention and communication all show (the planner's CPU validation).
constexpr NamedConfig kConfigs[] = {
    {"tiny", 2, 32, 4, 64, 16},
    {"small", 4, 256, 8, 4096, 128},
    {"gpt2-124m", 12, 768, 12, 50257, 1024},
    {"gpt2-350m", 24, 1024, 16, 50257, 1024},
    {"gpt2-774m", 36, 1280, 20, 50257, 1024},
    {"gpt2-1558m", 48, 1600, 25, 50257, 1024},
    {"gpt3-small", 12, 768, 12, 50257, 2048},
    {"gpt3-medium", 24, 1024, 16, 50257, 2048},
    {"gpt3-large", 24, 1536, 16, 50257, 2048},
    {"gpt3-xl", 24, 2048, 16, 50257, 2048},
    {"gpt3-2.7b", 32, 2560, 32, 50257, 2048},
    {"gpt3-6.7b", 32, 4096, 32, 50257, 2048},
    {"gpt3-13b", 40, 5120, 40, 50257, 2048},
    {"gpt3-175b", 96, 12288, 96, 50257, 2048},
};

// The Hugging Face model ids of the four GPT-2 sizes (openai-community/gpt2, gpt2-medium,
// gpt2-large, gpt2-xl on huggingface.co; Radford et al. 2019, table 2): names people already type.
struct ModelAlias {
  const char* alias;
  const char* name;
};
constexpr ModelAlias kAliases[] = {
    {"gpt2", "gpt2-124m"},
    {"gpt2-medium", "gpt2-350m"},
    {"gpt2-large", "gpt2-774m"},
    {"gpt2-xl", "gpt2-1558m"},
};

std::string_view alias_of(std::string_view name) {
  for (const auto& a : kAliases)
    if (name == a.name) return a.alias;
  return {};
}

}  // namespace

void validate(const GptConfig& c) {
  if (c.layers <= 0 || c.hidden <= 0 || c.heads <= 0 || c.vocab <= 0 || c.seq <= 0) {
    throw UsageError(
        fmt::format("model '{}': layers, hidden, heads, vocab and seq must be positive "
                    "(got {}, {}, {}, {}, {})",
                    c.name, c.layers, c.hidden, c.heads, c.vocab, c.seq));
  }
  if (c.hidden % c.heads != 0) {
    throw UsageError(fmt::format("model '{}': hidden {} is not divisible by heads {}", c.name, c.hidden, c.heads));
  }
}

GptConfig named_config(std::string_view name) {
  const std::string canonical = canonical_config_name(name);
  for (const auto& k : kConfigs) {
    if (canonical == k.name) {
      return GptConfig{k.name, k.layers, k.hidden, k.heads, k.vocab, k.seq};
    }
  }
  std::vector<std::string> typeable = config_names();
  for (const std::string& alias : config_aliases()) typeable.push_back(alias);
  throw UsageError(
      fmt::format("unknown model '{}'{} (known: {})", name, did_you_mean(name, typeable), config_names_with_aliases()));
}

std::vector<std::string> config_names() {
  std::vector<std::string> out;
  for (const auto& k : kConfigs) out.emplace_back(k.name);
  return out;
}

std::vector<std::string> config_aliases() {
  std::vector<std::string> out;
  for (const auto& a : kAliases) out.emplace_back(a.alias);
  return out;
}

std::string canonical_config_name(std::string_view name) {
  for (const auto& a : kAliases)
    if (name == a.alias) return a.name;
  return std::string(name);
}

std::string config_names_with_aliases() {
  std::string out;
  for (const auto& k : kConfigs) {
    if (!out.empty()) out += ", ";
    out += k.name;
    if (const std::string_view alias = alias_of(k.name); !alias.empty()) out += fmt::format(" (or {})", alias);
  }
  return out;
}

GptConfig apply_overrides(GptConfig base, const ConfigOverrides& o) {
  bool changed = false;
  auto set = [&](int& field, int value) {
    if (value > 0 && value != field) {
      field = value;
      changed = true;
    }
  };
  set(base.layers, o.layers);
  set(base.hidden, o.hidden);
  set(base.heads, o.heads);
  set(base.vocab, o.vocab);
  set(base.seq, o.seq);
  if (changed) base.name += "+custom";
  validate(base);
  return base;
}

GptConfig config_from_json(std::string_view json_text) {
  const nlohmann::json j = parse_json_input(json_text, "model config JSON");
  if (!j.is_object()) throw UsageError("model config JSON: expected an object");
  GptConfig c;
  auto text = [&](const char* key) {
    if (!j.at(key).is_string()) throw UsageError(fmt::format("model config JSON: '{}' must be a string", key));
    return j.at(key).get<std::string>();
  };
  if (j.contains("base")) c = named_config(text("base"));
  auto read = [&](const char* key, int& field) {
    if (j.contains(key)) {
      if (!j.at(key).is_number_integer()) {
        throw UsageError(fmt::format("model config JSON: '{}' must be an integer", key));
      }
      field = j.at(key).get<int>();
    }
  };
  read("layers", c.layers);
  read("hidden", c.hidden);
  read("heads", c.heads);
  read("vocab", c.vocab);
  read("seq", c.seq);
  if (j.contains("name")) c.name = text("name");
  validate(c);
  return c;
}

GptConfig load_config_file(const std::string& path) {
  return config_from_json(read_input_file(path, "model config file"));
}

std::string config_to_json(const GptConfig& c) {
  nlohmann::json j = {{"name", c.name},   {"layers", c.layers}, {"hidden", c.hidden},
                      {"heads", c.heads}, {"vocab", c.vocab},   {"seq", c.seq}};
  return j.dump();
}

int64_t layer_param_count(const GptConfig& c) {
  const int64_t C = c.hidden;
  return 12 * C * C + 13 * C;
}

int64_t embedding_param_count(const GptConfig& c) {
  const int64_t C = c.hidden;
  return static_cast<int64_t>(c.vocab) * C + static_cast<int64_t>(c.seq) * C + 2 * C;
}

int64_t param_count(const GptConfig& c) {
  return embedding_param_count(c) + static_cast<int64_t>(c.layers) * layer_param_count(c);
}

int padded_vocab(int vocab, int tp) {
  const int multiple = kVocabDivisibleBy * std::max(tp, 1);
  return (vocab + multiple - 1) / multiple * multiple;
}

}  // namespace gcb::models
