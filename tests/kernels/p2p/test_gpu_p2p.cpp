// The CUDA side of gcbench p2p (kernels/p2p/gpu_p2p.cu, and kernels/mem/gpu_mem.cu's SM copy writing a
// peer's memory) against the host references. Needs two CUDA devices with peer access; with
// fewer every test skips with the reason.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "core/error.hpp"
#include "kernels/mem/gpu_mem.hpp"
#include "kernels/p2p/gpu_p2p.hpp"
#include "kernels/p2p/p2p_pingpong.hpp"
#include "kernels/mem/stream_ops.hpp"

namespace gcb::kernels {
namespace {

// Skips unless devices 0 and 1 exist and can reach each other; enables peer access both ways.
#define REQUIRE_TWO_PEER_GPUS()                                          \
  do {                                                                   \
    int n = 0;                                                           \
    if (cudaGetDeviceCount(&n) != cudaSuccess || n < 2) {                \
      (void)cudaGetLastError();                                          \
      GTEST_SKIP() << "needs two CUDA devices (found " << n << ")";      \
    }                                                                    \
    int a = 0, b = 0;                                                    \
    CUDA_CHECK(cudaDeviceCanAccessPeer(&a, 0, 1));                       \
    CUDA_CHECK(cudaDeviceCanAccessPeer(&b, 1, 0));                       \
    if (!a || !b) GTEST_SKIP() << "devices 0 and 1 have no peer access"; \
    for (int d : {0, 1}) {                                               \
      CUDA_CHECK(cudaSetDevice(d));                                      \
      const cudaError_t e = cudaDeviceEnablePeerAccess(1 - d, 0);        \
      if (e == cudaErrorPeerAccessAlreadyEnabled)                        \
        (void)cudaGetLastError();                                        \
      else                                                               \
        CUDA_CHECK(e);                                                   \
    }                                                                    \
  } while (0)

void* alloc_on(int device, size_t bytes) {
  CUDA_CHECK(cudaSetDevice(device));
  void* p = nullptr;
  CUDA_CHECK(cudaMalloc(&p, bytes));
  CUDA_CHECK(cudaMemset(p, 0, bytes));
  return p;
}

TEST(GpuP2p, PingPongEndsWhereTheHostReferenceEnds) {
  REQUIRE_TWO_PEER_GPUS();
  auto* init_mem = static_cast<char*>(alloc_on(0, 64));
  auto* resp_mem = static_cast<char*>(alloc_on(1, 64));
  cudaStream_t s0{}, s1{};
  CUDA_CHECK(cudaSetDevice(0));
  CUDA_CHECK(cudaStreamCreate(&s0));
  CUDA_CHECK(cudaSetDevice(1));
  CUDA_CHECK(cudaStreamCreate(&s1));
  GpuPingPong p{0,
                1,
                reinterpret_cast<unsigned long long*>(init_mem),
                reinterpret_cast<unsigned long long*>(resp_mem),
                reinterpret_cast<long long*>(init_mem + 8),
                reinterpret_cast<int*>(init_mem + 16)};
  uint64_t base = 0;
  for (uint32_t trips : {1u, 100u, 1000u}) {
    gpu_pingpong_launch(p, base, trips, s0, s1);
    CUDA_CHECK(cudaStreamSynchronize(s0));
    CUDA_CHECK(cudaStreamSynchronize(s1));
    unsigned char host[24];
    unsigned long long resp = 0;
    CUDA_CHECK(cudaMemcpy(host, init_mem, sizeof(host), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(&resp, resp_mem, 8, cudaMemcpyDeviceToHost));
    unsigned long long init = 0;
    long long ns = 0;
    int timed_out = 0;
    std::memcpy(&init, host, 8);
    std::memcpy(&ns, host + 8, 8);
    std::memcpy(&timed_out, host + 16, 4);
    const PingPongFlags want = host_pingpong(base, trips, {base, base});
    EXPECT_EQ(timed_out, 0);
    EXPECT_EQ(init, want.initiator) << trips;
    EXPECT_EQ(resp, want.responder) << trips;
    EXPECT_GT(ns, 0);
    base += trips;
  }
  cudaStreamDestroy(s0);
  cudaStreamDestroy(s1);
  cudaFree(init_mem);
  cudaFree(resp_mem);
}

TEST(GpuP2p, SmCopyPushesIntoThePeersMemoryByteForByte) {
  REQUIRE_TWO_PEER_GPUS();
  const size_t bytes = (size_t{1} << 20) + 3;  // not a multiple of 16: the tail path runs too
  std::vector<uint8_t> want(bytes);
  for (size_t i = 0; i < bytes; ++i) want[i] = static_cast<uint8_t>(mix64(i) >> 56);
  void* src = alloc_on(0, bytes);
  void* dst = alloc_on(1, bytes);
  CUDA_CHECK(cudaMemcpy(src, want.data(), bytes, cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaSetDevice(0));
  gpu_sm_copy(dst, src, bytes, nullptr);  // a kernel on GPU 0 stores into GPU 1's memory
  CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<uint8_t> got(bytes);
  CUDA_CHECK(cudaMemcpy(got.data(), dst, bytes, cudaMemcpyDeviceToHost));
  for (size_t i = 0; i < bytes; ++i) ASSERT_EQ(got[i], want[i]) << "byte " << i;
  cudaFree(src);
  cudaFree(dst);
}

}  // namespace
}  // namespace gcb::kernels
