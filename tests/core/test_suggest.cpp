#include <gtest/gtest.h>

#include "core/suggest.hpp"

namespace gcb {
namespace {

TEST(Suggest, EditDistanceCountsEachEditOnce) {
  EXPECT_EQ(edit_distance("", ""), 0u);
  EXPECT_EQ(edit_distance("abc", ""), 3u);
  EXPECT_EQ(edit_distance("", "abc"), 3u);
  EXPECT_EQ(edit_distance("gpt2-medum", "gpt2-medium"), 1u);  // insertion
  EXPECT_EQ(edit_distance("allreduce", "all_reduce"), 1u);    // insertion
  EXPECT_EQ(edit_distance("trian", "train"), 1u);             // adjacent transposition
  EXPECT_EQ(edit_distance("kitten", "sitting"), 3u);          // Levenshtein's example
  EXPECT_EQ(edit_distance("ca", "abc"), 3u);                  // OSA, not unrestricted Damerau (2)
  EXPECT_EQ(edit_distance("GPT2", "gpt2"), 0u);               // case-blind
  EXPECT_EQ(edit_distance("abc", "abd"), edit_distance("abd", "abc"));
}

TEST(Suggest, ClosestNameWithinTwoEditsOrASharedPrefix) {
  const std::vector<std::string> models = {"gpt2-124m", "gpt2-350m", "gpt2", "gpt2-medium", "gpt3-175b"};
  EXPECT_EQ(closest_name("gpt2-medum", models), "gpt2-medium");
  EXPECT_EQ(closest_name("gpt2-350", models), "gpt2-350m");
  EXPECT_EQ(closest_name("GPT2-124M", models), "gpt2-124m");
  EXPECT_EQ(closest_name("gpt3-175b-x", models), "gpt3-175b");  // a known name starts it
  EXPECT_EQ(closest_name("gpt3-17", models), "gpt3-175b");      // 2 edits
  EXPECT_EQ(closest_name("gpt2", models), std::nullopt);        // known: nothing to suggest
  EXPECT_EQ(closest_name("llama-70b", models), std::nullopt);
  EXPECT_EQ(closest_name("", models), std::nullopt);
  const std::vector<std::string> commands = {"mem", "gemm", "attn", "p2p", "coll", "train", "plan"};
  EXPECT_EQ(closest_name("trian", commands), "train");
  EXPECT_EQ(closest_name("gem", commands), "gemm");
  EXPECT_EQ(closest_name("mme", commands), "mem");
  EXPECT_EQ(closest_name("xyz", commands), std::nullopt);               // short: at most one edit
  EXPECT_EQ(closest_name("-x", {"-h", "-q", "--help"}), std::nullopt);  // shorter still: no edit
  EXPECT_EQ(closest_name("-Q", {"-h", "-q", "--help"}), "-q");
  EXPECT_EQ(closest_name("pan", commands), "plan");
  EXPECT_EQ(closest_name("training", commands), "train");  // starts with a known name
}

TEST(Suggest, DidYouMeanIsASuffixOrNothing) {
  EXPECT_EQ(did_you_mean("alreduce", {"all_reduce", "all_gather"}), " (did you mean 'all_reduce'?)");
  EXPECT_EQ(did_you_mean("bogus", {"all_reduce", "all_gather"}), "");
}

}  // namespace
}  // namespace gcb
