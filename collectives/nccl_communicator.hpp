// NcclCommunicator: one rank per CUDA device, buffers in device memory, every call enqueued on
// this rank's own CUDA stream. synchronize() waits with a timeout and polls NCCL's asynchronous
// error, aborting the communicator instead of hanging (compiles here; validated only on a GPU).
#pragma once

#include <cuda_runtime.h>
#include <nccl.h>

#include <array>
#include <chrono>
#include <cstddef>
#include <memory>

#include "collectives/communicator.hpp"

namespace gcb {

class NcclCommunicator final : public Communicator {
 public:
  static constexpr std::chrono::milliseconds kDefaultTimeout{300'000};

  // Collective over all `nranks` ranks: selects `device`, creates a non-blocking stream and calls
  // ncclCommInitRank with the unique id that rank 0 created (ncclGetUniqueId) and shared.
  NcclCommunicator(const std::array<std::byte, 128>& unique_id, int nranks, int rank, int device,
                   std::chrono::milliseconds timeout = kDefaultTimeout);
  ~NcclCommunicator() override;
  NcclCommunicator(const NcclCommunicator&) = delete;
  NcclCommunicator& operator=(const NcclCommunicator&) = delete;

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::string_view backend() const override { return "nccl"; }
  MemorySpace memory() const override { return MemorySpace::device; }
  void* stream() const override { return stream_; }  // the cudaStream_t every call enqueues on
  std::string library_version() const override;      // ncclGetVersion as major.minor.patch
  ncclComm_t comm() const { return comm_; }
  static std::array<std::byte, 128> new_unique_id();

  // Stream-ordered: each call returns once enqueued; synchronize() waits for completion.
  void all_reduce(const void* send, void* recv, size_t count, DType t, ReduceOp op) override;
  void all_gather(const void* send, void* recv, size_t count, DType t) override;
  void reduce_scatter(const void* send, void* recv, size_t count, DType t, ReduceOp op) override;
  void broadcast(const void* send, void* recv, size_t count, DType t, int root) override;
  void reduce(const void* send, void* recv, size_t count, DType t, ReduceOp op, int root) override;
  // Grouped ncclSend/ncclRecv, one pair per peer (NCCL has no all-to-all primitive).
  void all_to_all(const void* send, void* recv, size_t count, DType t) override;
  void group_start() override;
  void group_end() override;
  void send(const void* buf, size_t count, DType t, int peer) override;
  void recv(void* buf, size_t count, DType t, int peer) override;
  // NCCL has no barrier: a one-element all-reduce followed by synchronize().
  void barrier() override;
  // cudaStreamQuery in a loop with sched_yield between polls (stream_poll.hpp); on an
  // asynchronous NCCL error or after the timeout the communicator is aborted (ncclCommAbort) and
  // gcb::Fault is thrown.
  void synchronize() override;
  // ncclCommSplit; color < 0 (NCCL_SPLIT_NOCOLOR) returns nullptr. The child shares the device,
  // gets its own stream.
  std::unique_ptr<Communicator> split(int color, int key) override;

 private:
  NcclCommunicator(ncclComm_t comm, int device, std::chrono::milliseconds timeout);
  void init_common();
  void abort_and_throw(const std::string& why);

  ncclComm_t comm_ = nullptr;
  cudaStream_t stream_ = nullptr;
  int rank_ = 0;
  int size_ = 1;
  int device_ = 0;
  std::chrono::milliseconds timeout_;
  int* barrier_word_ = nullptr;  // device scratch for barrier()
};

}  // namespace gcb
