// Checks the CUDA memory kernels (kernels/mem/gpu_mem.cu) against host references: every STREAM
// element exactly, sums within a stated bound, SM copies byte for byte, and the pointer chase
// as one cycle. Needs a CUDA device; without one every device test skips with the reason.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "core/dtype.hpp"
#include "core/error.hpp"
#include "kernels/mem/gpu_mem.hpp"
#include "kernels/mem/stream_ops.hpp"

namespace gcb::kernels {
namespace {

// Device memory released by scope, so a failed assertion does not leak into the next test.
class DeviceBuffer {
 public:
  explicit DeviceBuffer(size_t bytes) : bytes_(bytes) { CUDA_CHECK(cudaMalloc(&ptr_, bytes)); }
  ~DeviceBuffer() { cudaFree(ptr_); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  void* get() const { return ptr_; }
  unsigned char* bytes_ptr() const { return static_cast<unsigned char*>(ptr_); }
  size_t size() const { return bytes_; }

 private:
  void* ptr_ = nullptr;
  size_t bytes_ = 0;
};

class Stream {
 public:
  // Non-blocking: the kernels must work on an explicit stream that does not sync with stream 0.
  Stream() { CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking)); }
  ~Stream() { cudaStreamDestroy(stream_); }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  cudaStream_t get() const { return stream_; }
  void sync() const { CUDA_CHECK(cudaStreamSynchronize(stream_)); }

