// Byte sizes on the command line and in tables. Suffixes are binary, as nccl-tests reads them:
// K = 2^10, M = 2^20, G = 2^30, T = 2^40; "KiB"/"KB"/"K" are all accepted and mean the same.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace gcb {

// A non-negative int count as a size_t (element counts and offsets from int shapes), without a
// cast at every index.
constexpr size_t sz(int v) { return static_cast<size_t>(v); }

// Throws gcb::UsageError naming the text for anything malformed ("12Q", "", "-1", "1.5.2G").
// A fractional number is accepted when the result is a whole number of bytes ("0.5K").
uint64_t parse_size(std::string_view text);
// "4 KiB", "1.5 GiB", "512 B": binary units, at most 3 significant decimals.
std::string format_bytes(double bytes);
// Geometric size sweep min, min·factor, … ≤ max (factor ≥ 2), or an arithmetic sweep when
// `increment` > 0 (nccl-tests -f / -i semantics). Always contains min; never exceeds max.
std::vector<uint64_t> size_sweep(uint64_t min, uint64_t max, uint64_t factor, uint64_t increment = 0);

}  // namespace gcb
