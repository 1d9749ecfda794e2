// Host (CPU) memory kernels: the STREAM family over OpenMP threads with first-touch placement,
// and a pointer chase for latency. They are both a benchmark of host DRAM and the reference
// the GPU kernels are verified against (same op, same seeded inputs, same rounding).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "core/dtype.hpp"
#include "kernels/mem/stream_ops.hpp"

namespace gcb::kernels {

struct HostStreamArrays {
  void* a = nullptr;  // host pointers, each n elements of dtype (f64, f32 or bf16)
  void* b = nullptr;
  void* c = nullptr;
  size_t n = 0;
  DType dtype = DType::f32;
};

// Threads used by the host kernels (OpenMP's, or 1 without OpenMP).
int host_threads();
// Also require_host_threads(n).
void set_host_threads(int n);
// Starts and joins n - 1 threads; gcb::Fault (exit 3) naming the system's reason when one cannot
// be started (ulimit -u, a cgroup's pids.max), so that the OpenMP runtime does not end the
// process itself in its first parallel region (libgomp: "Thread creation failed", exit 1).
void require_host_threads(int n);

// Writes stream_input(seed, 0|1|2, i) to a, b, c with the same static partition the kernels
// use, so each page is first touched by the thread that will stream it.
void host_stream_init(const HostStreamArrays& arrays, uint64_t seed);
// One pass of `op`; returns the sum for dot and read (0 otherwise). Arithmetic as the GPU:
// element type for f64/f32, fp32 then one round-to-nearest-even for bf16. triad is b + s·c with
// s = kStreamScalar (a power of two, so s·c is exact and fma or not gives the same bits).
double host_stream_run(StreamOp op, const HostStreamArrays& arrays);
// The value element i of the output array must hold after `op` on seeded inputs.
double stream_expected(StreamOp op, DType t, uint64_t seed, size_t i);
// Which array `op` writes (0 = a, 1 = b, 2 = c), or -1 for dot and read.
int stream_output_array(StreamOp op);
// Exact expected sum for dot/read computed in long double and its error bound for an fp64
// accumulation in any order: n·2⁻⁵³·Σ|terms| (products of two ≤ 8-bit-significand inputs are
// exact in fp64, so only the additions round).
struct ExpectedSum {
  double value = 0;
  double tolerance = 0;
};
ExpectedSum stream_expected_sum(StreamOp op, DType t, uint64_t seed, size_t n);

// Compares every element of the output array with stream_expected; returns "" when all match
// exactly, else a message naming the first mismatching indices.
std::string verify_stream_output(StreamOp op, DType t, uint64_t seed, const void* output, size_t n);

// Pointer chase over `count` slots of `stride` bytes in `buffer` linked as one random cycle
// (Sattolo's algorithm, seeded). host_chase() follows `steps` dependent loads from slot 0 and
// returns the final pointer (so the loads cannot be optimised away).
void host_chase_build(void* buffer, size_t count, size_t stride, uint64_t seed);
void* host_chase(void* start, uint64_t steps);

// The classic STREAM triad loop (McCalpin's a[j] = b[j] + scalar*c[j] over static-scheduled
// OpenMP threads), compiled in its own translation unit with the same flags: the peer that
// host triad is compared with in the same run.
void classic_stream_triad(double* a, const double* b, const double* c, double scalar, size_t n);
void classic_stream_init(double* a, double* b, double* c, size_t n);

}  // namespace gcb::kernels
