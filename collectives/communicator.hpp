// The one narrow, stream-ordered interface every collective backend implements (DESIGN.md
// "Communicator"). Host backends (threads, MPI) complete each call before returning; the NCCL
// backend enqueues on its CUDA stream and synchronize() waits. Buffers live in the backend's
// memory space: host memory for threads/MPI, device memory for NCCL.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "core/dtype.hpp"

namespace gcb {

enum class ReduceOp : uint8_t { sum, prod, min, max, avg };
std::string_view reduce_op_name(ReduceOp op);
std::optional<ReduceOp> parse_reduce_op(std::string_view name);

// How a backend with a choice (MPI) combines contributions. `rank_ordered`: every element in rank
// order 0..n-1 on the host, so the threads and MPI backends, reruns and layouts agree bit for bit
// (what the training engines ask for). `library`: the library's own collectives as an
// application calls them (MPI_Allreduce, …), in whatever order its algorithm picks (what `coll`
// measures). The threads backend is always rank ordered, NCCL always the library's.
enum class ReductionOrder : uint8_t { rank_ordered, library };
std::string_view reduction_order_name(ReductionOrder o);

// Host-side element-wise reduction shared by the host backends, so that they agree bitwise.
// acc[i] = acc[i] (op) in[i] for fp64, fp32, fp16, bf16, int32 and int8 (gcb::UsageError for any
// other type). fp16/bf16 combine in fp32 and round to nearest even after every step, as a GPU
// ring does per hop. Integers wrap (two's complement). avg accumulates as sum here; call
// finish_reduction() once after the last contribution. Buffers are aligned to the element size.
void reduce_into(DType t, ReduceOp op, void* acc, const void* in, size_t count);
// Completes a reduction over `nranks` contributions: for avg, acc[i] = acc[i] / nranks (floats:
// one division in the element's compute type — fp64, or fp32 then rounded for fp32/fp16/bf16;
// integers: C++ division, truncating toward zero, as NCCL's integer avg). No-op for other ops.
void finish_reduction(DType t, ReduceOp op, void* acc, size_t count, int nranks);

class Communicator {
 public:
  virtual ~Communicator() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  virtual std::string_view backend() const = 0;  // "threads", "mpi", "nccl"

  // count = elements per rank's contribution unless stated. send == recv means in place.
  virtual void all_reduce(const void* send, void* recv, size_t count, DType t, ReduceOp op) = 0;
  // recv holds size()·count elements, rank r's block at offset r·count.
  virtual void all_gather(const void* send, void* recv, size_t count, DType t) = 0;
  // send holds size()·count elements; recv gets this rank's reduced block of count.
  virtual void reduce_scatter(const void* send, void* recv, size_t count, DType t, ReduceOp op) = 0;
  virtual void broadcast(const void* send, void* recv, size_t count, DType t, int root) = 0;
  virtual void reduce(const void* send, void* recv, size_t count, DType t, ReduceOp op, int root) = 0;
  // send and recv hold size()·count elements; block r of send goes to rank r.
  virtual void all_to_all(const void* send, void* recv, size_t count, DType t) = 0;
  // Point-to-point, grouped: calls between group_start() and group_end() may be issued in any
  // order without deadlock (NCCL semantics); outside a group each call completes on its own.
  virtual void group_start() = 0;
  virtual void group_end() = 0;
  virtual void send(const void* buf, size_t count, DType t, int peer) = 0;
  virtual void recv(void* buf, size_t count, DType t, int peer) = 0;
  virtual void barrier() = 0;
  // Waits for every operation this rank enqueued (no-op for host backends).
  virtual void synchronize() = 0;
  // Collective over this communicator: ranks with the same color form a new communicator,
  // ordered by key (then by old rank), as MPI_Comm_split.
  virtual std::unique_ptr<Communicator> split(int color, int key) = 0;
  // Whether a thread other than the creating one may call this communicator (one thread at a
  // time), as `train --overlap` does. MPI: only at MPI_THREAD_SERIALIZED or above.
  virtual bool callable_from_any_thread() const { return true; }
};

}  // namespace gcb
