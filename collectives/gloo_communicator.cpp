// GlooCommunicator: each method one or two of Gloo's collectives (gloo/allgather.h,
// allreduce.h, alltoall.h, broadcast.h, barrier.h) or its unbound-buffer send/recv, with the host
// backends' element functions (communicator.hpp reduce_into / finish_reduction) for reductions.
// A Gloo failure (a peer's connection closed, Gloo's timeout) becomes gcb::Fault naming the call.
#include "collectives/gloo_communicator.hpp"

#include <fmt/format.h>
#include <gloo/allgather.h>
#include <gloo/allreduce.h>
#include <gloo/alltoall.h>
#include <gloo/barrier.h>
#include <gloo/broadcast.h>
#include <gloo/common/error.h>
#include <gloo/config.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/prefix_store.h>
#include <gloo/transport/tcp/device.h>

#include <algorithm>
#include <cstring>

#include "core/error.hpp"
#include "core/watchdog.hpp"

namespace gcb {

namespace {

// Unbound-buffer slots of our send/recv: a prefix none of Gloo's collectives uses (gloo/types.h
// uses 0x01..0x08).
constexpr uint8_t kP2pSlotPrefix = 0x40;

// Runs one Gloo call inside a watch scope; Gloo's exceptions become gcb::Fault.
template <class F>
void guarded(const char* what, F&& f) {
  const WatchScope watch(what);
  try {
    f();
  } catch (const gloo::Exception& e) {
    throw Fault(fmt::format("{}: {}", what, e.what()));
  }
}

std::byte* at(void* base, size_t offset) { return static_cast<std::byte*>(base) + offset; }

// gloo's typed setters want a T of the element's size; the data are moved as bytes.
template <class F>
void with_element(size_t size, F&& f) {
  switch (size) {
    case 1: return f(uint8_t{});
    case 2: return f(uint16_t{});
    case 4: return f(uint32_t{});
    case 8: return f(uint64_t{});
    default: break;
  }
  // Every DType is 1, 2, 4 or 8 bytes (core/dtype.cpp).
  GCB_CHECK(false, fmt::format("gloo backend: no element type of {} bytes", size));
}

}  // namespace

std::shared_ptr<gloo::transport::Device> gloo_tcp_device(const std::string& address) {
  gloo::transport::tcp::attr attr;
  attr.hostname = address;
  try {
    return gloo::transport::tcp::CreateDevice(attr);
  } catch (const gloo::Exception& e) {
    throw Fault(fmt::format("gloo: cannot listen on {}: {}", address, e.what()));
  }
}

GlooCommunicator::GlooCommunicator(std::shared_ptr<GlooWorld> world, const std::string& prefix, int rank, int size,
                                   ReductionOrder order)
    : world_(std::move(world)),
      prefix_(prefix),
      rank_(rank),
      size_(size),
      order_(order),
      send_seq_(static_cast<size_t>(size), 0),
      recv_seq_(static_cast<size_t>(size), 0) {
  auto ctx = std::make_shared<gloo::rendezvous::Context>(rank, size);
  ctx->setTimeout(world_->timeout);
  gloo::rendezvous::PrefixStore store(prefix_, *world_->store);
  const std::string what = fmt::format("Gloo connectFullMesh (mesh {}, rank {} of {})", prefix_, rank, size);
  guarded(what.c_str(), [&] { ctx->connectFullMesh(store, world_->device); });
  context_ = std::move(ctx);
  // connectFullMesh returns on a rank once its own sockets connected: the kernel completes a
  // client's connect before the listening peer has accepted it (gloo/transport/tcp/pair.cc,
  // Pair::connect and Pair::handleListening). A rank that then dropped the mesh (a split made and
  // freed at once) closed a socket its peer had yet to accept, and the peer's connectFullMesh
  // failed with "Connection closed by peer" (3-6 in 100 runs of GlooCommunicator.SplitOrdersByKey).
  // A barrier over the new mesh returns only once every member is connected, as MPI_Comm_split
  // returns a communicator every member can use.
  if (size > 1) GlooCommunicator::barrier();
}

GlooCommunicator::~GlooCommunicator() = default;

std::string GlooCommunicator::library_version() const {
  return fmt::format("{}.{}.{}", GLOO_VERSION_MAJOR, GLOO_VERSION_MINOR, GLOO_VERSION_PATCH);
}

std::byte* GlooCommunicator::scratch(size_t bytes) {
  if (scratch_.size() < bytes) scratch_.resize(bytes);
  return scratch_.data();
}

void GlooCommunicator::gather_all(const void* send, size_t bytes) {
  std::byte* all = scratch(bytes * static_cast<size_t>(size_));
  if (bytes == 0) return;
  std::memcpy(all + static_cast<size_t>(rank_) * bytes, send, bytes);
  guarded("Gloo allgather", [&] {
    gloo::AllgatherOptions opts(context_);
    opts.setOutput(reinterpret_cast<uint8_t*>(all), bytes * static_cast<size_t>(size_));  // in place: no input
    gloo::allgather(opts);
  });
}

void GlooCommunicator::all_reduce(const void* send, void* recv, size_t count, DType t, ReduceOp op) {
  const size_t bytes = count * dtype_size(t);
  if (bytes == 0) return;
  if (order_ == ReductionOrder::rank_ordered || size_ == 1) {
    // Every contribution, then rank 0's (op) rank 1's (op) ... as ThreadCommunicator.
    gather_all(send, bytes);
    std::memcpy(recv, scratch_.data(), bytes);
    for (int r = 1; r < size_; ++r)
      reduce_into(t, op, recv, at(scratch_.data(), static_cast<size_t>(r) * bytes), count);
    finish_reduction(t, op, recv, count, size_);
    return;
  }
  if (send != recv) std::memcpy(recv, send, bytes);
  const ReduceOp step = op == ReduceOp::avg ? ReduceOp::sum : op;
  const size_t element = dtype_size(t);
  guarded("Gloo allreduce", [&] {
    gloo::AllreduceOptions opts(context_);
    with_element(element, [&](auto e) { opts.setOutput(static_cast<decltype(e)*>(recv), count); });
    opts.setReduceFunction([t, step, element](void* c, const void* a, const void* b, size_t n) {
      if (c != a) std::memcpy(c, a, n * element);
      reduce_into(t, step, c, b, n);
    });
    gloo::allreduce(opts);
  });
  finish_reduction(t, op, recv, count, size_);
}

void GlooCommunicator::all_gather(const void* send, void* recv, size_t count, DType t) {
  const size_t bytes = count * dtype_size(t);
  if (bytes == 0) return;
  std::byte* mine = at(recv, static_cast<size_t>(rank_) * bytes);
  if (send != mine) std::memcpy(mine, send, bytes);
  guarded("Gloo allgather", [&] {
    gloo::AllgatherOptions opts(context_);
    opts.setOutput(static_cast<uint8_t*>(recv), bytes * static_cast<size_t>(size_));
    gloo::allgather(opts);
  });
}

void GlooCommunicator::reduce_scatter(const void* send, void* recv, size_t count, DType t, ReduceOp op) {
  // Block r of every rank's send goes to rank r (one alltoall), which reduces its blocks in rank
  // order: the same bytes on the wire as a ring reduce-scatter and ThreadCommunicator's order.
  const size_t bytes = count * dtype_size(t);
  if (bytes == 0) return;
  const size_t total = bytes * static_cast<size_t>(size_);
  std::byte* blocks = scratch(total);
  guarded("Gloo alltoall", [&] {
    gloo::AlltoallOptions opts(context_);
    opts.setInput(const_cast<uint8_t*>(static_cast<const uint8_t*>(send)), total);
    opts.setOutput(reinterpret_cast<uint8_t*>(blocks), total);
    gloo::alltoall(opts);
  });
  std::memmove(recv, blocks, bytes);  // recv may be send's block of this rank (in place)
  for (int r = 1; r < size_; ++r) reduce_into(t, op, recv, blocks + static_cast<size_t>(r) * bytes, count);
  finish_reduction(t, op, recv, count, size_);
}

void GlooCommunicator::broadcast(const void* send, void* recv, size_t count, DType t, int root) {
  const size_t bytes = count * dtype_size(t);
  if (bytes == 0) return;
  if (rank_ == root && send != recv) std::memcpy(recv, send, bytes);
  guarded("Gloo broadcast", [&] {
    gloo::BroadcastOptions opts(context_);
    opts.setOutput(static_cast<uint8_t*>(recv), bytes);
    opts.setRoot(root);
    gloo::broadcast(opts);
  });
}

void GlooCommunicator::reduce(const void* send, void* recv, size_t count, DType t, ReduceOp op, int root) {
  // Gathered to every rank and reduced at the root in rank order (ThreadCommunicator's order;
  // a library-order reduce is the all_reduce's). Non-roots' recv is untouched.
  const size_t bytes = count * dtype_size(t);
  if (bytes == 0) return;
  if (order_ == ReductionOrder::library && size_ > 1) {
    std::vector<std::byte> out(bytes);
    all_reduce(send, out.data(), count, t, op);
    if (rank_ == root) std::memcpy(recv, out.data(), bytes);
    return;
  }
  gather_all(send, bytes);
  if (rank_ != root) return;
  std::memcpy(recv, scratch_.data(), bytes);
  for (int r = 1; r < size_; ++r) reduce_into(t, op, recv, at(scratch_.data(), static_cast<size_t>(r) * bytes), count);
  finish_reduction(t, op, recv, count, size_);
}

void GlooCommunicator::all_to_all(const void* send, void* recv, size_t count, DType t) {
  const size_t total = count * dtype_size(t) * static_cast<size_t>(size_);
  if (total == 0) return;
  const void* in = send;
  if (send == recv) {
    std::byte* copy = scratch(total);
    std::memcpy(copy, send, total);
    in = copy;
  }
  guarded("Gloo alltoall", [&] {
    gloo::AlltoallOptions opts(context_);
    opts.setInput(const_cast<uint8_t*>(static_cast<const uint8_t*>(in)), total);
    opts.setOutput(static_cast<uint8_t*>(recv), total);
    gloo::alltoall(opts);
  });
}

void GlooCommunicator::group_start() { grouped_ = true; }

void GlooCommunicator::group_end() {
  grouped_ = false;
  std::vector<P2p> ops;
  ops.swap(group_);
  run_p2p(ops);
}

void GlooCommunicator::send(const void* buf, size_t count, DType t, int peer) {
  P2p op{const_cast<void*>(buf), count * dtype_size(t), peer, true};
  if (grouped_)
    group_.push_back(op);
  else
    run_p2p({op});
}

void GlooCommunicator::recv(void* buf, size_t count, DType t, int peer) {
  P2p op{buf, count * dtype_size(t), peer, false};
  if (grouped_)
    group_.push_back(op);
  else
    run_p2p({op});
}

void GlooCommunicator::run_p2p(const std::vector<P2p>& ops) {
  // Every receive and send posted before any is waited for: a group in any order cannot
  // deadlock (NCCL's group semantics). The i-th send from A to B meets B's i-th receive from A.
  // Gloo has no connection to its own rank: a send to self meets a receive from self here, in order.
  std::vector<const P2p*> to_self, from_self;
  for (const P2p& op : ops)
    if (op.peer == rank_) (op.is_send ? to_self : from_self).push_back(&op);
  if (to_self.size() != from_self.size())
    throw UsageError(fmt::format("gloo send/recv: {} sends to this rank itself but {} receives from it", to_self.size(),
                                 from_self.size()));
  for (size_t i = 0; i < to_self.size(); ++i)
    std::memcpy(from_self[i]->buf, to_self[i]->buf, std::min(to_self[i]->bytes, from_self[i]->bytes));
  guarded("Gloo send/recv", [&] {
    std::vector<std::unique_ptr<gloo::transport::UnboundBuffer>> bufs;
    for (const P2p& op : ops) {
      if (op.peer < 0 || op.peer >= size_)
        throw UsageError(fmt::format("gloo send/recv: peer {} outside the group of {}", op.peer, size_));
      if (op.bytes == 0 || op.peer == rank_) {
        bufs.push_back(nullptr);
        continue;
      }
      bufs.push_back(context_->createUnboundBuffer(op.buf, op.bytes));
      auto& seq = op.is_send ? send_seq_ : recv_seq_;
      const uint64_t slot = gloo::Slot::build(kP2pSlotPrefix, seq[static_cast<size_t>(op.peer)]++);
      if (op.is_send)
        bufs.back()->send(op.peer, slot);
      else
        bufs.back()->recv(op.peer, slot);
    }
    for (size_t i = 0; i < ops.size(); ++i) {
      if (!bufs[i]) continue;
      if (ops[i].is_send)
        bufs[i]->waitSend(world_->timeout);
      else
        bufs[i]->waitRecv(world_->timeout);
    }
  });
}

void GlooCommunicator::barrier() {
  guarded("Gloo barrier", [&] {
    gloo::BarrierOptions opts(context_);
    gloo::barrier(opts);
  });
}

std::unique_ptr<Communicator> GlooCommunicator::split(int color, int key) {
  // Every rank's (color, key), then the members of my color ordered by (key, old rank), as
  // MPI_Comm_split; a negative color joins no group (nullptr). Each split connects a new mesh
  // under a prefix of its own: this communicator's, the split's number and the color.
  const int32_t mine[2] = {color, key};
  std::vector<int32_t> all(2 * static_cast<size_t>(size_));
  all_gather(mine, all.data(), 2, DType::i32);
  const int number = splits_++;
  if (color < 0) return nullptr;
  std::vector<std::pair<int, int>> members;  // (key, old rank)
  for (int r = 0; r < size_; ++r)
    if (all[2 * static_cast<size_t>(r)] == color) members.emplace_back(all[2 * static_cast<size_t>(r) + 1], r);
  std::sort(members.begin(), members.end());
  int new_rank = 0;
  for (size_t i = 0; i < members.size(); ++i)
    if (members[i].second == rank_) new_rank = static_cast<int>(i);
  return std::make_unique<GlooCommunicator>(world_, fmt::format("{}/s{}c{}", prefix_, number, color), new_rank,
                                            static_cast<int>(members.size()), order_);
}

}  // namespace gcb
