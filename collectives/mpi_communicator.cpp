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

int to_int(size_t n, const char* what) {
  if (n > static_cast<size_t>(INT_MAX))
    throw UsageError(fmt::format("{} of {} elements exceeds MPI's int count limit", what, n));
  return static_cast<int>(n);
}

std::byte* at(void* base, size_t offset) { return static_cast<std::byte*>(base) + offset; }
const std::byte* at(const void* base, size_t offset) { return static_cast<const std::byte*>(base) + offset; }

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

bool mpi_finalized() {
  int done = 0;
  MPI_Finalized(&done);
  return done != 0;
}

}  // namespace

MpiCommunicator::MpiCommunicator(MPI_Comm comm, bool owned) : comm_(comm), owned_(owned) {
  MPI_CHECK(MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN));
  MPI_CHECK(MPI_Comm_rank(comm_, &rank_));
  MPI_CHECK(MPI_Comm_size(comm_, &size_));
}

MpiCommunicator::~MpiCommunicator() {
  // After MPI_Finalize nothing may be freed; the runtime has released it all anyway.
  if (mpi_finalized()) return;
  for (auto& [bytes, type] : types_) MPI_Type_free(&type);
  if (owned_) MPI_Comm_free(&comm_);
}

MPI_Datatype MpiCommunicator::element_type(DType t) {
  const size_t bytes = dtype_size(t);
  for (const auto& [b, type] : types_)
    if (b == bytes) return type;
  MPI_Datatype type = MPI_DATATYPE_NULL;
  MPI_CHECK(MPI_Type_contiguous(static_cast<int>(bytes), MPI_BYTE, &type));
  MPI_CHECK(MPI_Type_commit(&type));
  types_.emplace_back(bytes, type);
  return type;
}

void MpiCommunicator::reduce_my_block(const void* send, const std::vector<int>& counts,
                                      const std::vector<int>& displs, void* out, DType t, ReduceOp op) {
  const size_t es = dtype_size(t);
  const int mine = counts[static_cast<size_t>(rank_)];
  const size_t block_bytes = static_cast<size_t>(mine) * es;
  scratch_.resize(block_bytes * static_cast<size_t>(size_));
  std::vector<int> recv_counts(static_cast<size_t>(size_), mine);
  std::vector<int> recv_displs(static_cast<size_t>(size_));
  for (int s = 0; s < size_; ++s) recv_displs[static_cast<size_t>(s)] = to_int(static_cast<size_t>(s) * static_cast<size_t>(mine), "offset");
  const MPI_Datatype type = element_type(t);
  MPI_CHECK(MPI_Alltoallv(send, counts.data(), displs.data(), type, scratch_.data(), recv_counts.data(),
                          recv_displs.data(), type, comm_));
  // scratch_ block s is rank s's contribution to my block: reduce in rank order.
  if (block_bytes > 0) std::memcpy(out, scratch_.data(), block_bytes);
  for (int s = 1; s < size_; ++s)
    reduce_into(t, op, out, at(scratch_.data(), static_cast<size_t>(s) * block_bytes), static_cast<size_t>(mine));
  finish_reduction(t, op, out, static_cast<size_t>(mine), size_);
}

void MpiCommunicator::gather_reduce(const void* send, size_t count, size_t first, size_t n, void* out,
                                    DType t, ReduceOp op, int root) {
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
  if (count * dtype_size(t) <= kSmallReductionBytes) {
    gather_reduce(send, count, 0, count, recv, t, op);
    return;
  }
  std::vector<int> counts, displs;
  partition(count, size_, counts, displs);
  std::vector<std::byte> block(static_cast<size_t>(counts[static_cast<size_t>(rank_)]) * dtype_size(t));
  reduce_my_block(send, counts, displs, block.data(), t, op);
  const MPI_Datatype type = element_type(t);
  MPI_CHECK(MPI_Allgatherv(block.data(), counts[static_cast<size_t>(rank_)], type, recv, counts.data(),
                           displs.data(), type, comm_));
}

void MpiCommunicator::reduce_scatter(const void* send, void* recv, size_t count, DType t, ReduceOp op) {
  const WatchScope watch("MPI reduce_scatter");
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
  const int c = to_int(count, "all_gather block");
  const MPI_Datatype type = element_type(t);
  const bool in_place = send == at(static_cast<const void*>(recv), static_cast<size_t>(rank_) * count * dtype_size(t));
  MPI_CHECK(MPI_Allgather(in_place ? MPI_IN_PLACE : send, c, type, recv, c, type, comm_));
}

void MpiCommunicator::broadcast(const void* send, void* recv, size_t count, DType t, int root) {
  const WatchScope watch("MPI broadcast");
  const int c = to_int(count, "broadcast");
  if (rank_ == root && send != recv && count > 0) std::memcpy(recv, send, count * dtype_size(t));
  MPI_CHECK(MPI_Bcast(recv, c, element_type(t), root, comm_));
}

void MpiCommunicator::all_to_all(const void* send, void* recv, size_t count, DType t) {
  const WatchScope watch("MPI all_to_all");
  const int c = to_int(count, "all_to_all block");
  const MPI_Datatype type = element_type(t);
  MPI_CHECK(MPI_Alltoall(send == recv ? MPI_IN_PLACE : send, c, type, recv, c, type, comm_));
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

bool MpiCommunicator::callable_from_any_thread() const {
  int level = MPI_THREAD_SINGLE;
  MPI_CHECK(MPI_Query_thread(&level));
  return level >= MPI_THREAD_SERIALIZED;
}

std::unique_ptr<Communicator> MpiCommunicator::split(int color, int key) {
  const WatchScope watch("MPI split");
  MPI_Comm child = MPI_COMM_NULL;
  MPI_CHECK(MPI_Comm_split(comm_, color < 0 ? MPI_UNDEFINED : color, key, &child));
  if (child == MPI_COMM_NULL) return nullptr;
  return std::make_unique<MpiCommunicator>(child, true);
}

}  // namespace gcb
