// Counter-based random numbers for initialisation and synthetic data: a value depends only on
// (seed, stream, index), never on what was generated before, so a shard of a tensor can be
// generated directly and equals the same slice of the full tensor (the "seed checkpoint" property
// of torchtitan docs/converging.md, without a checkpoint). Header-only and free of library
// calls except log/sqrt/cos so a CUDA backend can use the same integer hash.
#pragma once

#include <cmath>
#include <cstdint>

#include "core/hash.hpp"

namespace gcb::models {

// SplitMix64 finaliser (core/hash.hpp): a bijective 64-bit mixer.
constexpr uint64_t mix64(uint64_t x) { return splitmix64_mix(x); }

constexpr uint64_t counter_hash(uint64_t seed, uint64_t stream, uint64_t index) {
  return mix64(mix64(mix64(seed) ^ stream) ^ index);
}

// Standard normal by Box–Muller from one 64-bit hash (two 24-bit uniforms), computed in double
// and rounded once to float.
inline float counter_normal(uint64_t seed, uint64_t stream, uint64_t index) {
  const uint64_t h = counter_hash(seed, stream, index);
  const double u1 = (static_cast<double>(h >> 40) + 1.0) * 0x1p-24;  // (0, 1]
  const double u2 = static_cast<double>((h >> 16) & 0xFFFFFFULL) * 0x1p-24;
  const double two_pi = 6.283185307179586476925286766559;
  return static_cast<float>(std::sqrt(-2.0 * std::log(u1)) * std::cos(two_pi * u2));
}

}  // namespace gcb::models
