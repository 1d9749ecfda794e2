// The STREAM-family kernels shared by the host and GPU implementations: which arrays each op
// reads and writes, and the seeded counter-based input values both sides compute identically
// (so the host can verify a GPU array element by element without storing a copy).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "core/hash.hpp"
#include "core/host_device.hpp"

namespace gcb::kernels {

// BabelStream's kernels (copy c=a, scale b=s·c, add c=a+b, triad a=b+s·c, dot Σa·b) plus
// read-only (Σa) and write-only (a=s). Every op is idempotent on its inputs, so repeating it in
// a timing loop leaves a result that one host pass can verify exactly.
enum class StreamOp : uint8_t { copy, scale, add, triad, dot, read, write };

std::string_view stream_op_name(StreamOp op);
std::optional<StreamOp> parse_stream_op(std::string_view name);

// Arrays read + written per element (BabelStream src/benchmark.h weights; read/write = 1).
constexpr int stream_op_arrays(StreamOp op) {
  switch (op) {
    case StreamOp::copy:
    case StreamOp::scale:
    case StreamOp::dot: return 2;
    case StreamOp::add:
    case StreamOp::triad: return 3;
    case StreamOp::read:
    case StreamOp::write: return 1;
  }
  return 0;
}

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
