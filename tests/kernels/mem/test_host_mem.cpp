// Host STREAM kernels verified exactly against the element-wise references, for every op and
// dtype, including the idempotence the timing loop relies on; and the pointer chase is one cycle.
#include <gtest/gtest.h>

#include <cmath>
#include <string_view>
#include <vector>

#include "core/buffer.hpp"
#include "kernels/mem/host_mem.hpp"

namespace gcb::kernels {
namespace {

class HostStream : public ::testing::TestWithParam<DType> {};

TEST_P(HostStream, EveryOpMatchesReferenceExactly) {
  const DType t = GetParam();
  const size_t n = (1 << 16) + 37;  // not a multiple of any vector width or thread count
  const uint64_t seed = 1234;
  for (const StreamOpInfo& info : stream_ops()) {
    const StreamOp op = info.op;
    HostBuffer a(n * dtype_size(t), HostMemory::pageable), b(n * dtype_size(t), HostMemory::pageable),
        c(n * dtype_size(t), HostMemory::pageable);
    const HostStreamArrays arr{a.data(), b.data(), c.data(), n, t};
    host_stream_init(arr, seed);
    const double first = host_stream_run(op, arr);
    const double second = host_stream_run(op, arr);  // repeated passes must not drift
    const int out = stream_output_array(op);
    if (out >= 0) {
      const void* output = out == 0 ? a.data() : out == 1 ? b.data() : c.data();
      EXPECT_EQ(verify_stream_output(op, t, seed, output, n), "") << stream_op_name(op);
    } else {
      const ExpectedSum want = stream_expected_sum(op, t, seed, n);
      EXPECT_NEAR(first, want.value, want.tolerance) << stream_op_name(op);
      EXPECT_EQ(first, second) << stream_op_name(op);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Dtypes, HostStream, ::testing::Values(DType::f64, DType::f32, DType::bf16),
                         [](const auto& param_info) { return std::string(dtype_name(param_info.param)); });

// The op table against BabelStream's byte weights (src/benchmark.h) and STREAM's flop counts, and
// against the host kernels themselves: an array the row does not list as written is untouched.
TEST(StreamOpTable, WeightsAndWrittenArraysMatchTheKernels) {
  const std::vector<std::string_view> names = {"copy", "scale", "add", "triad", "dot", "read", "write"};
  const std::vector<int> arrays = {2, 2, 3, 3, 2, 1, 1}, flops = {0, 1, 1, 2, 2, 1, 0},
                         output = {2, 1, 2, 0, -1, -1, 0};
  ASSERT_EQ(stream_ops().size(), names.size());
  for (size_t i = 0; i < names.size(); ++i) {
    const StreamOpInfo& info = stream_ops()[i];
    EXPECT_EQ(static_cast<size_t>(info.op), i);
    EXPECT_EQ(info.name, names[i]);
    EXPECT_EQ(parse_stream_op(names[i]), info.op);
    EXPECT_EQ(info.arrays(), arrays[i]) << info.name;
    EXPECT_EQ(info.flops, flops[i]) << info.name;
    EXPECT_EQ(info.output(), output[i]) << info.name;
    EXPECT_EQ(info.reduction(), output[i] < 0) << info.name;
  }
  EXPECT_EQ(parse_stream_op("triads"), std::nullopt);
  const size_t n = 4099;
  for (const StreamOpInfo& info : stream_ops()) {
    std::vector<double> a(n), b(n), c(n);
    const HostStreamArrays arr{a.data(), b.data(), c.data(), n, DType::f64};
    host_stream_init(arr, 7);
    const std::vector<std::vector<double>> before = {a, b, c};
    host_stream_run(info.op, arr);
    const std::vector<std::vector<double>> after = {a, b, c};
    for (int which = 0; which < 3; ++which) {
      const bool written = (info.writes >> which) & 1u;
      const bool changed = before[static_cast<size_t>(which)] != after[static_cast<size_t>(which)];
      EXPECT_EQ(changed, written) << info.name << " array "
                                  << "abc"[which];
      if (written) {
        EXPECT_TRUE(info.uses(which)) << info.name;
      }
    }
  }
}

TEST(HostStreamVerify, DetectsOneCorruptedElement) {
  const size_t n = 1000;
  std::vector<float> a(n), b(n), c(n);
  const HostStreamArrays arr{a.data(), b.data(), c.data(), n, DType::f32};
  host_stream_init(arr, 7);
  host_stream_run(StreamOp::triad, arr);
  a[517] = std::nextafter(a[517], 10.0f);
  const std::string msg = verify_stream_output(StreamOp::triad, DType::f32, 7, a.data(), n);
  EXPECT_NE(msg.find("1 of 1000"), std::string::npos) << msg;
  EXPECT_NE(msg.find("[517]"), std::string::npos) << msg;
}

TEST(HostStreamVerify, InputsAreSeededAndNeverZero) {
  EXPECT_NE(stream_input(1, 0, 5), stream_input(2, 0, 5));
  for (uint64_t i = 0; i < 1000; ++i) {
    const double v = stream_input(99, 2, i);
    EXPECT_GE(v, 1.0);
    EXPECT_LT(v, 2.0);
  }
}

TEST(HostStream, RejectsUnsupportedDtype) {
  std::vector<int32_t> a(4), b(4), c(4);
  EXPECT_ANY_THROW(host_stream_init({a.data(), b.data(), c.data(), 4, DType::i32}, 1));
}

TEST(HostChase, VisitsEverySlotInOneCycle) {
  const size_t count = 4096, stride = 64;
  std::vector<char> buf(count * stride);
  host_chase_build(buf.data(), count, stride, 42);
  std::vector<bool> seen(count);
  void* p = buf.data();
  for (size_t i = 0; i < count; ++i) {
    const auto slot = static_cast<size_t>(static_cast<char*>(p) - buf.data()) / stride;
    ASSERT_FALSE(seen[slot]) << "slot visited twice before the cycle closed";
    seen[slot] = true;
    p = host_chase(p, 1);
  }
  EXPECT_EQ(p, buf.data());
  EXPECT_EQ(host_chase(buf.data(), count), buf.data());
}

TEST(ClassicStream, TriadComputesTheClassicLoop) {
  const size_t n = 1000;
  std::vector<double> a(n), b(n), c(n);
  classic_stream_init(a.data(), b.data(), c.data(), n);
  classic_stream_triad(a.data(), b.data(), c.data(), 3.0, n);
  for (size_t i = 0; i < n; ++i) ASSERT_EQ(a[i], 2.0);
}

}  // namespace
}  // namespace gcb::kernels
