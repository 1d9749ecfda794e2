// Token sources: the synthetic chain is seeded and learnable; llm.c and nanoGPT token files are
// read as consecutive windows of T + 1 tokens that wrap at the end; malformed files and tokens
// outside the vocabulary are usage errors naming the file.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "core/error.hpp"
#include "models/io/token_data.hpp"

namespace gcb::models {
namespace {

std::string temp(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("gcb-tokens-" + std::to_string(getpid()) + "-" + name)).string();
}

TEST(TokenData, SyntheticSequencesAreSeededAndShifted) {
  std::vector<int32_t> a, at, b, bt;
  synthetic_tokens(42, 64)->read(5, 2, 16, a, at);
  synthetic_tokens(42, 64)->read(5, 2, 16, b, bt);
  EXPECT_EQ(a, b);
  ASSERT_EQ(a.size(), 32u);
  for (int s = 0; s < 2; ++s)
    for (int t = 0; t + 1 < 16; ++t)
      EXPECT_EQ(at[static_cast<size_t>(s * 16 + t)], a[static_cast<size_t>(s * 16 + t + 1)]);
  std::vector<int32_t> one, onet;
  synthetic_tokens(42, 64)->read(6, 1, 16, one, onet);  // sequence 6 = the second of the pair
  EXPECT_EQ(std::vector<int32_t>(a.begin() + 16, a.end()), one);
}

TEST(TokenData, LlmcAndNanoGptFilesReadConsecutiveWindows) {
  std::vector<uint16_t> tokens(23);
  for (size_t i = 0; i < tokens.size(); ++i) tokens[i] = static_cast<uint16_t>(i * 7 % 50);
  for (bool llmc : {true, false}) {
    const std::string path = temp(llmc ? "llmc.bin" : "nanogpt.bin");
    write_token_file(path, tokens, llmc);
    auto src = open_token_file(path, 50, 4);
    EXPECT_NE(src->describe().find(llmc ? "llm.c" : "nanoGPT"), std::string::npos) << src->describe();
    std::vector<int32_t> x, y;
    // (23 − 1) / 4 = 5 windows: sequence 6 wraps to window 1, tokens 4…8.
    src->read(1, 1, 4, x, y);
    std::vector<int32_t> want_x = {28, 35, 42, 49}, want_y = {35, 42, 49, 6};
    EXPECT_EQ(x, want_x);
    EXPECT_EQ(y, want_y);
    std::vector<int32_t> w, wy;
    src->read(6, 1, 4, w, wy);
    EXPECT_EQ(w, x);
    std::filesystem::remove(path);
  }
}

TEST(TokenData, BadFilesAndTokensAreUsageErrors) {
  EXPECT_THROW(open_token_file("/nonexistent/tokens.bin", 50, 4), UsageError);
  const std::string path = temp("short.bin");
  write_token_file(path, {1, 2, 3}, true);
  EXPECT_THROW(open_token_file(path, 50, 4), UsageError);  // 3 tokens < one window of 5
  write_token_file(path, {1, 2, 3, 60, 4, 5}, false);
  auto src = open_token_file(path, 50, 4);
  std::vector<int32_t> x, y;
  try {
    src->read(0, 1, 4, x, y);
    ADD_FAILURE() << "token 60 ≥ vocab 50 accepted";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("token 60 at position 3"), std::string::npos) << e.what();
  }
  {  // an llm.c header that promises more tokens than the file holds
    std::vector<int32_t> header(256, 0);
    header[0] = 20240520;
    header[1] = 1;
    header[2] = 100;
    std::ofstream out(path, std::ios::binary);
    out.write(reinterpret_cast<const char*>(header.data()), 1024);
    out.write("\1\0\2\0", 4);
  }
  EXPECT_THROW(open_token_file(path, 50, 1), UsageError);
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace gcb::models
