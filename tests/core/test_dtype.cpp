// dtype names and host conversions against known bit patterns (IEEE 754 binary16, bfloat16,
// OCP FP8 E4M3/E5M2), including the round-to-nearest-even ties and overflow behaviour.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "core/dtype.hpp"

namespace gcb {
namespace {

TEST(DType, NamesSizesAndParsing) {
  EXPECT_EQ(dtype_name(DType::bf16), "bf16");
  EXPECT_EQ(dtype_size(DType::f64), 8u);
  EXPECT_EQ(dtype_size(DType::tf32), 4u);
  EXPECT_EQ(dtype_size(DType::fp8_e5m2), 1u);
  for (DType t : all_dtypes()) EXPECT_EQ(parse_dtype(dtype_name(t)), t);
  EXPECT_EQ(parse_dtype("half"), DType::f16);
  EXPECT_EQ(parse_dtype("e4m3"), DType::fp8_e4m3);
  EXPECT_FALSE(parse_dtype("fp12").has_value());
}

TEST(DType, Bf16KnownPatterns) {
  EXPECT_EQ(float_to_bf16(1.0f), 0x3F80);
  EXPECT_EQ(float_to_bf16(-2.0f), 0xC000);
  EXPECT_EQ(float_to_bf16(3.14159274f), 0x4049);                        // 0x40490FDB: low half < tie
  EXPECT_EQ(float_to_bf16(1.0f + 0x1p-8f), 0x3F80);                     // tie, even stays
  EXPECT_EQ(float_to_bf16(1.0f + 3 * 0x1p-8f), 0x3F82);                 // tie, odd rounds up
  EXPECT_EQ(float_to_bf16(std::numeric_limits<float>::max()), 0x7F80);  // rounds to +Inf
  EXPECT_TRUE(std::isnan(bf16_to_float(float_to_bf16(std::nanf("")))));
  EXPECT_EQ(bf16_to_float(0x3F80), 1.0f);
}

TEST(DType, Fp16KnownPatterns) {
  EXPECT_EQ(float_to_fp16(1.0f), 0x3C00);
  EXPECT_EQ(float_to_fp16(0.1f), 0x2E66);
  EXPECT_EQ(float_to_fp16(65504.0f), 0x7BFF);  // largest finite
  EXPECT_EQ(float_to_fp16(65520.0f), 0x7C00);  // tie above max → Inf (IEEE)
  EXPECT_EQ(float_to_fp16(0x1p-24f), 0x0001);  // smallest subnormal
  EXPECT_EQ(float_to_fp16(0x1p-25f), 0x0000);  // tie with 0 → even (0)
  EXPECT_EQ(float_to_fp16(-0.0f), 0x8000);
  EXPECT_EQ(float_to_fp16(1.0f + 0x1p-11f), 0x3C00);      // tie, even
  EXPECT_EQ(float_to_fp16(1.0f + 3 * 0x1p-11f), 0x3C02);  // tie, odd rounds up
  EXPECT_EQ(fp16_to_float(0x7BFF), 65504.0f);
  EXPECT_EQ(fp16_to_float(0x0001), 0x1p-24f);
  EXPECT_TRUE(std::isinf(fp16_to_float(0x7C00)));
}

TEST(DType, Fp8KnownPatterns) {
  EXPECT_EQ(float_to_fp8_e4m3(1.0f), 0x38);
  EXPECT_EQ(float_to_fp8_e4m3(-2.0f), 0xC0);
  EXPECT_EQ(float_to_fp8_e4m3(448.0f), 0x7E);
  EXPECT_EQ(float_to_fp8_e4m3(1000.0f), 0x7E);  // saturates (no Inf in E4M3)
  EXPECT_EQ(float_to_fp8_e4m3(std::numeric_limits<float>::infinity()), 0x7E);
  EXPECT_EQ(float_to_fp8_e4m3(0x1p-9f), 0x01);  // smallest subnormal
  EXPECT_EQ(fp8_e4m3_to_float(0x7E), 448.0f);
  EXPECT_TRUE(std::isnan(fp8_e4m3_to_float(0x7F)));
  EXPECT_EQ(float_to_fp8_e5m2(1.0f), 0x3C);
  EXPECT_EQ(float_to_fp8_e5m2(57344.0f), 0x7B);
  EXPECT_EQ(float_to_fp8_e5m2(std::numeric_limits<float>::infinity()), 0x7C);
  EXPECT_EQ(float_to_fp8_e5m2(0x1p-16f), 0x01);
  EXPECT_EQ(fp8_e5m2_to_float(0x7B), 57344.0f);
}

TEST(DType, RoundTripsEveryEncoding) {
  // Every finite narrow encoding survives widen → narrow unchanged.
  for (uint32_t b = 0; b < 0x10000; ++b) {
    const auto bits = static_cast<uint16_t>(b);
    const float h = fp16_to_float(bits);
    if (std::isfinite(h)) {
      ASSERT_EQ(float_to_fp16(h), bits) << std::hex << b;
    }
    const float bf = bf16_to_float(bits);
    if (std::isfinite(bf)) {
      ASSERT_EQ(float_to_bf16(bf), bits) << std::hex << b;
    }
  }
  for (uint32_t b = 0; b < 0x100; ++b) {
    const auto bits = static_cast<uint8_t>(b);
    const float e4 = fp8_e4m3_to_float(bits);
    if (!std::isnan(e4)) {
      ASSERT_EQ(float_to_fp8_e4m3(e4), bits) << std::hex << b;
    }
    const float e5 = fp8_e5m2_to_float(bits);
    if (std::isfinite(e5)) {
      ASSERT_EQ(float_to_fp8_e5m2(e5), bits) << std::hex << b;
    }
  }
}

TEST(DType, Tf32AndTypedStores) {
  EXPECT_EQ(round_to_tf32(1.0f + 0x1p-11f), 1.0f);  // tie, even
  EXPECT_EQ(round_to_tf32(1.0f + 3 * 0x1p-11f), 1.0f + 0x1p-9f);
  uint16_t buf[4];
  store_as(DType::bf16, buf, 2, 1.5);
  EXPECT_EQ(buf[2], 0x3FC0);
  EXPECT_EQ(load_as(DType::bf16, buf, 2), 1.5);
  int8_t i8[2];
  store_as(DType::i8, i8, 1, -3.0);
  EXPECT_EQ(load_as(DType::i8, i8, 1), -3.0);
}

}  // namespace
}  // namespace gcb
