// MpiCommunicator. Large reductions are "reduce-scatter by MPI_Alltoallv + rank-order host
// reduction of my block, then MPI_Allgatherv / MPI_Gatherv": the same bytes on the wire as a
// ring, a block-sized scratch, and the exact operation order of ThreadCommunicator. Small ones
// are one MPI_Allgather (MPI_Gather for reduce) of the whole buffers and a local rank-order
// reduction: one latency instead of two, the same result bit for bit.
#include "collectives/mpi_communicator.hpp"

#include <climits>
#include <cstring>
#include <fmt/format.h>

#include "core/error.hpp"
#include "core/watchdog.hpp"

namespace gcb {

namespace {

[[noreturn, gnu::cold, gnu::noinline]] void count_too_large(size_t n, const char* what) {
  throw UsageError(fmt::format("{} of {} elements exceeds MPI's int count limit", what, n));
}

// Inline: it is on the path of every call, the bare MPI call it is compared with has nothing like it.
inline int to_int(size_t n, const char* what) {
  if (n > static_cast<size_t>(INT_MAX)) [[unlikely]]
    count_too_large(n, what);
  return static_cast<int>(n);
}

std::byte* at(void* base, size_t offset) { return static_cast<std::byte*>(base) + offset; }
const std::byte* at(const void* base, size_t offset) { return static_cast<const std::byte*>(base) + offset; }

// The calls as an application makes them, their arguments resolved: a method below builds one
// and runs it at once (inside its watch scope), bind() builds one per timed loop. `how` is the
// MPI type and op of a reduction (MpiCommunicator::library_reduction).
using Reduction = std::pair<MPI_Datatype, MPI_Op>;

auto all_reduce_call(const void* send, void* recv, int count, Reduction how, DType t, ReduceOp op, int size,
                     MPI_Comm comm) {
  const void* in = send == recv ? MPI_IN_PLACE : send;
  const bool avg = op == ReduceOp::avg;
  return [=] {
    MPI_CHECK(MPI_Allreduce(in, recv, count, how.first, how.second, comm));
    if (avg) finish_reduction(t, ReduceOp::avg, recv, static_cast<size_t>(count), size);
  };
}

auto reduce_scatter_call(const void* send, void* recv, int count, Reduction how, DType t, ReduceOp op, int rank,
                         int size, MPI_Comm comm) {
  const size_t bytes = static_cast<size_t>(count) * dtype_size(t);
  auto* mine = static_cast<std::byte*>(recv);
  // In place the NCCL way (recv = send + rank·count); MPI's in-place form leaves the result at
  // the start of the buffer instead.
  const bool in_place = mine == at(send, static_cast<size_t>(rank) * bytes);
  auto* whole = const_cast<std::byte*>(static_cast<const std::byte*>(send));
  const bool move = in_place && rank != 0 && bytes > 0, avg = op == ReduceOp::avg;
  return [=] {
    if (in_place)
      MPI_CHECK(MPI_Reduce_scatter_block(MPI_IN_PLACE, whole, count, how.first, how.second, comm));
    else
      MPI_CHECK(MPI_Reduce_scatter_block(send, recv, count, how.first, how.second, comm));
    if (move) std::memmove(mine, whole, bytes);
    if (avg) finish_reduction(t, ReduceOp::avg, recv, static_cast<size_t>(count), size);
  };
}

auto reduce_call(const void* send, void* recv, int count, Reduction how, DType t, ReduceOp op, int root, int rank,
                 int size, MPI_Comm comm) {
  const bool is_root = rank == root;
  const void* in = is_root && send == recv ? MPI_IN_PLACE : send;
  void* out = is_root ? recv : nullptr;
  const bool avg = is_root && op == ReduceOp::avg;
  return [=] {
    MPI_CHECK(MPI_Reduce(in, out, count, how.first, how.second, root, comm));
    if (avg) finish_reduction(t, ReduceOp::avg, out, static_cast<size_t>(count), size);
  };
}

auto all_gather_call(const void* send, void* recv, int count, MPI_Datatype type, size_t element, int rank,
                     MPI_Comm comm) {
  const bool in_place =
      send == at(static_cast<const void*>(recv), static_cast<size_t>(rank) * static_cast<size_t>(count) * element);
  const void* in = in_place ? MPI_IN_PLACE : send;
  return [=] { MPI_CHECK(MPI_Allgather(in, count, type, recv, count, type, comm)); };
}

auto broadcast_call(const void* send, void* recv, int count, MPI_Datatype type, size_t element, int root, int rank,
                    MPI_Comm comm) {
  // The root's data starts in send: MPI_Bcast is in place, so it moves to recv first.
  const size_t copy = rank == root && send != recv ? static_cast<size_t>(count) * element : 0;
  return [=] {
    if (copy > 0) std::memcpy(recv, send, copy);
    MPI_CHECK(MPI_Bcast(recv, count, type, root, comm));
  };
}

auto all_to_all_call(const void* send, void* recv, int count, MPI_Datatype type, MPI_Comm comm) {
  const void* in = send == recv ? MPI_IN_PLACE : send;
  return [=] { MPI_CHECK(MPI_Alltoall(in, count, type, recv, count, type, comm)); };
}

// The scope a caller of bind()'s launches holds around each batch of them.
constexpr const char* kBoundWatch = "MPI collectives";

// count elements split as evenly as possible, the first count % n ranks one element more.
void partition(size_t count, int n, std::vector<int>& counts, std::vector<int>& displs) {
  counts.assign(static_cast<size_t>(n), 0);
  displs.assign(static_cast<size_t>(n), 0);
  const size_t base = count / static_cast<size_t>(n);
  const size_t extra = count % static_cast<size_t>(n);
  size_t offset = 0;
  for (size_t r = 0; r < static_cast<size_t>(n); ++r) {
    const size_t c = base + (r < extra ? 1 : 0);
    counts[r] = to_int(c, "block");
    displs[r] = to_int(offset, "offset");
    offset += c;
  }
}

// MPI_User_function for fp16/bf16 (MPI has no such types): inout[i] = in[i] (op) inout[i], in
// fp32 with a rounding after the step, as reduce_into() does. Commutative, so argument order is
// immaterial.
template <DType T, ReduceOp Op>
void user_reduce(void* in, void* inout, int* len, MPI_Datatype*) {
  reduce_into(T, Op, inout, in, static_cast<size_t>(*len));
}

template <DType T>
MPI_User_function* user_function(ReduceOp op) {
  switch (op) {
    case ReduceOp::prod: return &user_reduce<T, ReduceOp::prod>;
    case ReduceOp::min: return &user_reduce<T, ReduceOp::min>;
    case ReduceOp::max: return &user_reduce<T, ReduceOp::max>;
    case ReduceOp::sum:
    case ReduceOp::avg: break;
  }
  return &user_reduce<T, ReduceOp::sum>;
}

MPI_Op native_op(ReduceOp op) {
  switch (op) {
    case ReduceOp::prod: return MPI_PROD;
    case ReduceOp::min: return MPI_MIN;
    case ReduceOp::max: return MPI_MAX;
    case ReduceOp::sum:
    case ReduceOp::avg: break;
  }
  return MPI_SUM;
}

bool mpi_finalized() {
  int done = 0;
  MPI_Finalized(&done);
  return done != 0;
}

}  // namespace

MpiCommunicator::MpiCommunicator(MPI_Comm comm, bool owned, ReductionOrder order)
    : comm_(comm), owned_(owned), order_(order) {
  MPI_CHECK(MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN));
  MPI_CHECK(MPI_Comm_rank(comm_, &rank_));
  MPI_CHECK(MPI_Comm_size(comm_, &size_));
}

