// The STREAM-family kernels shared by the host and GPU implementations: which arrays each op
// reads and writes, and the seeded counter-based input values both sides compute identically
// (so the host can verify a GPU array element by element without storing a copy).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "core/hash.hpp"
#include "core/host_device.hpp"

namespace gcb::kernels {

// BabelStream's kernels (copy c=a, scale b=s·c, add c=a+b, triad a=b+s·c, dot Σa·b) plus
// read-only (Σa) and write-only (a=s). Every op is idempotent on its inputs, so repeating it in
// a timing loop leaves a result that one host pass can verify exactly.
enum class StreamOp : uint8_t { copy, scale, add, triad, dot, read, write };

// One row per op: everything the host and GPU drivers, bench/mem and the tests know about an op
// besides its loop (the loops are kernels: host_mem.cpp and gpu_mem.cu, one case per op each).
// Arrays are bits: a = 1, b = 2, c = 4.
struct StreamOpInfo {
  StreamOp op;
  std::string_view name;
  unsigned reads, writes;  // arrays read and written; reductions (dot, read) write none
  int flops;               // floating-point operations per element (STREAM's counting)
  // The element's value in exact arithmetic from a[i], b[i], c[i] and s = kStreamScalar: what
  // the op writes, or the term a reduction sums.
  double (*reference)(double a, double b, double c, double s);

  bool reduction() const { return writes == 0; }
  bool uses(int which) const { return ((reads | writes) >> which) & 1u; }
  // Arrays read + written per element (BabelStream src/benchmark.h weights; read/write = 1).
  int arrays() const;
  // The array written (0 = a, 1 = b, 2 = c), or -1 for a reduction.
  int output() const;
};

// Every op, in enum order.
const std::vector<StreamOpInfo>& stream_ops();
const StreamOpInfo& stream_op_info(StreamOp op);
std::string_view stream_op_name(StreamOp op);
std::optional<StreamOp> parse_stream_op(std::string_view name);
inline int stream_op_arrays(StreamOp op) { return stream_op_info(op).arrays(); }

// The scalar of scale, triad and write. A power of two, so s·x is exact in every float type.
inline constexpr double kStreamScalar = 0.5;

// The splitmix64 finaliser (core/hash.hpp): a well-mixed 64-bit hash of (seed, index).
GCB_HD constexpr uint64_t mix64(uint64_t x) { return splitmix64_mix(x); }

// Seeded input value of element i of array `which` (0 = a, 1 = b, 2 = c): a multiple of 1/128
// in [1, 2), exactly representable in fp64, fp32, fp16 and bf16 (8 significant bits), never zero.
GCB_HD constexpr double stream_input(uint64_t seed, int which, uint64_t i) {
  const uint64_t h = mix64(seed * 3u + static_cast<uint64_t>(which) + mix64(i));
  return 1.0 + static_cast<double>(h >> 57) / 128.0;
}

}  // namespace gcb::kernels
