// GlooCommunicator: host memory, ranks are processes (or, in tests, threads), over Gloo's TCP
// transport (facebookincubator/gloo, gloo/transport/tcp). Its meshes are connected through a
// key-value store (gloo::rendezvous::Context::connectFullMesh): the store of the launch
// (collectives/tcp_store.hpp) for worlds started by torchrun / Kubernetes / srun variables, any
// gloo::rendezvous::Store in tests. Reductions follow the World's ReductionOrder: rank_ordered
// gathers every contribution and reduces in rank order 0..n-1 with the host backends'
// reduce_into (bitwise equal to ThreadCommunicator); library runs gloo::allreduce (its ring)
// with the same element function, in Gloo's order.
#pragma once

#include <gloo/context.h>
#include <gloo/rendezvous/store.h>
#include <gloo/transport/device.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "collectives/communicator.hpp"

namespace gcb {

// What every mesh of one world is connected with: the store, the transport device (one per
// process; its listening address) and the timeout of every Gloo operation.
struct GlooWorld {
  std::shared_ptr<gloo::rendezvous::Store> store;
  std::shared_ptr<gloo::transport::Device> device;
  std::chrono::milliseconds timeout{300'000};
};

// A TCP device listening on `address` (an IPv4 address or host name of this host).
std::shared_ptr<gloo::transport::Device> gloo_tcp_device(const std::string& address);

class GlooCommunicator final : public Communicator {
 public:
  // Connects rank `rank` of `size` into a full mesh under the store prefix `prefix` (every rank
  // of this communicator passes the same one). Collective: blocks until every rank connected.
  GlooCommunicator(std::shared_ptr<GlooWorld> world, const std::string& prefix, int rank, int size,
                   ReductionOrder order);
  ~GlooCommunicator() override;

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::string_view backend() const override { return "gloo"; }
  MemorySpace memory() const override { return MemorySpace::host; }
  std::string library_version() const override;

  void all_reduce(const void* send, void* recv, size_t count, DType t, ReduceOp op) override;
  void all_gather(const void* send, void* recv, size_t count, DType t) override;
  void reduce_scatter(const void* send, void* recv, size_t count, DType t, ReduceOp op) override;
  void broadcast(const void* send, void* recv, size_t count, DType t, int root) override;
  void reduce(const void* send, void* recv, size_t count, DType t, ReduceOp op, int root) override;
  void all_to_all(const void* send, void* recv, size_t count, DType t) override;
  void group_start() override;
  void group_end() override;
  void send(const void* buf, size_t count, DType t, int peer) override;
  void recv(void* buf, size_t count, DType t, int peer) override;
  void barrier() override;
  void synchronize() override {}
  std::unique_ptr<Communicator> split(int color, int key) override;
  // One Gloo context per communicator, used by one thread at a time; different communicators
  // may run on different threads at once.
  ThreadSupport thread_support() const override { return ThreadSupport::concurrent; }

 private:
  struct P2p {
    void* buf;
    size_t bytes;
    int peer;
    bool is_send;
  };
  void run_p2p(const std::vector<P2p>& ops);
  // Every rank's `bytes` of `send` into scratch_ (rank r's at r·bytes).
  void gather_all(const void* send, size_t bytes);
  std::byte* scratch(size_t bytes);

  std::shared_ptr<GlooWorld> world_;
  std::string prefix_;
  int rank_, size_;
  ReductionOrder order_;
  std::shared_ptr<gloo::Context> context_;
  std::vector<std::byte> scratch_;
  bool grouped_ = false;
  std::vector<P2p> group_;
  std::vector<uint32_t> send_seq_, recv_seq_;  // per peer: matches the i-th send with the i-th recv
  int splits_ = 0;
};

}  // namespace gcb
