// Weights in Hugging Face's GPT-2 format, so a model saved by `transformers` loads here and ours
// loads there: safetensors with GPT2LMHeadModel's tensor names (transformers
// models/gpt2/modeling_gpt2.py) and the config.json that save_pretrained writes beside it.
//   transformer.wte.weight [V, C], transformer.wpe.weight [T, C],
//   transformer.h.{l}.ln_1.{weight,bias} [C], .attn.c_attn.{weight [C, 3C], bias [3C]},
//   .attn.c_proj.{weight [C, C], bias [C]}, .ln_2.{weight,bias}, .mlp.c_fc.{weight [C, 4C],
//   bias [4C]}, .mlp.c_proj.{weight [4C, C], bias [C]}, transformer.ln_f.{weight,bias};
//   the LM head is tied to wte (save_pretrained leaves lm_head.weight out).
// GPT-2's Conv1D stores weights [in, out]; ours are [out, in] (param_layout.hpp), so the four
// projection matrices are transposed on the way in and out. Files of the bare GPT2Model (names
// without "transformer.") load too.
#pragma once

#include <string>
#include <vector>

#include "models/model/config.hpp"

namespace gcb::models {

// The model a checkpoint holds: layers, hidden size, vocabulary and positions from the tensor
// shapes, the head count from `heads` when > 0, else from the config.json beside the file
// (n_head). gcb::UsageError (one line, naming the tensor or the key) when something does not fit.
GptConfig hf_gpt2_config(const std::string& path, int heads = 0);
// The config.json beside a checkpoint (read by hf_gpt2_config, written by save_hf_gpt2).
std::string config_json_path(const std::string& path);
// Its weights in canonical order (param_layout.hpp), checked tensor by tensor against `c`.
std::vector<float> load_hf_gpt2(const std::string& path, const GptConfig& c);
// Writes `canonical` as a GPT-2 safetensors file and config.json beside it (replacing one there).
void save_hf_gpt2(const std::string& path, const GptConfig& c, const std::vector<float>& canonical);

}  // namespace gcb::models