MpiCommunicator::~MpiCommunicator() {
  // After MPI_Finalize nothing may be freed; the runtime has released it all anyway.
  if (mpi_finalized()) return;
  for (auto& [bytes, type] : types_) MPI_Type_free(&type);
  for (auto& [key, op] : user_ops_) MPI_Op_free(&op);
  if (owned_) MPI_Comm_free(&comm_);
}

// The fast paths below are inline: every library-order call passes through them, and the bare
// MPI call it is compared with (bench/coll/coll_peers.cpp) takes a fraction of a microsecond.
inline MPI_Datatype MpiCommunicator::element_type(DType t) {
  // A predefined type of the element's size: what a bare MPI program passes. A committed
  // contiguous type of N bytes moves the same data but is a derived type to the library, whose
  // handling is not free on calls that last a fraction of a microsecond.
  if (t == DType::f32) return MPI_FLOAT;
  if (t == DType::f64) return MPI_DOUBLE;
  switch (dtype_size(t)) {
    case 1: return MPI_UINT8_T;
    case 2: return MPI_UINT16_T;
    case 4: return MPI_UINT32_T;
    case 8: return MPI_UINT64_T;
    default: break;
  }
  return derived_type(dtype_size(t));
}

MPI_Datatype MpiCommunicator::derived_type(size_t bytes) {
  for (const auto& [b, type] : types_)
    if (b == bytes) return type;
  MPI_Datatype type = MPI_DATATYPE_NULL;
  MPI_CHECK(MPI_Type_contiguous(static_cast<int>(bytes), MPI_BYTE, &type));
  MPI_CHECK(MPI_Type_commit(&type));
  types_.emplace_back(bytes, type);
  return type;
}

