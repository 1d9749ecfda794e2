// The collective operations (nccl-tests' set): names, which take a reduction, a root or an
// in-place placement, nccl-tests' bus bandwidth factors and how a requested size becomes buffers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/dtype.hpp"

namespace gcb {

enum class CollOp : uint8_t {
  all_reduce,
  all_gather,
  reduce_scatter,
  broadcast,
  reduce,
  alltoall,
  sendrecv,
  gather,
  scatter
};
std::string_view coll_op_name(CollOp op);
std::optional<CollOp> parse_coll_op(std::string_view name);
std::vector<std::string> coll_op_names();  // the canonical names, in all_coll_ops() order
const std::vector<CollOp>& all_coll_ops();
bool coll_has_redop(CollOp op);
bool coll_has_root(CollOp op);
bool coll_supports_in_place(CollOp op);

// busbw = algbw × factor, nccl-tests v2.19.6 src/*.cu and doc/PERFORMANCE.md
// (NVIDIA/nccl-tests doc/PERFORMANCE.md); n = ranks.
double busbw_factor(CollOp op, int nranks);

// How a requested size becomes buffers, as nccl-tests' *GetCollByteCount: `bytes` is the size
// column and the algbw numerator; `count` is elements per rank's part (per peer for alltoall,
// per rank block for all_gather/reduce_scatter/gather/scatter); sharded per-rank counts are
// rounded down to a multiple of 16 B. count == 0 means the size is too small for this op.
struct CollShape {
  uint64_t bytes = 0;
  size_t count = 0;         // elements per rank (per block for sharded ops)
  size_t send_count = 0;    // elements in the send buffer
  size_t recv_count = 0;    // elements in the recv buffer
  size_t column_count = 0;  // the "count (elements)" column: bytes / type size
};
CollShape coll_shape(CollOp op, uint64_t requested_bytes, DType t, int nranks);

}  // namespace gcb
