// The one place that does shard arithmetic for ZeRO partitioning. A flat tensor of n elements is
// padded to a multiple of `parts` and cut into equal contiguous shards; rank r owns
// [r·shard, (r+1)·shard). Padding (< parts elements) is zero and stays zero (its gradient is 0).
#pragma once

#include <cstddef>

namespace gcb::models {

struct ShardSpec {
  size_t full = 0;    // real elements
  size_t padded = 0;  // full rounded up to a multiple of parts
  size_t shard = 0;   // padded / parts
  int parts = 1;

  size_t begin(int rank) const { return static_cast<size_t>(rank) * shard; }
  size_t end(int rank) const { return begin(rank) + shard; }
};

inline ShardSpec make_shard_spec(size_t full, int parts) {
  const size_t p = static_cast<size_t>(parts);
  const size_t padded = (full + p - 1) / p * p;
  return ShardSpec{full, padded, padded / p, parts};
}

}  // namespace gcb::models
