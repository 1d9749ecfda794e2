// GPT model configurations and their parameter counts. FLOPs and every other analytic count live
// in models/theory/theory.hpp.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace gcb::models {

struct GptConfig {
  std::string name = "custom";
  int layers = 0;  // L
  int hidden = 0;  // C (d_model)
  int heads = 0;   // NH; hidden % heads == 0
  int vocab = 0;   // V
  int seq = 0;     // T (maximum sequence length = position-embedding rows)

  int head_dim() const { return hidden / heads; }
};

// Throws gcb::UsageError with one clear line when a field is not positive or hidden % heads != 0.
void validate(const GptConfig& c);

// Names: tiny, small, gpt2-124m, gpt2-350m, gpt2-774m, gpt2-1558m, gpt3-small, gpt3-medium, gpt3-large,
// gpt3-xl, gpt3-2.7b, gpt3-6.7b, gpt3-13b, gpt3-175b; the GPT-2 sizes also under their Hugging
// Face names gpt2, gpt2-medium, gpt2-large, gpt2-xl (the config keeps the canonical name, which
// results record). Unknown name: gcb::UsageError with the closest name ("did you mean").
GptConfig named_config(std::string_view name);
std::vector<std::string> config_names();  // canonical names only
// The canonical name of an alias ("gpt2-medium" → "gpt2-350m"); any other text unchanged.
std::string canonical_config_name(std::string_view name);
std::vector<std::string> config_aliases();  // gpt2, gpt2-medium, gpt2-large, gpt2-xl
// "tiny, small, gpt2-124m (or gpt2), …": the names for help and error lines.
std::string config_names_with_aliases();

// Overrides: fields > 0 replace those of the base.
struct ConfigOverrides {
  int layers = 0, hidden = 0, heads = 0, vocab = 0, seq = 0;
};
GptConfig apply_overrides(GptConfig base, const ConfigOverrides& o);

// JSON: {"base": "gpt2-124m" (optional), "name", "layers", "hidden", "heads", "vocab", "seq"}.
GptConfig config_from_json(std::string_view json_text);
GptConfig load_config_file(const std::string& path);
std::string config_to_json(const GptConfig& c);

// Parameter counts of this implementation (GPT-2 layout, LM head tied to wte):
// per layer 12C² + 13C (ln1 2C, qkv 3C²+3C, attn proj C²+C, ln2 2C, fc 4C²+4C, fc proj 4C²+C),
// embeddings V·C + T·C, final LayerNorm 2C. GPT-2 124M: 124,439,808.
int64_t layer_param_count(const GptConfig& c);
int64_t embedding_param_count(const GptConfig& c);  // wte + wpe + final LayerNorm (one "unit")
int64_t param_count(const GptConfig& c);

// The vocabulary rows a tp degree trains with (the rows of wte and the logit columns, V_p ≥ V):
// V rounded up to a multiple of 128·t at every t, tp 1 included, as Megatron-LM pads
// (megatron/training/tokenizer/tokenizer.py `_vocab_size_with_padding`, --make-vocab-size-
// divisible-by, default 128): GPT-2's 50257 rows become 50304 at tp 1, so the LM head's GEMMs
// run on a multiple of 128 columns (karpathy/llm.c pads the same way, padded_vocab_size). The
// padded rows are real memory (parameters, gradients, optimizer states) but never real tokens:
// they start at zero, their logits are left out of the softmax, so they never receive a gradient
// and the loss and every real parameter's gradient are those of the unpadded model.
inline constexpr int kVocabDivisibleBy = 128;
int padded_vocab(int vocab, int tp);

}  // namespace gcb::models
