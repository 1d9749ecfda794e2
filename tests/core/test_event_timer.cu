// The CUDA event timer itself (core/gpu_cuda.cpp) on a kernel of known length: a spin of 100 µs
// of %globaltimer. A batch of 2000 must agree with a batch of 1 per launch and finish in about
// 0.2 s (a batch enqueued whole behind the blocking kernel fills the launch queue and waits for
// the latch's 10 s timeout); a kernel never launched before must not stall the first sample
// (lazy module loading behind the latch); pageable copies are timed without the latch. Needs a
// CUDA device; without one every test skips with the reason.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <vector>

#include "core/error.hpp"
#include "core/gpu.hpp"
#include "core/harness.hpp"

namespace gcb {
namespace {

constexpr unsigned long long kSpinNs = 100'000;

__device__ unsigned long long global_ns() {
  unsigned long long t = 0;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// Spins one thread for `ns` nanoseconds of the GPU's global timer.
__global__ void spin_kernel(unsigned long long ns) {
  const unsigned long long start = global_ns();
  while (global_ns() - start < ns) {
  }
}

// The same spin, launched only by NeverLaunchedKernelDoesNotStall: with lazy loading (the default
// since CUDA 12.2) its first launch loads it.
__global__ void fresh_spin_kernel(unsigned long long ns) {
  const unsigned long long start = global_ns();
  while (global_ns() - start < ns) {
  }
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

class EventTimerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (gpu::device_count() == 0) GTEST_SKIP() << "no CUDA device: " << gpu::runtime().unavailable_reason;
    stream_ = gpu::create_stream(0);
  }
  void TearDown() override { gpu::destroy_stream(stream_); }
  cudaStream_t stream() const { return static_cast<cudaStream_t>(stream_); }
  gpu::Stream stream_ = nullptr;
};

TEST_F(EventTimerTest, BatchOfOneAndOfTwoThousandAgreePerLaunch) {
  auto timer = gpu::make_event_timer(0, stream_);
  const auto spin = [&] {
    spin_kernel<<<1, 1, 0, stream()>>>(kSpinNs);
    CUDA_CHECK(cudaGetLastError());
  };
  timer->prime(spin);
  const double one = timer->time_batch(spin, 1);
  EXPECT_FALSE(timer->latch_timed_out());
  const auto t0 = std::chrono::steady_clock::now();
  const double many = timer->time_batch(spin, 2000) / 2000;
  const double wall = seconds_since(t0);
  EXPECT_FALSE(timer->latch_timed_out());
  // 2000 × 100 µs = 0.2 s of GPU time; 2 s leaves room for a slow host, not for a 10 s latch timeout.
  EXPECT_LT(wall, 2.0);
  // Per launch: the spin plus a launch gap of a few µs; within 5 % of each other.
  EXPECT_GE(one, 1e-9 * kSpinNs);
  EXPECT_GE(many, 1e-9 * kSpinNs);
  EXPECT_NEAR(many / one, 1.0, 0.05) << "batch 1: " << one << " s, batch 2000: " << many << " s per launch";
}

TEST_F(EventTimerTest, NeverLaunchedKernelDoesNotStall) {
  auto timer = gpu::make_event_timer(0, stream_);
  HarnessOptions o;
  o.warmup = 2;
  o.min_samples = 5;
  o.max_samples = 20;
  o.min_time = 0;
  o.max_time = 5;
  o.noise = 0.05;
  o.batch = 0;  // calibrated on the first warm-up: a 10 s stall there would make the batch 1
  const auto t0 = std::chrono::steady_clock::now();
  const Measurement m = measure(
      *timer,
      [&] {
        fresh_spin_kernel<<<1, 1, 0, stream()>>>(kSpinNs);
        CUDA_CHECK(cudaGetLastError());
      },
      o);
  EXPECT_LT(seconds_since(t0), 5.0);
  EXPECT_EQ(m.latch_retakes, 0);
  EXPECT_TRUE(m.latch_timeouts.empty());
  EXPECT_GE(m.batch, 5);  // ≈ 1 ms / 100 µs
  EXPECT_NEAR(m.stats.median / (1e-9 * kSpinNs), 1.0, 0.05);
}

TEST_F(EventTimerTest, PageableCopiesAreTimedWithoutTheLatch) {
  constexpr size_t kBytes = size_t{64} << 20;
  std::vector<unsigned char> host(kBytes, 1);  // pageable: cudaMemcpyAsync stages it, host-synchronously
  void* device = gpu::device_alloc(0, kBytes);
  auto timer = gpu::make_event_timer(0, stream_, gpu::Latch::off);
  const auto copy = [&] { gpu::copy_async(device, host.data(), kBytes, gpu::CopyKind::host_to_device, stream_); };
  timer->prime(copy);
  const auto t0 = std::chrono::steady_clock::now();
  const double t = timer->time_batch(copy, 4);
  const double wall = seconds_since(t0);
  gpu::device_free(device);
  EXPECT_FALSE(timer->latch_timed_out());
  EXPECT_GT(t, 0.0);
  EXPECT_LT(wall, 5.0);  // 256 MiB over any PCIe link: well under a second
}

}  // namespace
}  // namespace gcb
