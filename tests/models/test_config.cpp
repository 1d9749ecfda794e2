// Configs and parameter counts against published values (GPT-2 model card, llm.c; GPT-3 paper
// table 2.1).
#include <gtest/gtest.h>

#include "core/error.hpp"
#include "models/config.hpp"

namespace gcb::models {
namespace {

TEST(ModelConfig, Gpt2SmallParameterCount) {
  // GPT-2 124M with the unpadded vocabulary 50257: 124,439,808 (llm.c prints the same with V=50257).
  EXPECT_EQ(param_count(named_config("gpt2-124m")), 124'439'808);
}

TEST(ModelConfig, ParameterCountFormula) {
  const GptConfig c = named_config("tiny");  // L=2, C=32, V=64, T=16
  EXPECT_EQ(layer_param_count(c), 12 * 32 * 32 + 13 * 32);
  EXPECT_EQ(embedding_param_count(c), 64 * 32 + 16 * 32 + 2 * 32);
  EXPECT_EQ(param_count(c), 2 * (12 * 32 * 32 + 13 * 32) + 64 * 32 + 16 * 32 + 64);
}

TEST(ModelConfig, Gpt3Family) {
  // GPT-3 table 2.1 sizes (125M … 175B) within 3% of the published totals.
  const std::pair<const char*, double> published[] = {
      {"gpt3-small", 125e6}, {"gpt3-medium", 350e6}, {"gpt3-large", 760e6}, {"gpt3-xl", 1.3e9},
      {"gpt3-2.7b", 2.7e9},  {"gpt3-6.7b", 6.7e9},   {"gpt3-13b", 13e9},    {"gpt3-175b", 175e9}};
  for (const auto& [name, n] : published) {
    const double got = static_cast<double>(param_count(named_config(name)));
    EXPECT_NEAR(got / n, 1.0, 0.03) << name;
  }
}

TEST(ModelConfig, OverridesAndJson) {
  GptConfig c = apply_overrides(named_config("tiny"), {.layers = 3, .seq = 8});
  EXPECT_EQ(c.layers, 3);
  EXPECT_EQ(c.seq, 8);
  EXPECT_EQ(c.hidden, 32);
  const GptConfig j = config_from_json(R"({"base": "gpt2-124m", "layers": 2, "name": "x"})");
  EXPECT_EQ(j.layers, 2);
  EXPECT_EQ(j.hidden, 768);
  EXPECT_EQ(j.name, "x");
  const GptConfig round = config_from_json(config_to_json(j));
  EXPECT_EQ(round.vocab, 50257);
  EXPECT_EQ(round.seq, 1024);
}

TEST(ModelConfig, InvalidConfigsAreUsageErrors) {
  EXPECT_THROW(named_config("gpt5"), UsageError);
  EXPECT_THROW(apply_overrides(named_config("tiny"), {.heads = 5}), UsageError);
  EXPECT_THROW(config_from_json("{\"layers\": 2"), UsageError);
  EXPECT_THROW(config_from_json(R"({"layers": "two", "hidden": 8, "heads": 2, "vocab": 4, "seq": 4})"), UsageError);
  EXPECT_THROW(load_config_file("/nonexistent/model.json"), UsageError);
}

}  // namespace
}  // namespace gcb::models