inline std::pair<MPI_Datatype, MPI_Op> MpiCommunicator::library_reduction(DType t, ReduceOp op) {
  switch (t) {
    case DType::f64: return {MPI_DOUBLE, native_op(op)};
    case DType::f32: return {MPI_FLOAT, native_op(op)};
    case DType::i32: return {MPI_INT32_T, native_op(op)};
    case DType::i8: return {MPI_INT8_T, native_op(op)};
    default: return user_reduction(t, op);
  }
}

std::pair<MPI_Datatype, MPI_Op> MpiCommunicator::user_reduction(DType t, ReduceOp op) {
  if (t != DType::f16 && t != DType::bf16)
    throw UsageError(fmt::format("the MPI backend cannot reduce {}", dtype_name(t)));
  const ReduceOp combined = op == ReduceOp::avg ? ReduceOp::sum : op;
  const int key = static_cast<int>(t) * 16 + static_cast<int>(combined);
  for (const auto& [k, mpi_op] : user_ops_)
    if (k == key) return {element_type(t), mpi_op};
  MPI_Op mpi_op = MPI_OP_NULL;
  MPI_CHECK(MPI_Op_create(t == DType::f16 ? user_function<DType::f16>(combined) : user_function<DType::bf16>(combined),
                          /*commute=*/1, &mpi_op));
  user_ops_.emplace_back(key, mpi_op);
  return {element_type(t), mpi_op};
}

void MpiCommunicator::reduce_my_block(const void* send, const std::vector<int>& counts, const std::vector<int>& displs,
                                      void* out, DType t, ReduceOp op) {
  const size_t es = dtype_size(t);
  const int mine = counts[static_cast<size_t>(rank_)];
  const size_t block_bytes = static_cast<size_t>(mine) * es;
  scratch_.resize(block_bytes * static_cast<size_t>(size_));
  std::vector<int> recv_counts(static_cast<size_t>(size_), mine);
  std::vector<int> recv_displs(static_cast<size_t>(size_));
  for (int s = 0; s < size_; ++s)
    recv_displs[static_cast<size_t>(s)] = to_int(static_cast<size_t>(s) * static_cast<size_t>(mine), "offset");
  const MPI_Datatype type = element_type(t);
  MPI_CHECK(MPI_Alltoallv(send, counts.data(), displs.data(), type, scratch_.data(), recv_counts.data(),
                          recv_displs.data(), type, comm_));
  // scratch_ block s is rank s's contribution to my block: reduce in rank order.
  if (block_bytes > 0) std::memcpy(out, scratch_.data(), block_bytes);
  for (int s = 1; s < size_; ++s)
    reduce_into(t, op, out, at(scratch_.data(), static_cast<size_t>(s) * block_bytes), static_cast<size_t>(mine));
  finish_reduction(t, op, out, static_cast<size_t>(mine), size_);
}

void MpiCommunicator::gather_reduce(const void* send, size_t count, size_t first, size_t n, void* out, DType t,
                                    ReduceOp op, int root) {
  const size_t es = dtype_size(t), bytes = count * es;
  const int c = to_int(count, "gathered block");
  const MPI_Datatype type = element_type(t);
  scratch_.resize(bytes * static_cast<size_t>(size_));
  if (root < 0) {
    MPI_CHECK(MPI_Allgather(send, c, type, scratch_.data(), c, type, comm_));
  } else {
    MPI_CHECK(MPI_Gather(send, c, type, scratch_.data(), c, type, root, comm_));
    if (rank_ != root) return;
  }
  // Contribution s sits at s·bytes: the same rank order, element by element, as the large path.
  if (n > 0) std::memcpy(out, at(scratch_.data(), first * es), n * es);
  for (int s = 1; s < size_; ++s)
    reduce_into(t, op, out, at(scratch_.data(), static_cast<size_t>(s) * bytes + first * es), n);
  finish_reduction(t, op, out, n, size_);
}

