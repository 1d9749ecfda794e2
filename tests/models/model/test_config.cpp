// Configs and parameter counts against published values (GPT-2 model card, llm.c; GPT-3 paper
// table 2.1).
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "core/error.hpp"
#include "models/model/config.hpp"

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

// Hugging Face's names of the GPT-2 sizes are the same configs under the canonical name.
TEST(ModelConfig, HuggingFaceGpt2NamesAreAliases) {
  const std::pair<const char*, const char*> aliases[] = {
      {"gpt2", "gpt2-124m"}, {"gpt2-medium", "gpt2-350m"}, {"gpt2-large", "gpt2-774m"}, {"gpt2-xl", "gpt2-1558m"}};
  for (const auto& [alias, name] : aliases) {
    const GptConfig a = named_config(alias), c = named_config(name);
    EXPECT_EQ(a.name, name) << alias;  // what results record
    EXPECT_EQ(param_count(a), param_count(c)) << alias;
    EXPECT_EQ(canonical_config_name(alias), name);
  }
  EXPECT_EQ(canonical_config_name("gpt3-xl"), "gpt3-xl");  // GPT-3 XL is not GPT-2 XL
  EXPECT_EQ(named_config("gpt2-xl").layers, 48);
  EXPECT_EQ(config_from_json(R"({"base": "gpt2-medium"})").name, "gpt2-350m");
  const std::vector<std::string> names = config_names();
  EXPECT_EQ(std::count(names.begin(), names.end(), "gpt2"), 0);  // canonical names only
  EXPECT_NE(config_names_with_aliases().find("gpt2-350m (or gpt2-medium)"), std::string::npos);
}

TEST(ModelConfig, UnknownNameSuggestsTheClosest) {
  try {
    named_config("gpt2-medum");
    FAIL() << "accepted";
  } catch (const UsageError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("unknown model 'gpt2-medum' (did you mean 'gpt2-medium'?)"), std::string::npos) << what;
    EXPECT_NE(what.find("gpt2-124m (or gpt2)"), std::string::npos) << what;
  }
  try {
    named_config("llama-70b");
    FAIL() << "accepted";
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()).find("did you mean"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace gcb::models
