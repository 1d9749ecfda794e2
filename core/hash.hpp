// The non-cryptographic hashes gcbench uses, one home each. Header-only and constexpr; the
// splitmix64 mixer is also callable from CUDA kernels (GCB_HD).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "core/host_device.hpp"

namespace gcb {

// SplitMix64 finaliser: a bijective, well-mixed 64-bit hash of x (Steele, Lea, Flood, "Fast
// Splittable Pseudorandom Number Generators", OOPSLA 2014; constants of Vigna's splitmix64.c,
// https://prng.di.unimi.it/splitmix64.c). splitmix64_mix(x) is the generator's output for the
// state x before its increment, so counter-based values (seed, index) need no state.
GCB_HD constexpr uint64_t splitmix64_mix(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// The SplitMix64 generator: the next value of the stream whose state is `state` (advanced).
GCB_HD constexpr uint64_t splitmix64_next(uint64_t& state) {
  const uint64_t out = splitmix64_mix(state);
  state += 0x9E3779B97F4A7C15ull;
  return out;
}

// 64-bit FNV-1a (Fowler, Noll, Vo; http://www.isthe.com/chongo/tech/comp/fnv/): offset basis
// and prime below. `h` continues a previous hash, so several pieces hash as their concatenation.
inline constexpr uint64_t kFnv1a64Basis = 0xcbf29ce484222325ull;
constexpr uint64_t fnv1a64(std::string_view data, uint64_t h = kFnv1a64Basis) {
  for (const char c : data) {
    h ^= static_cast<unsigned char>(c);
    h *= 0x100000001b3ull;
  }
  return h;
}

}  // namespace gcb
