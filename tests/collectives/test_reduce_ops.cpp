// reduce_into / finish_reduction: the host reduction both host backends share. Exact values,
// including the rounding and wrap-around behaviour the header documents.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "collectives/communicator.hpp"
#include "core/error.hpp"

namespace gcb {
namespace {

TEST(ReduceOps, NamesRoundTrip) {
  for (ReduceOp op : {ReduceOp::sum, ReduceOp::prod, ReduceOp::min, ReduceOp::max, ReduceOp::avg})
    EXPECT_EQ(parse_reduce_op(reduce_op_name(op)), op);
  EXPECT_EQ(reduce_op_name(ReduceOp::avg), "avg");
  EXPECT_FALSE(parse_reduce_op("mulsum").has_value());
  EXPECT_FALSE(parse_reduce_op("SUM").has_value());
}

TEST(ReduceOps, Fp16RoundsAfterEveryStep) {
  // 2048 + 1 is not representable in fp16 (spacing 2 there): each step rounds to even, so
  // ((2048 + 1) + 1) = 2048, whereas one rounding of the exact 2050 would give 2050.
  std::vector<uint16_t> acc{float_to_fp16(2048.0f)};
  const std::vector<uint16_t> one{float_to_fp16(1.0f)};
  reduce_into(DType::f16, ReduceOp::sum, acc.data(), one.data(), 1);
  reduce_into(DType::f16, ReduceOp::sum, acc.data(), one.data(), 1);
  EXPECT_EQ(fp16_to_float(acc[0]), 2048.0f);
}

TEST(ReduceOps, Bf16MinMaxProd) {
  std::vector<uint16_t> a{float_to_bf16(-3.0f), float_to_bf16(5.0f)};
  const std::vector<uint16_t> b{float_to_bf16(2.0f), float_to_bf16(-7.0f)};
  auto m = a;
  reduce_into(DType::bf16, ReduceOp::min, m.data(), b.data(), 2);
  EXPECT_EQ(bf16_to_float(m[0]), -3.0f);
  EXPECT_EQ(bf16_to_float(m[1]), -7.0f);
  reduce_into(DType::bf16, ReduceOp::prod, a.data(), b.data(), 2);
  EXPECT_EQ(bf16_to_float(a[0]), -6.0f);
  EXPECT_EQ(bf16_to_float(a[1]), -35.0f);
}

TEST(ReduceOps, IntegersWrapLikeTwosComplement) {
  std::vector<int8_t> a{120, -128};
  const std::vector<int8_t> b{10, -1};
  reduce_into(DType::i8, ReduceOp::sum, a.data(), b.data(), 2);
  EXPECT_EQ(a[0], -126);
  EXPECT_EQ(a[1], 127);
  std::vector<int32_t> c{INT32_MAX};
  const std::vector<int32_t> two{2};
  reduce_into(DType::i32, ReduceOp::prod, c.data(), two.data(), 1);
  EXPECT_EQ(c[0], -2);
}

TEST(ReduceOps, AvgDividesOnceAtTheEnd) {
  std::vector<int32_t> i{-7, 7};
  finish_reduction(DType::i32, ReduceOp::avg, i.data(), 2, 2);
  EXPECT_EQ(i, (std::vector<int32_t>{-3, 3}));  // truncation toward zero
  std::vector<int8_t> small{100};
  finish_reduction(DType::i8, ReduceOp::avg, small.data(), 1, 200);  // divisor beyond int8
  EXPECT_EQ(small[0], 0);
  std::vector<float> f{1.0f};
  finish_reduction(DType::f32, ReduceOp::avg, f.data(), 1, 3);
  EXPECT_EQ(f[0], 1.0f / 3.0f);
  finish_reduction(DType::f32, ReduceOp::sum, f.data(), 1, 3);  // no-op for other ops
  EXPECT_EQ(f[0], 1.0f / 3.0f);
  std::vector<uint16_t> h{float_to_fp16(1.0f)};
  finish_reduction(DType::f16, ReduceOp::avg, h.data(), 1, 3);
  EXPECT_EQ(h[0], float_to_fp16(1.0f / 3.0f));
}

TEST(ReduceOps, UnsupportedDtypeIsAUsageError) {
  std::vector<uint8_t> a{1}, b{2};
  EXPECT_THROW(reduce_into(DType::fp8_e4m3, ReduceOp::sum, a.data(), b.data(), 1), UsageError);
}

}  // namespace
}  // namespace gcb
