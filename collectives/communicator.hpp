// The one narrow, stream-ordered interface every collective backend implements (docs/design.md
// "Communicator"). Host backends (threads, MPI) complete each call before returning; the NCCL
// backend enqueues on its CUDA stream and synchronize() waits. A communicator describes itself
// (memory(), stream(), thread_support()), so callers never compare backend names or downcast.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "collectives/coll_op.hpp"
#include "core/buffer.hpp"
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

// Which threads may call communicators of one process (MPI's thread levels, in order).
// `train --overlap` calls the dp group from a second thread while the rank's own thread goes on
// with its tp and pp groups: that needs `concurrent`; dp alone needs `serialized`.
enum class ThreadSupport : uint8_t {
  creating_thread,  // only the thread that created it (MPI_THREAD_SINGLE / FUNNELED)
  serialized,       // any thread, one at a time across the process (MPI_THREAD_SERIALIZED)
  concurrent,       // different communicators from different threads at once (MPI_THREAD_MULTIPLE)
};

// One collective with its arguments, as Communicator's methods take them: all_reduce,
// all_gather, reduce_scatter, broadcast, reduce or alltoall (redop and root where the op has them).
struct CollCall {
  CollOp op = CollOp::all_reduce;
  const void* send = nullptr;
  void* recv = nullptr;
  size_t count = 0;
  DType dtype = DType::f32;
  ReduceOp redop = ReduceOp::sum;
  int root = 0;
};

// A CollCall bound once for a loop that repeats it (Communicator::bind). `launch` runs it once;
// `repeat(n)` runs it n times in one loop with the call inlined, as a bare loop of the library call
// does (no indirect call per op); empty: call launch n times. When `watch` is set, neither opens a
// watch scope of its own (core/watchdog.hpp) although the backend's methods do: a scope per call was
// a measurable share of a sub-microsecond MPI call. The caller then holds a WatchScope named `watch`
// around every batch (RankTimer::use_bound does).
struct BoundCall {
  std::function<void()> launch;
  std::function<void(int)> repeat;
  const char* watch = nullptr;
};

// The BoundCall of `call` (a callable run once per launch), its repeat a plain loop over it.
template <class F>
BoundCall bound_loop(F call, const char* watch = nullptr) {
  return {call,
          [call](int n) {
            for (int i = 0; i < n; ++i) call();
          },
          watch};
}

class Communicator {
 public:
  virtual ~Communicator() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // The factory's name of the backend ("threads", "mpi", "nccl"): for reports only.
  virtual std::string_view backend() const = 0;
  // Where send and receive buffers must live (host memory for threads/MPI, device memory for
  // NCCL): a compute backend checks it against its own memory before it communicates.
  virtual MemorySpace memory() const = 0;
  // The stream this communicator enqueues on, as an opaque handle (a cudaStream_t for NCCL), or
  // null when every call completes on the calling thread before it returns. Callers that order
  // device work against it (a compute backend's events, CUDA graph capture) cast it back.
  virtual void* stream() const { return nullptr; }
  // The library underneath and its version (e.g. "2.21.5" for NCCL), "" for in-process backends;
  // recorded in results as "<backend>_version".
  virtual std::string library_version() const { return {}; }

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
  virtual ThreadSupport thread_support() const { return ThreadSupport::concurrent; }

  // `call` resolved once into a launch with the same effect as the matching method above; a
  // backend whose dispatch per call (types, ops, placement) costs time against the op itself
  // resolves it here. Default: a launch that calls the method. The buffers must outlive it.
  virtual BoundCall bind(const CollCall& call);
};

}  // namespace gcb
