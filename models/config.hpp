// GPT model configurations and the analytic counts derived from them: parameters and FLOPs per
// token under the two conventions in use (../shared/reference/training.md §2.6, §7).
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

// Names: tiny, gpt2-124m, gpt2-350m, gpt2-774m, gpt2-1558m, gpt3-small, gpt3-medium, gpt3-large,
// gpt3-xl, gpt3-2.7b, gpt3-6.7b, gpt3-13b, gpt3-175b. Unknown name: gcb::UsageError.
GptConfig named_config(std::string_view name);
std::vector<std::string> config_names();

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

enum class FlopsConvention : uint8_t {
  causal,  // 6N + 6·L·C·T: attention scores counted causal-halved (llm.c, Megatron today)
  palm,    // 6N + 12·L·C·T: full attention matrix (PaLM, Narayanan et al. 2021, torchtitan)
};
enum class Recompute : uint8_t { none, selective, full };

// Model FLOPs per trained token (forward + backward, no recompute): the MFU numerator.
// Sources: llm.c train_gpt2.cu (6N + 6LCT), PaLM appendix B / torchtitan metrics.py (6N + 12LCT);
// ../shared/reference/training.md §1.5, §4.2, §7. N includes the tied embedding.
double model_flops_per_token(const GptConfig& c, FlopsConvention conv);
// Hardware FLOPs per token: model FLOPs plus what recomputation runs again (HFU, Korthikanti et
// al. 2022 §6.3). full: one more forward of every layer (2·N_layers + attention forward, which is
// 2·L·C·T causal / 4·L·C·T full); selective: the attention core forward only (same attention term).
double hardware_flops_per_token(const GptConfig& c, FlopsConvention conv, Recompute r);

}  // namespace gcb::models
