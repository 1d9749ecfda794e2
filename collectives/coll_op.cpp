// The collective operations: names, nccl-tests' bus bandwidth factors and size → buffer shapes.
#include "collectives/coll_op.hpp"

#include <array>

namespace gcb {

namespace {

struct OpInfo {
  CollOp op;
  std::string_view name;
  bool redop, root, in_place;
};

// in_place: nccl-tests runs in place where NCCL defines it (send == recv, or NCCL's offset
// forms for all_gather / reduce_scatter); alltoall, sendrecv, gather and scatter show N/A here.
constexpr std::array<OpInfo, 9> kOps{{
    {CollOp::all_reduce, "all_reduce", true, false, true},
    {CollOp::all_gather, "all_gather", false, false, true},
    {CollOp::reduce_scatter, "reduce_scatter", true, false, true},
    {CollOp::broadcast, "broadcast", false, true, true},
    {CollOp::reduce, "reduce", true, true, true},
    {CollOp::alltoall, "alltoall", false, false, false},
    {CollOp::sendrecv, "sendrecv", false, false, false},
    {CollOp::gather, "gather", false, true, false},
    {CollOp::scatter, "scatter", false, true, false},
}};

const OpInfo& info(CollOp op) {
  for (const auto& i : kOps)
    if (i.op == op) return i;
  return kOps[0];
}

}  // namespace

std::string_view coll_op_name(CollOp op) { return info(op).name; }

std::optional<CollOp> parse_coll_op(std::string_view name) {
  for (const auto& i : kOps)
    if (i.name == name) return i.op;
  if (name == "allreduce") return CollOp::all_reduce;
  if (name == "allgather") return CollOp::all_gather;
  if (name == "reducescatter") return CollOp::reduce_scatter;
  if (name == "all_to_all" || name == "alltoall") return CollOp::alltoall;
  return std::nullopt;
}

std::vector<std::string> coll_op_names() {
  std::vector<std::string> out;
  for (const auto& i : kOps) out.emplace_back(i.name);
  return out;
}

const std::vector<CollOp>& all_coll_ops() {
  static const std::vector<CollOp> ops = [] {
    std::vector<CollOp> v;
    for (const auto& i : kOps) v.push_back(i.op);
    return v;
  }();
  return ops;
}

bool coll_has_redop(CollOp op) { return info(op).redop; }
bool coll_has_root(CollOp op) { return info(op).root; }
bool coll_supports_in_place(CollOp op) { return info(op).in_place; }

double busbw_factor(CollOp op, int nranks) {
  const double n = nranks;
  switch (op) {
    // all_reduce: 2(n−1)/n — each element crosses 2(n−1) of n links (nccl-tests doc/PERFORMANCE.md,
    // src/all_reduce.cu AllReduceGetBw).
    case CollOp::all_reduce: return 2 * (n - 1) / n;
    // (n−1)/n: all_gather.cu, reduce_scatter.cu, alltoall.cu, gather.cu, scatter.cu *GetBw.
    case CollOp::all_gather:
    case CollOp::reduce_scatter:
    case CollOp::alltoall:
    case CollOp::gather:
    case CollOp::scatter: return (n - 1) / n;
    // 1: broadcast.cu, reduce.cu, sendrecv.cu *GetBw.
    case CollOp::broadcast:
    case CollOp::reduce:
    case CollOp::sendrecv: return 1;
  }
  return 1;
}

CollShape coll_shape(CollOp op, uint64_t requested_bytes, DType t, int nranks) {
  CollShape s;
  const size_t ts = dtype_size(t);
  const auto n = static_cast<size_t>(nranks);
  const size_t total = static_cast<size_t>(requested_bytes) / ts;
  // Sharded per-rank counts round down to a multiple of 16 B (nccl-tests *GetCollByteCount:
  // count & -(16 / eltSize)).
  const size_t align = ts >= 16 ? 1 : 16 / ts;
  const size_t shard = (total / n) / align * align;
  switch (op) {
    case CollOp::all_reduce:
    case CollOp::broadcast:
    case CollOp::reduce:
    case CollOp::sendrecv:
      s.count = total;
      s.send_count = s.recv_count = total;
      s.bytes = total * ts;
      break;
    case CollOp::all_gather:
    case CollOp::gather:
      s.count = shard;
      s.send_count = shard;
      s.recv_count = shard * n;
      s.bytes = shard * n * ts;
      break;
    case CollOp::reduce_scatter:
    case CollOp::scatter:
      s.count = shard;
      s.send_count = shard * n;
      s.recv_count = shard;
      s.bytes = shard * n * ts;
      break;
    case CollOp::alltoall:
      s.count = shard;
      s.send_count = s.recv_count = shard * n;
      s.bytes = shard * n * ts;
      break;
  }
  s.column_count = static_cast<size_t>(s.bytes) / ts;
  return s;
}

}  // namespace gcb
