// MpiCommunicator: ranks are processes of an MPI communicator, buffers are host memory. Data
// movement (all_gather, broadcast, all_to_all, send/recv) is always the MPI library's own call.
// Reductions come in two orders (ReductionOrder):
// - library: MPI_Allreduce, MPI_Reduce_scatter_block, MPI_Reduce with MPI's types and ops (a
//   user-defined op for fp16/bf16, which MPI has no type for), as an application calls them;
// - rank_ordered: MPI moves the data and the host reduces in rank order 0..n-1 with
//   reduce_into(), so results are bitwise identical to ThreadCommunicator's (MPI_Allreduce would
//   not promise that). Small reductions (≤ kSmallReductionBytes per rank) gather every
//   contribution with one latency-bound MPI call and reduce locally; larger ones reduce-scatter by
//   MPI_Alltoallv and all-gather, the bytes of a ring.
#pragma once

#include <mpi.h>

#include <memory>
#include <vector>

#include "collectives/communicator.hpp"

namespace gcb {

class MpiCommunicator final : public Communicator {
 public:
  // Per-rank contribution up to which reductions take the one-call gather path. Latency rules
  // there: Open MPI's tuned all-reduce likewise switches to recursive doubling for short
  // messages. Gathering costs n·bytes per rank, so the bound stays small.
  static constexpr size_t kSmallReductionBytes = 4096;

  // Wraps `comm` (MPI already initialised) and sets MPI_ERRORS_RETURN on it so failures become
  // gcb::Fault through MPI_CHECK. `owned` communicators (from split) are freed on destruction.
  explicit MpiCommunicator(MPI_Comm comm, bool owned = false, ReductionOrder order = ReductionOrder::rank_ordered);
  ~MpiCommunicator() override;
  MpiCommunicator(const MpiCommunicator&) = delete;
  MpiCommunicator& operator=(const MpiCommunicator&) = delete;

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::string_view backend() const override { return "mpi"; }
  MemorySpace memory() const override { return MemorySpace::host; }
  std::string library_version() const override;  // first line of MPI_Get_library_version
  MPI_Comm comm() const { return comm_; }
  ReductionOrder reduction_order() const { return order_; }

  // Blocking; same buffer and in-place conventions as ThreadCommunicator. Element counts per
  // MPI call must fit in an int (elements are sent as one contiguous datatype per dtype).
  void all_reduce(const void* send, void* recv, size_t count, DType t, ReduceOp op) override;
  void all_gather(const void* send, void* recv, size_t count, DType t) override;
  void reduce_scatter(const void* send, void* recv, size_t count, DType t, ReduceOp op) override;
  void broadcast(const void* send, void* recv, size_t count, DType t, int root) override;
  void reduce(const void* send, void* recv, size_t count, DType t, ReduceOp op, int root) override;
  void all_to_all(const void* send, void* recv, size_t count, DType t) override;
  // Outside a group send/recv are MPI_Send/MPI_Recv (pair them as with NCCL). Inside a group
  // they are posted as MPI_Isend/MPI_Irecv and group_end() waits for all of them.
  void group_start() override;
  void group_end() override;
  void send(const void* buf, size_t count, DType t, int peer) override;
  void recv(void* buf, size_t count, DType t, int peer) override;
  void barrier() override;
  void synchronize() override {}
  // Library-order reductions and every data-movement call, resolved once into the bare MPI call
  // (type, op, placement, int count), watched per batch by the caller (BoundCall::watch) instead
  // of per call; rank-ordered reductions call the methods.
  BoundCall bind(const CollCall& call) override;
  // MPI_Comm_split (same reduction order); color < 0 (MPI_UNDEFINED) returns nullptr.
  std::unique_ptr<Communicator> split(int color, int key) override;
  // From MPI_Query_thread(): MULTIPLE → concurrent, SERIALIZED → serialized.
  ThreadSupport thread_support() const override;

 private:
  // One element as an MPI datatype (counts stay in elements): a predefined type of its size, or
  // derived_type(), a committed contiguous type made once per size.
  MPI_Datatype element_type(DType t);
  MPI_Datatype derived_type(size_t bytes);
  // The MPI datatype and op a library-order reduction uses: MPI's own for fp64/fp32/int32/int8,
  // a 2-byte type and a user-defined op (reduce_into) for fp16/bf16; avg is sum, then
  // finish_reduction() on the result.
  std::pair<MPI_Datatype, MPI_Op> library_reduction(DType t, ReduceOp op);
  std::pair<MPI_Datatype, MPI_Op> user_reduction(DType t, ReduceOp op);  // fp16/bf16 (op made once)
  // The rank-ordered reductions, apart from the library-order calls so that those stay small.
  void ranked_all_reduce(const void* send, void* recv, size_t count, DType t, ReduceOp op);
  void ranked_reduce_scatter(const void* send, void* recv, size_t count, DType t, ReduceOp op);
  void ranked_reduce(const void* send, void* recv, size_t count, DType t, ReduceOp op, int root);
  // Reduces block `rank_` (`mine` elements) of every rank's `send` in rank order into `out`; the
  // blocks of `send` are given by counts/displs (elements). One MPI_Alltoallv moves the data.
  void reduce_my_block(const void* send, const std::vector<int>& counts, const std::vector<int>& displs, void* out,
                       DType t, ReduceOp op);
  // Small-message path: every rank's `count` elements land in scratch_ (MPI_Allgather, or
  // MPI_Gather to `root` when root >= 0; then only the root reduces); then elements
  // [first, first + n) of the contributions are reduced in rank order into `out`.
  void gather_reduce(const void* send, size_t count, size_t first, size_t n, void* out, DType t, ReduceOp op,
                     int root = -1);

  MPI_Comm comm_;
  bool owned_;
  ReductionOrder order_;
  int rank_ = 0;
  int size_ = 1;
  int group_depth_ = 0;
  std::vector<MPI_Request> pending_;
  std::vector<std::byte> scratch_;
  // element size -> contiguous type (sizes without a predefined type)
  std::vector<std::pair<size_t, MPI_Datatype>> types_;
  std::vector<std::pair<int, MPI_Op>> user_ops_;  // (dtype, op) key -> MPI_Op_create
};

}  // namespace gcb
