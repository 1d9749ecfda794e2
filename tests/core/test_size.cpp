#include <gtest/gtest.h>

#include "core/error.hpp"
#include "core/size.hpp"

namespace gcb {
namespace {

TEST(Size, ParsesSuffixesAsBinary) {
  EXPECT_EQ(parse_size("4096"), 4096u);
  EXPECT_EQ(parse_size("64K"), 65536u);
  EXPECT_EQ(parse_size("64k"), 65536u);
  EXPECT_EQ(parse_size("1M"), 1u << 20);
  EXPECT_EQ(parse_size("8G"), 8ull << 30);
  EXPECT_EQ(parse_size("2T"), 2ull << 40);
  EXPECT_EQ(parse_size("4KiB"), 4096u);
  EXPECT_EQ(parse_size("4KB"), 4096u);
  EXPECT_EQ(parse_size("512B"), 512u);
  EXPECT_EQ(parse_size("0.5K"), 512u);
  EXPECT_EQ(parse_size(" 1G "), 1ull << 30);
}

TEST(Size, RejectsMalformedInput) {
  for (const char* bad : {"12Q", "", "-1", "G", "1.5.2G", "1GG", "0.3", "1e30T", "abc", "4 KiBx"}) {
    EXPECT_THROW(parse_size(bad), UsageError) << bad;
  }
  try {
    parse_size("12Q");
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("12Q"), std::string::npos);  // names the input
  }
}

TEST(Size, AnOverflowingNumberSaysTooLarge) {
  // from_chars reports 1e400 as out of range; it used to say "no number".
  try {
    parse_size("1e400");
    FAIL() << "accepted";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("too large"), std::string::npos) << e.what();
  }
}

TEST(Size, FormatsWithBinaryUnits) {
  EXPECT_EQ(format_bytes(512), "512 B");
  EXPECT_EQ(format_bytes(4096), "4 KiB");
  EXPECT_EQ(format_bytes(1.5 * (1 << 30)), "1.5 GiB");
}

TEST(Size, SweepsLikeNcclTests) {
  EXPECT_EQ(size_sweep(8, 64, 2), (std::vector<uint64_t>{8, 16, 32, 64}));
  EXPECT_EQ(size_sweep(8, 100, 4), (std::vector<uint64_t>{8, 32}));
  EXPECT_EQ(size_sweep(10, 40, 0, 10), (std::vector<uint64_t>{10, 20, 30, 40}));
  EXPECT_EQ(size_sweep(7, 7, 2), (std::vector<uint64_t>{7}));
  EXPECT_THROW(size_sweep(64, 8, 2), UsageError);
  EXPECT_THROW(size_sweep(8, 64, 1), UsageError);
}

}  // namespace
}  // namespace gcb
