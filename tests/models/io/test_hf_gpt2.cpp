// Hugging Face GPT-2 weights: the shapes come from the file and the head count from the
// config.json beside it (or the caller); save and load round-trip every weight bit for bit with
// the Conv1D [in, out] matrices transposed on the way; our files name the tensors as
// GPT2LMHeadModel does; a mismatch names the tensor. The transformers cross-check itself runs
// gcbench on a fixture transformers made (tests/bench/train/test_train_hf.cpp).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <functional>
#include <fstream>
#include <string>

#include "core/error.hpp"
#include "models/io/hf_gpt2.hpp"
#include "models/model/init_rng.hpp"
#include "models/model/param_layout.hpp"
#include "models/io/safetensors.hpp"

namespace gcb::models {
namespace {

namespace fs = std::filesystem;

struct TempDir {
  fs::path path = fs::temp_directory_path() / ("gcb-hf-" + std::to_string(getpid()));
  TempDir() { fs::create_directories(path); }
  ~TempDir() { fs::remove_all(path); }
  std::string file(const std::string& name) const { return (path / name).string(); }
};

std::vector<float> random_params(const GptConfig& c) {
  std::vector<float> p(ParamLayout(c).total());
  for (size_t i = 0; i < p.size(); ++i) p[i] = counter_normal(5, 1, i);
  return p;
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

TEST(HfGpt2, SaveAndLoadRoundTripWithGpt2NamesAndConv1dLayout) {
  const TempDir dir;
  const GptConfig c = named_config("tiny");
  const std::vector<float> params = random_params(c);
  const std::string path = dir.file("model.safetensors");
  save_hf_gpt2(path, c, params);
  const GptConfig read = hf_gpt2_config(path);
  EXPECT_EQ(read.layers, c.layers);
  EXPECT_EQ(read.hidden, c.hidden);
  EXPECT_EQ(read.heads, c.heads);  // from config.json's n_head
  EXPECT_EQ(read.vocab, c.vocab);
  EXPECT_EQ(read.seq, c.seq);
  EXPECT_EQ(load_hf_gpt2(path, read), params);
  // GPT-2 names and Conv1D layout: c_attn.weight is [C, 3C] with element (i, o) = our qkvw[o, i].
  const SafetensorsFile f = read_safetensors(path);
  EXPECT_EQ(f.metadata.at("format"), "pt");
  const SafeTensor* attn = f.find("transformer.h.1.attn.c_attn.weight");
  ASSERT_NE(attn, nullptr);
  EXPECT_EQ(attn->shape, (std::vector<int64_t>{32, 96}));
  const ParamLayout pl(c);
  const std::vector<float> v = tensor_floats(*attn);
  const size_t i = 3, o = 70, C = 32;
  EXPECT_EQ(v[i * 3 * C + o], params[pl.unit_offset(2) + pl.layer().qkvw + o * C + i]);
  EXPECT_EQ(f.find("lm_head.weight"), nullptr);  // tied to wte, as save_pretrained writes it
  EXPECT_EQ(f.tensors.size(), 4u + 12u * 2);
}

TEST(HfGpt2, HeadsFromConfigJsonOrTheCaller) {
  const TempDir dir;
  const GptConfig c = named_config("tiny");
  const std::string path = dir.file("model.safetensors");
  save_hf_gpt2(path, c, random_params(c));
  EXPECT_EQ(hf_gpt2_config(path, 2).heads, 2);  // the caller overrides config.json
  fs::remove(dir.file("config.json"));
  EXPECT_NE(error_of([&] { hf_gpt2_config(path); }).find("no config.json beside it gives n_head"), std::string::npos);
  std::ofstream(dir.file("config.json")) << R"({"n_head": 4, "activation_function": "gelu"})";
  EXPECT_NE(error_of([&] { hf_gpt2_config(path); }).find("activation_function gelu"), std::string::npos);
  std::ofstream(dir.file("config.json")) << R"({"n_head": 4, "n_layer": 3})";
  EXPECT_NE(error_of([&] { hf_gpt2_config(path); }).find("n_layer = 3 but the weights give 2"), std::string::npos);
}

TEST(HfGpt2, AMismatchNamesTheTensor) {
  const TempDir dir;
  GptConfig c = named_config("tiny");
  const std::string path = dir.file("model.safetensors");
  save_hf_gpt2(path, c, random_params(c));
  // A file whose c_fc is the wrong size (an MLP of 2C): the loader names it.
  SafetensorsFile f = read_safetensors(path);
  std::vector<SafeTensor> tensors;
  for (SafeTensor& t : f.tensors) {
    if (t.name == "transformer.h.0.mlp.c_fc.weight") {
      const std::vector<float> half(32 * 64, 0.5f);
      t = f32_tensor(t.name, {32, 64}, half.data());
    }
    tensors.push_back(t);
  }
  write_safetensors(path, tensors, {{"format", "pt"}});
  const std::string e = error_of([&] { load_hf_gpt2(path, hf_gpt2_config(path)); });
  EXPECT_NE(e.find("transformer.h.0.mlp.c_fc.weight has shape [32, 64], expected [32, 128]"), std::string::npos) << e;
}

}  // namespace
}  // namespace gcb::models