void MpiCommunicator::all_reduce(const void* send, void* recv, size_t count, DType t, ReduceOp op) {
  const WatchScope watch("MPI all_reduce");
  if (order_ != ReductionOrder::library) return ranked_all_reduce(send, recv, count, t, op);
  all_reduce_call(send, recv, to_int(count, "all_reduce"), library_reduction(t, op), t, op, size_, comm_)();
}

void MpiCommunicator::ranked_all_reduce(const void* send, void* recv, size_t count, DType t, ReduceOp op) {
  if (count * dtype_size(t) <= kSmallReductionBytes) {
    gather_reduce(send, count, 0, count, recv, t, op);
    return;
  }
  std::vector<int> counts, displs;
  partition(count, size_, counts, displs);
  std::vector<std::byte> block(static_cast<size_t>(counts[static_cast<size_t>(rank_)]) * dtype_size(t));
  reduce_my_block(send, counts, displs, block.data(), t, op);
  const MPI_Datatype type = element_type(t);
  MPI_CHECK(MPI_Allgatherv(block.data(), counts[static_cast<size_t>(rank_)], type, recv, counts.data(), displs.data(),
                           type, comm_));
}

void MpiCommunicator::reduce_scatter(const void* send, void* recv, size_t count, DType t, ReduceOp op) {
  const WatchScope watch("MPI reduce_scatter");
  if (order_ != ReductionOrder::library) return ranked_reduce_scatter(send, recv, count, t, op);
  reduce_scatter_call(send, recv, to_int(count, "reduce_scatter block"), library_reduction(t, op), t, op, rank_, size_,
                      comm_)();
}

void MpiCommunicator::ranked_reduce_scatter(const void* send, void* recv, size_t count, DType t, ReduceOp op) {
  const size_t total = count * static_cast<size_t>(size_);
  if (total * dtype_size(t) <= kSmallReductionBytes) {
    // In place (recv = send + rank·count) is safe: the gather has read send before we write.
    gather_reduce(send, total, static_cast<size_t>(rank_) * count, count, recv, t, op);
    return;
  }
  const int c = to_int(count, "reduce_scatter block");
  std::vector<int> counts(static_cast<size_t>(size_), c);
  std::vector<int> displs(static_cast<size_t>(size_));
  for (int r = 0; r < size_; ++r) displs[static_cast<size_t>(r)] = to_int(static_cast<size_t>(r) * count, "offset");
  // In place (recv = send + rank·count) is safe: the all-to-all has read send before we write.
  reduce_my_block(send, counts, displs, recv, t, op);
}

void MpiCommunicator::reduce(const void* send, void* recv, size_t count, DType t, ReduceOp op, int root) {
  const WatchScope watch("MPI reduce");
  if (order_ != ReductionOrder::library) return ranked_reduce(send, recv, count, t, op, root);
  reduce_call(send, recv, to_int(count, "reduce"), library_reduction(t, op), t, op, root, rank_, size_, comm_)();
}

void MpiCommunicator::ranked_reduce(const void* send, void* recv, size_t count, DType t, ReduceOp op, int root) {
  if (count * dtype_size(t) <= kSmallReductionBytes) {
    gather_reduce(send, count, 0, count, recv, t, op, root);
    return;
  }
  std::vector<int> counts, displs;
  partition(count, size_, counts, displs);
  std::vector<std::byte> block(static_cast<size_t>(counts[static_cast<size_t>(rank_)]) * dtype_size(t));
  reduce_my_block(send, counts, displs, block.data(), t, op);
  const MPI_Datatype type = element_type(t);
  MPI_CHECK(MPI_Gatherv(block.data(), counts[static_cast<size_t>(rank_)], type, rank_ == root ? recv : nullptr,
                        counts.data(), displs.data(), type, root, comm_));
}

void MpiCommunicator::all_gather(const void* send, void* recv, size_t count, DType t) {
  const WatchScope watch("MPI all_gather");
  all_gather_call(send, recv, to_int(count, "all_gather block"), element_type(t), dtype_size(t), rank_, comm_)();
}

void MpiCommunicator::broadcast(const void* send, void* recv, size_t count, DType t, int root) {
  const WatchScope watch("MPI broadcast");
  broadcast_call(send, recv, to_int(count, "broadcast"), element_type(t), dtype_size(t), root, rank_, comm_)();
}

void MpiCommunicator::all_to_all(const void* send, void* recv, size_t count, DType t) {
  const WatchScope watch("MPI all_to_all");
  all_to_all_call(send, recv, to_int(count, "all_to_all block"), element_type(t), comm_)();
}

