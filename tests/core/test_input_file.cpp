// Reading user-given files (core/input_file.hpp): regular files of bounded size only, JSON of
// bounded depth, numbers within double's range, and truncated text told from garbage.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>

#include "core/error.hpp"
#include "core/input_file.hpp"

namespace gcb {
namespace {

namespace fs = std::filesystem;

std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const UsageError& e) {
    return e.what();
  }
  return "(no UsageError)";
}

TEST(InputFile, AFifoIsRefusedAtOnceInsteadOfBlocking) {
  const fs::path fifo = fs::temp_directory_path() / ("gcb-fifo-" + std::to_string(getpid()));
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const auto start = std::chrono::steady_clock::now();
  const std::string why = message_of([&] { read_input_file(fifo.string(), "result file"); });
  fs::remove(fifo);
  EXPECT_NE(why.find("a FIFO, not a regular file"), std::string::npos) << why;
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
}

TEST(InputFile, DevicesFoldersAndOversizedFilesAreRefused) {
  EXPECT_NE(message_of([] { read_input_file("/dev/zero", "result file"); }).find("a character device"),
            std::string::npos);
  EXPECT_NE(message_of([] { read_input_file(fs::temp_directory_path().string(), "result file"); }).find("a folder"),
            std::string::npos);
  const fs::path big = fs::temp_directory_path() / ("gcb-big-" + std::to_string(getpid()));
  std::ofstream(big) << std::string(100, 'x');
  EXPECT_NE(message_of([&] { read_input_file(big.string(), "result file", 99); }).find("more than the 99 bytes"),
            std::string::npos);
  EXPECT_EQ(read_input_file(big.string(), "result file", 100).size(), 100u);
  fs::remove(big);
  EXPECT_NE(message_of([] { read_input_file("/nonexistent/x.json", "result file"); }).find("cannot read"),
            std::string::npos);
}

TEST(InputFile, DeepJsonIsRefusedWithoutCrashing) {
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  EXPECT_NE(message_of([&] { parse_json_input(deep, "x"); }).find("nested more than 256"), std::string::npos);
  const std::string ok = std::string(200, '[') + std::string(200, ']');
  EXPECT_TRUE(parse_json_input(ok, "x").is_array());
}

TEST(InputFile, NumbersBeyondDoubleAreBadInput) {
  EXPECT_NE(message_of([] { parse_json_input(R"({"value": 1e400})", "x"); }).find("number overflow"),
            std::string::npos);
}

TEST(InputFile, TruncatedJsonIsToldFromGarbage) {
  for (const char* cut : {R"({"a": [1, 2)", R"({"a": tru)", R"({"a")", R"({"schema": "gcb)"}) {
    try {
      parse_json_input(cut, "x");
      ADD_FAILURE() << cut;
    } catch (const JsonSyntaxError& e) {
      EXPECT_TRUE(e.truncated()) << cut;
    }
  }
  for (const char* bad : {R"({"a": 1} x)", R"({"a": @})", "garbage"}) {
    try {
      parse_json_input(bad, "x");
      ADD_FAILURE() << bad;
    } catch (const JsonSyntaxError& e) {
      EXPECT_FALSE(e.truncated()) << bad;
    }
  }
}

}  // namespace
}  // namespace gcb