 private:
  cudaStream_t stream_ = nullptr;
};

class GpuMemTest : public ::testing::Test {
 protected:
  void SetUp() override {
    int n = 0;
    const cudaError_t err = cudaGetDeviceCount(&n);
    if (err != cudaSuccess || n == 0)
      GTEST_SKIP() << "no CUDA device: " << (err != cudaSuccess ? cudaGetErrorString(err) : "device count is 0");
  }
};

std::vector<unsigned char> to_host(const void* device, size_t bytes) {
  std::vector<unsigned char> host(bytes);
  CUDA_CHECK(cudaMemcpy(host.data(), device, bytes, cudaMemcpyDeviceToHost));
  return host;
}

// ---- STREAM ------------------------------------------------------------------------------

struct StreamCase {
  DType dtype;
  StreamOp op;
  int vector_bytes;
};

// Names the case in gtest and ctest output instead of dumping its bytes.
void PrintTo(const StreamCase& c, std::ostream* os) {
  *os << dtype_name(c.dtype) << " " << stream_op_name(c.op) << " " << c.vector_bytes << " B";
}

std::vector<StreamCase> all_stream_cases() {
  std::vector<StreamCase> cases;
  for (const DType t : {DType::f64, DType::f32, DType::bf16})
    for (const StreamOp op : {StreamOp::copy, StreamOp::scale, StreamOp::add, StreamOp::triad, StreamOp::dot,
                              StreamOp::read, StreamOp::write})
      for (const int vb : {4, 8, 16})
        if (static_cast<size_t>(vb) >= dtype_size(t)) cases.push_back({t, op, vb});
  return cases;
}

// Element i of the op's output as the host computes it, in the element type's own arithmetic
// (bf16: fp32, then one round to nearest even), mirroring what kernels/mem/gpu_mem.cu promises.
double reference_element(DType t, StreamOp op, double a, double b, double c) {
  if (t == DType::f64) {
    switch (op) {
      case StreamOp::copy: return a;
      case StreamOp::scale: return kStreamScalar * c;
      case StreamOp::add: return a + b;
      case StreamOp::triad: return std::fma(kStreamScalar, c, b);
      default: return kStreamScalar;  // write
    }
  }
  const auto s = static_cast<float>(kStreamScalar);
  const auto af = static_cast<float>(a), bf = static_cast<float>(b), cf = static_cast<float>(c);
  float r = s;  // write
  switch (op) {
    case StreamOp::copy: r = af; break;
    case StreamOp::scale: r = s * cf; break;
    case StreamOp::add: r = af + bf; break;
    case StreamOp::triad: r = std::fma(s, cf, bf); break;
    default: break;
  }
  return t == DType::bf16 ? static_cast<double>(bf16_to_float(float_to_bf16(r))) : static_cast<double>(r);
}

// Index of the array each element-wise op writes (0 = a, 1 = b, 2 = c).
int output_array(StreamOp op) {
  switch (op) {
    case StreamOp::scale: return 1;
    case StreamOp::copy:
    case StreamOp::add: return 2;
    default: return 0;  // triad, write
  }
}

// Compares element by element as raw bytes (so -0 vs +0 and NaN poison both count), and names
// the first few offending indices.
::testing::AssertionResult arrays_equal(DType t, const std::vector<unsigned char>& got,
                                        const std::vector<unsigned char>& want, size_t n, const char* what) {
  const size_t width = dtype_size(t);
  size_t wrong = 0;
  std::string first;
  for (size_t i = 0; i < n; ++i) {
    if (std::memcmp(got.data() + i * width, want.data() + i * width, width) == 0) continue;
    if (++wrong <= 5)
      first += " [" + std::to_string(i) + "] got " + std::to_string(load_as(t, got.data(), i)) + " want " +
               std::to_string(load_as(t, want.data(), i)) + ";";
  }
  if (wrong == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << what << ": " << wrong << " of " << n << " elements differ:" << first;
}

class GpuStreamTest : public GpuMemTest, public ::testing::WithParamInterface<StreamCase> {};

TEST_P(GpuStreamTest, MatchesHostReferenceOnEveryElement) {
  const StreamCase tc = GetParam();
  // Not a multiple of any vector width, so the scalar tail runs too.
  const size_t n = (size_t{1} << 20) + 37;
  const uint64_t seed = 0x5EED'0001;
  const size_t width = dtype_size(tc.dtype);
  const size_t bytes = n * width;

  DeviceBuffer a(bytes), b(bytes), c(bytes), sum(gpu_stream_sum_bytes(0));
  // Zeroed once, as its contract says; both passes below must then give the sum with no memset.
  CUDA_CHECK(cudaMemset(sum.get(), 0, sum.size()));
  const DeviceBuffer* device_arrays[3] = {&a, &b, &c};
  Stream stream;
  const GpuStreamArrays arrays{a.get(), b.get(), c.get(), n, tc.dtype};

  // Initial values as the host sees them; the GPU init must produce exactly these.
  std::vector<unsigned char> init[3];
  for (int which = 0; which < 3; ++which) {
    init[which].resize(bytes);
    for (size_t i = 0; i < n; ++i) store_as(tc.dtype, init[which].data(), i, stream_input(seed, which, i));
  }
  gpu_stream_init(arrays, seed, stream.get());
  stream.sync();
  for (int which = 0; which < 3; ++which)
    ASSERT_TRUE(arrays_equal(tc.dtype, to_host(device_arrays[which]->get(), bytes), init[which], n, "gpu_stream_init"));

  const bool reduction = tc.op == StreamOp::dot || tc.op == StreamOp::read;
  std::vector<unsigned char> expected[3] = {init[0], init[1], init[2]};
  double expected_sum = 0.0, sum_of_magnitudes = 0.0;
  if (reduction) {
    for (size_t i = 0; i < n; ++i) {
      const double term = tc.op == StreamOp::dot
                              ? load_as(tc.dtype, init[0].data(), i) * load_as(tc.dtype, init[1].data(), i)
                              : load_as(tc.dtype, init[0].data(), i);
      expected_sum += term;
      sum_of_magnitudes += std::fabs(term);
    }
  } else {
    auto& out = expected[output_array(tc.op)];
    for (size_t i = 0; i < n; ++i)
      store_as(tc.dtype, out.data(), i,
               reference_element(tc.dtype, tc.op, load_as(tc.dtype, init[0].data(), i),
                                 load_as(tc.dtype, init[1].data(), i), load_as(tc.dtype, init[2].data(), i)));
  }

  // Two passes: every op is idempotent on its inputs, so the second must give the same answer
  // (a pass that clobbered an input would show here). Poisoning (0xFF bytes: NaN in every
  // float type) before each pass makes an element the kernel skipped fail the comparison.
  for (int pass = 0; pass < 2; ++pass) {
    SCOPED_TRACE("pass " + std::to_string(pass));
    if (reduction)
      CUDA_CHECK(cudaMemsetAsync(sum.get(), 0xFF, sizeof(double), stream.get()));
    else
      CUDA_CHECK(cudaMemsetAsync(device_arrays[output_array(tc.op)]->get(), 0xFF, bytes, stream.get()));
    gpu_stream_launch(tc.op, arrays, tc.vector_bytes, sum.get(), stream.get());
    stream.sync();

    // All three arrays: the output must match the reference, the others must be untouched.
    for (int which = 0; which < 3; ++which)
      EXPECT_TRUE(
          arrays_equal(tc.dtype, to_host(device_arrays[which]->get(), bytes), expected[which], n, "array after the op"))
          << "array "
          << "abc"[which];
    if (reduction) {
      double got = 0.0;
      CUDA_CHECK(cudaMemcpy(&got, sum.get(), sizeof(double), cudaMemcpyDeviceToHost));
      // The GPU adds in another order (per thread, warp tree, block tree, then the block
      // partials in block order). Any order of n-1 fp64 additions is within (n-1)·u·Σ|terms| of the exact sum
      // (u = 2^-53, Higham's recursive-summation bound), and so is the host's sequential sum.
      // (With these inputs every partial sum is exact, so the error is in fact 0.)
      const double tolerance = static_cast<double>(n) * std::ldexp(1.0, -53) * sum_of_magnitudes;
      EXPECT_NEAR(got, expected_sum, tolerance);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(AllTypesOpsWidths, GpuStreamTest, ::testing::ValuesIn(all_stream_cases()),
                         [](const ::testing::TestParamInfo<StreamCase>& case_info) {  // not `info`: -Wshadow
                           const StreamCase& c = case_info.param;
                           return std::string(dtype_name(c.dtype)) + "_" + std::string(stream_op_name(c.op)) + "_v" +
                                  std::to_string(c.vector_bytes);
                         });

// Argument checks come before any CUDA call, so these run without a device too.
TEST(GpuStreamArguments, RejectsVectorNarrowerThanElementOrOddWidth) {
  const GpuStreamArrays f64_arrays{nullptr, nullptr, nullptr, 0, DType::f64};
  EXPECT_THROW(gpu_stream_launch(StreamOp::copy, f64_arrays, 4, nullptr, nullptr), UsageError);
  const GpuStreamArrays f32_arrays{nullptr, nullptr, nullptr, 0, DType::f32};
  EXPECT_THROW(gpu_stream_launch(StreamOp::copy, f32_arrays, 12, nullptr, nullptr), UsageError);
  const GpuStreamArrays f16_arrays{nullptr, nullptr, nullptr, 0, DType::f16};
  EXPECT_THROW(gpu_stream_launch(StreamOp::copy, f16_arrays, 8, nullptr, nullptr), UsageError);
}

TEST(GpuChaseArguments, RejectsStrideThatCannotHoldAPointer) {
  alignas(8) unsigned char slot[64] = {};
  EXPECT_THROW(gpu_chase_build(slot, 8, 4, 1), Fault);
}

// ---- SM copy -----------------------------------------------------------------------------

// Copies `bytes` from src+src_offset to dst+dst_offset and checks the copied range byte for
// byte and the guard bytes around it untouched.
void check_sm_copy(void* dst_base, size_t dst_size, size_t dst_offset, size_t src_offset, size_t bytes) {
  SCOPED_TRACE("bytes " + std::to_string(bytes) + ", dst+" + std::to_string(dst_offset) + ", src+" +
               std::to_string(src_offset));
  std::vector<unsigned char> pattern(src_offset + bytes);
  for (size_t i = 0; i < pattern.size(); ++i)
    pattern[i] = static_cast<unsigned char>(mix64(i) & 0x7Fu);  // never 0xFF, the poison
  DeviceBuffer src(pattern.size());
  CUDA_CHECK(cudaMemcpy(src.get(), pattern.data(), pattern.size(), cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemset(dst_base, 0xFF, dst_size));

  Stream stream;
  gpu_sm_copy(static_cast<unsigned char*>(dst_base) + dst_offset, src.bytes_ptr() + src_offset, bytes, stream.get());
  stream.sync();

  const std::vector<unsigned char> got = to_host(dst_base, dst_size);
  size_t wrong = 0, first_wrong = 0;
  for (size_t i = 0; i < dst_size; ++i) {
    const bool inside = i >= dst_offset && i < dst_offset + bytes;
    const unsigned char want = inside ? pattern[src_offset + i - dst_offset] : 0xFF;
    if (got[i] != want && wrong++ == 0) first_wrong = i;
  }
  EXPECT_EQ(wrong, 0u) << "first wrong byte at dst[" << first_wrong << "]";
}

TEST_F(GpuMemTest, SmCopyAlignedAndUnaligned) {
  const size_t size = (size_t{1} << 20) + 64;
  DeviceBuffer dst(size);
  check_sm_copy(dst.get(), size, 0, 0, size_t{1} << 20);          // all 16-byte vectors
  check_sm_copy(dst.get(), size, 16, 32, (size_t{1} << 20) + 5);  // vectors + byte tail
  check_sm_copy(dst.get(), size, 3, 0, (size_t{1} << 20) + 7);    // dst unaligned: bytes
  check_sm_copy(dst.get(), size, 0, 1, 4096);                     // src unaligned: bytes
  check_sm_copy(dst.get(), size, 5, 9, 1);                        // a single byte
}

TEST_F(GpuMemTest, SmCopyIntoMappedPinnedHostMemory) {
  const size_t bytes = (size_t{1} << 16) + 3;
  std::vector<unsigned char> pattern(bytes);
  for (size_t i = 0; i < bytes; ++i) pattern[i] = static_cast<unsigned char>(mix64(i + 7));
  DeviceBuffer src(bytes);
  CUDA_CHECK(cudaMemcpy(src.get(), pattern.data(), bytes, cudaMemcpyHostToDevice));

  void* host = nullptr;
  CUDA_CHECK(cudaHostAlloc(&host, bytes, cudaHostAllocMapped));
  std::memset(host, 0, bytes);
  void* host_on_device = nullptr;
  CUDA_CHECK(cudaHostGetDevicePointer(&host_on_device, host, 0));
  Stream stream;
  gpu_sm_copy(host_on_device, src.get(), bytes, stream.get());
  stream.sync();
  EXPECT_EQ(std::memcmp(host, pattern.data(), bytes), 0);
  CUDA_CHECK(cudaFreeHost(host));
}

// ---- pointer chase -----------------------------------------------------------------------

TEST_F(GpuMemTest, ChaseIsOneCycleThroughEverySlot) {
  const size_t count = 1000, stride = 64;
  DeviceBuffer buffer(count * stride);
  gpu_chase_build(buffer.get(), count, stride, 42);

  // Host walk of the chain as built: every address is a slot start inside the buffer, and the
  // walk meets every slot once before it comes back to slot 0.
  const std::vector<unsigned char> host = to_host(buffer.get(), buffer.size());
  const auto base = static_cast<uint64_t>(reinterpret_cast<uintptr_t>(buffer.get()));
  std::vector<bool> seen(count, false);
  size_t slot = 0, steps = 0;
  uint64_t first_next = 0;
  do {
    ASSERT_FALSE(seen[slot]) << "slot " << slot << " visited twice: more than one cycle";
    seen[slot] = true;
    uint64_t next = 0;
    std::memcpy(&next, host.data() + slot * stride, sizeof(next));
    if (steps == 0) first_next = next;
    ASSERT_GE(next, base);
    ASSERT_LT(next, base + count * stride);
    ASSERT_EQ((next - base) % stride, 0u);
    slot = static_cast<size_t>((next - base) / stride);
    ++steps;
  } while (slot != 0);
  EXPECT_EQ(steps, count);

  DeviceBuffer sink(sizeof(void*)), cycles(sizeof(long long));
  Stream stream;
  const auto chase = [&](uint64_t n_steps) {
    CUDA_CHECK(cudaMemsetAsync(sink.get(), 0, sizeof(void*), stream.get()));
    gpu_chase_launch(buffer.get(), n_steps, static_cast<void**>(sink.get()), static_cast<long long*>(cycles.get()),
                     stream.get());
    stream.sync();
    void* end = nullptr;
    long long elapsed = 0;
    CUDA_CHECK(cudaMemcpy(&end, sink.get(), sizeof(end), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(&elapsed, cycles.get(), sizeof(elapsed), cudaMemcpyDeviceToHost));
    return std::pair{static_cast<uint64_t>(reinterpret_cast<uintptr_t>(end)), elapsed};
  };

  const auto [after_one, one_cycles] = chase(1);
  EXPECT_EQ(after_one, first_next);
  const auto [after_count, count_cycles] = chase(count);
  EXPECT_EQ(after_count, base) << "a full lap of one cycle returns to the start";
  EXPECT_GT(count_cycles, 0);
  EXPECT_GT(one_cycles, 0);
}

}  // namespace
}  // namespace gcb::kernels