BoundCall MpiCommunicator::bind(const CollCall& c) {
  const bool library = order_ == ReductionOrder::library;
  const DType t = c.dtype;
  switch (c.op) {
    case CollOp::all_reduce:
      if (!library) break;
      return bound_loop(all_reduce_call(c.send, c.recv, to_int(c.count, "all_reduce"), library_reduction(t, c.redop), t,
                                        c.redop, size_, comm_),
                        kBoundWatch);
    case CollOp::reduce_scatter:
      if (!library) break;
      return bound_loop(reduce_scatter_call(c.send, c.recv, to_int(c.count, "reduce_scatter block"),
                                            library_reduction(t, c.redop), t, c.redop, rank_, size_, comm_),
                        kBoundWatch);
    case CollOp::reduce:
      if (!library) break;
      return bound_loop(reduce_call(c.send, c.recv, to_int(c.count, "reduce"), library_reduction(t, c.redop), t,
                                    c.redop, c.root, rank_, size_, comm_),
                        kBoundWatch);
    // Data movement is the library's call in either order.
    case CollOp::all_gather:
      return bound_loop(all_gather_call(c.send, c.recv, to_int(c.count, "all_gather block"), element_type(t),
                                        dtype_size(t), rank_, comm_),
                        kBoundWatch);
    case CollOp::broadcast:
      return bound_loop(broadcast_call(c.send, c.recv, to_int(c.count, "broadcast"), element_type(t), dtype_size(t),
                                       c.root, rank_, comm_),
                        kBoundWatch);
    case CollOp::alltoall:
      return bound_loop(all_to_all_call(c.send, c.recv, to_int(c.count, "all_to_all block"), element_type(t), comm_),
                        kBoundWatch);
    default: break;
  }
  return Communicator::bind(c);  // rank-ordered reductions: the methods, as every call
}

void MpiCommunicator::barrier() {
  const WatchScope watch("MPI barrier");
  MPI_CHECK(MPI_Barrier(comm_));
}

void MpiCommunicator::group_start() { ++group_depth_; }

void MpiCommunicator::group_end() {
  const WatchScope watch("MPI group_end");
  GCB_CHECK(group_depth_ > 0, "group_end() without group_start()");
  if (--group_depth_ > 0) return;
  std::vector<MPI_Request> requests;
  requests.swap(pending_);
  if (!requests.empty())
    MPI_CHECK(MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE));
}

void MpiCommunicator::send(const void* buf, size_t count, DType t, int peer) {
  const WatchScope watch("MPI send");
  const int c = to_int(count, "send");
  if (group_depth_ > 0) {
    MPI_Request request = MPI_REQUEST_NULL;
    MPI_CHECK(MPI_Isend(buf, c, element_type(t), peer, 0, comm_, &request));
    pending_.push_back(request);
  } else {
    MPI_CHECK(MPI_Send(buf, c, element_type(t), peer, 0, comm_));
  }
}

void MpiCommunicator::recv(void* buf, size_t count, DType t, int peer) {
  const WatchScope watch("MPI recv");
  const int c = to_int(count, "recv");
  if (group_depth_ > 0) {
    MPI_Request request = MPI_REQUEST_NULL;
    MPI_CHECK(MPI_Irecv(buf, c, element_type(t), peer, 0, comm_, &request));
    pending_.push_back(request);
  } else {
    MPI_CHECK(MPI_Recv(buf, c, element_type(t), peer, 0, comm_, MPI_STATUS_IGNORE));
  }
}

ThreadSupport MpiCommunicator::thread_support() const {
  int level = MPI_THREAD_SINGLE;
  MPI_CHECK(MPI_Query_thread(&level));
  if (level >= MPI_THREAD_MULTIPLE) return ThreadSupport::concurrent;
  return level >= MPI_THREAD_SERIALIZED ? ThreadSupport::serialized : ThreadSupport::creating_thread;
}

std::string MpiCommunicator::library_version() const {
  char text[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int len = 0;
  MPI_CHECK(MPI_Get_library_version(text, &len));
  const std::string all(text, static_cast<size_t>(len));
  return all.substr(0, all.find_first_of(",\n"));
}

std::unique_ptr<Communicator> MpiCommunicator::split(int color, int key) {
  const WatchScope watch("MPI split");
  MPI_Comm child = MPI_COMM_NULL;
  MPI_CHECK(MPI_Comm_split(comm_, color < 0 ? MPI_UNDEFINED : color, key, &child));
  if (child == MPI_COMM_NULL) return nullptr;
  return std::make_unique<MpiCommunicator>(child, true, order_);
}

}  // namespace gcb
