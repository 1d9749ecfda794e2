// The safetensors reader and writer: a round trip keeps names, types, shapes, bytes and
// metadata; the header is 8-byte aligned; each broken rule of the format is a usage error naming
// it; fp16 and bf16 tensors widen exactly.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>

#include "core/dtype.hpp"
#include "core/error.hpp"
#include "models/io/safetensors.hpp"

namespace gcb::models {
namespace {

std::string temp(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("gcb-st-" + std::to_string(getpid()) + "-" + name)).string();
}

// A file from a raw header text and data bytes.
void write_raw(const std::string& path, const std::string& header, size_t data_bytes) {
  std::ofstream out(path, std::ios::binary);
  const uint64_t n = header.size();
  for (int i = 0; i < 8; ++i) out.put(static_cast<char>(n >> (8 * i)));
  out << header << std::string(data_bytes, '\0');
}

std::string error_of(const std::string& path) {
  try {
    read_safetensors(path);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

TEST(Safetensors, RoundTripKeepsEverything) {
  const std::string path = temp("round.safetensors");
  const float a[] = {1.0f, -2.5f, 3.25f, 0.0f, 1e-20f, 7.0f};
  SafeTensor half;
  half.name = "h";
  half.dtype = "BF16";
  half.shape = {2};
  for (float x : {0.5f, -3.0f}) {
    const uint16_t b = float_to_bf16(x);
    half.data.push_back(static_cast<std::byte>(b & 0xFF));
    half.data.push_back(static_cast<std::byte>(b >> 8));
  }
  write_safetensors(path, {f32_tensor("w.weight", {2, 3}, a), half}, {{"format", "pt"}});
  const SafetensorsFile f = read_safetensors(path);
  ASSERT_EQ(f.tensors.size(), 2u);
  EXPECT_EQ(f.metadata.at("format"), "pt");
  const SafeTensor* w = f.find("w.weight");
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(w->shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(tensor_floats(*w), std::vector<float>(a, a + 6));
  EXPECT_EQ(tensor_floats(*f.find("h")), (std::vector<float>{0.5f, -3.0f}));
  // The data section starts 8-byte aligned (the format's recommendation for zero-copy loads).
  std::ifstream in(path, std::ios::binary);
  unsigned char len[8];
  in.read(reinterpret_cast<char*>(len), 8);
  EXPECT_EQ(len[0] % 8, 0);
  std::filesystem::remove(path);
}

TEST(Safetensors, BrokenRulesAreNamed) {
  const std::string path = temp("bad.safetensors");
  write_raw(path, R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})", 4);
  EXPECT_NE(error_of(path).find("cover 8 data bytes, the file has 4"), std::string::npos) << error_of(path);
  write_raw(path, R"({"a":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}})", 8);
  EXPECT_NE(error_of(path).find("8 bytes for 3 elements of F32"), std::string::npos) << error_of(path);
  write_raw(path, R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})", 8);
  EXPECT_NE(error_of(path).find("data at byte 4 where 0 was expected"), std::string::npos) << error_of(path);
  write_raw(path, R"({"a":{"dtype":"Q7","shape":[1],"data_offsets":[0,1]}})", 1);
  EXPECT_NE(error_of(path).find("unknown dtype 'Q7'"), std::string::npos) << error_of(path);
  write_raw(path, "{not json", 0);
  EXPECT_NE(error_of(path).find("not JSON"), std::string::npos) << error_of(path);
  {
    std::ofstream out(path, std::ios::binary);
    out << "abc";
  }
  EXPECT_NE(error_of(path).find("8-byte header length"), std::string::npos) << error_of(path);
  EXPECT_NE(error_of("/nonexistent/x.safetensors").find("cannot open"), std::string::npos);
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace gcb::models
