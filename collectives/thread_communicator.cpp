// ThreadCommunicator: every collective is "publish buffer pointers, rendezvous, each rank builds
// its own output by reading the others' buffers in rank order, rendezvous". Point-to-point goes
// through per-(src,dst) mailboxes of copied messages. All waits poll a shared abort flag.
#include "collectives/thread_communicator.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <deque>
#include <fmt/format.h>
#include <map>
#include <optional>
#include <mutex>
#include <thread>
#include <utility>

#include "core/error.hpp"

namespace gcb {

namespace detail {

// Shared by a world and every communicator split from it: one failure stops them all.
struct ThreadFaultState {
  std::atomic<bool> aborted{false};
  std::atomic<int64_t> timeout_ms{ThreadWorld::kDefaultTimeout.count()};
  std::mutex mu;
  std::string message;  // "rank R on host H: reason", set once by the first abort

  void abort(const std::string& reason) {
    std::lock_guard lk(mu);
    if (aborted.load()) return;
    message = fmt::format("rank {} on host {}: {}", error_rank(), host_name(), reason);
    aborted.store(true);
  }
  void throw_if_aborted(const char* what) {
    if (!aborted.load()) return;
    std::lock_guard lk(mu);
    throw Fault(fmt::format("threads communicator aborted (seen by rank {} in {}): {}", error_rank(),
                            what, message));
  }
};

// What every rank must agree on for a collective to be well formed.
struct OpSignature {
  const char* name = "";
  size_t count = 0;
  DType type = DType::f32;
  int detail = 0;  // reduce op or root
  bool operator==(const OpSignature& o) const {
    return std::string_view(name) == o.name && count == o.count && type == o.type && detail == o.detail;
  }
};

struct ThreadGroup {
  ThreadGroup(int n, std::shared_ptr<ThreadFaultState> f)
      : size(n), fault(std::move(f)), here(static_cast<size_t>(n), false),
        send_slot(static_cast<size_t>(n)), signature(static_cast<size_t>(n)),
        split_request(static_cast<size_t>(n)), split_result(static_cast<size_t>(n)) {}

  const int size;
  const std::shared_ptr<ThreadFaultState> fault;
  std::mutex mu;
  std::condition_variable cv;
  // Barrier by generation counting; `here` names the ranks that arrived, for timeout messages.
  uint64_t generation = 0;
  int arrived = 0;
  std::vector<bool> here;
  // Collective slots: written before the first rendezvous, read between the two.
  std::vector<const void*> send_slot;
  std::vector<OpSignature> signature;
  std::vector<std::pair<int, int>> split_request;  // (color, key)
  std::vector<std::shared_ptr<ThreadGroup>> split_result;
  std::map<std::pair<int, int>, std::deque<std::vector<std::byte>>> mailbox;  // (src, dst)

  // Waits on cv until ready() under `lk`, polling the abort flag; on timeout aborts everything.
  template <class Ready, class Describe>
  void wait(std::unique_lock<std::mutex>& lk, const char* what, Ready ready, Describe waiting_for) {
    const auto start = std::chrono::steady_clock::now();
    const auto timeout = std::chrono::milliseconds(fault->timeout_ms.load());
    while (!ready()) {
      fault->throw_if_aborted(what);
      if (std::chrono::steady_clock::now() - start > timeout) {
        const std::string reason = fmt::format("timed out after {:.1f} s in {} waiting for {}",
                                               static_cast<double>(timeout.count()) / 1e3, what,
                                               waiting_for());
        lk.unlock();
        fault->abort(reason);
        fault->throw_if_aborted(what);
      }
      // Short slices: an abort raised in another group (split) only sets the flag.
      cv.wait_for(lk, std::chrono::milliseconds(10));
    }
  }

  void rendezvous(int rank, const char* what) {
    std::unique_lock lk(mu);
    const uint64_t gen = generation;
    here[static_cast<size_t>(rank)] = true;
    if (++arrived == size) {
      arrived = 0;
      std::fill(here.begin(), here.end(), false);
      ++generation;
      cv.notify_all();
      return;
    }
    wait(lk, what, [&] { return generation != gen; }, [&] {
      std::string missing;
      for (int r = 0; r < size; ++r)
        if (!here[static_cast<size_t>(r)]) missing += fmt::format("{}{}", missing.empty() ? "" : ",", r);
      return fmt::format("rank(s) {} of this {}-rank communicator", missing, size);
    });
  }
};

}  // namespace detail

namespace {

bool overlaps(const void* a, size_t a_bytes, const void* b, size_t b_bytes) {
  if (a_bytes == 0 || b_bytes == 0) return false;
  const auto* pa = static_cast<const std::byte*>(a);
  const auto* pb = static_cast<const std::byte*>(b);
  return std::less<>{}(pa, pb + b_bytes) && std::less<>{}(pb, pa + a_bytes);
}

const std::byte* at(const void* base, size_t offset) { return static_cast<const std::byte*>(base) + offset; }
std::byte* at(void* base, size_t offset) { return static_cast<std::byte*>(base) + offset; }

void copy(void* dst, const void* src, size_t bytes) {
  if (bytes > 0) std::memcpy(dst, src, bytes);
}

}  // namespace

// --- ThreadWorld ----------------------------------------------------------------------------

ThreadWorld::ThreadWorld(int size, std::chrono::milliseconds timeout)
    : fault_(std::make_shared<detail::ThreadFaultState>()) {
  if (size < 1) throw UsageError(fmt::format("a thread world needs at least 1 rank, got {}", size));
  fault_->timeout_ms.store(timeout.count());
  group_ = std::make_shared<detail::ThreadGroup>(size, fault_);
}

int ThreadWorld::size() const { return group_->size; }

std::unique_ptr<ThreadCommunicator> ThreadWorld::communicator(int rank) {
  GCB_CHECK(rank >= 0 && rank < group_->size, fmt::format("rank {} outside world of {}", rank, group_->size));
  return std::make_unique<ThreadCommunicator>(group_, rank);
}

void ThreadWorld::abort(std::string reason) { fault_->abort(reason); }
bool ThreadWorld::aborted() const { return fault_->aborted.load(); }
void ThreadWorld::set_timeout(std::chrono::milliseconds timeout) { fault_->timeout_ms.store(timeout.count()); }
std::chrono::milliseconds ThreadWorld::timeout() const {
  return std::chrono::milliseconds(fault_->timeout_ms.load());
}

// --- ThreadCommunicator: collectives ----------------------------------------------------------

ThreadCommunicator::ThreadCommunicator(std::shared_ptr<detail::ThreadGroup> group, int rank)
    : group_(std::move(group)), rank_(rank) {}

ThreadCommunicator::~ThreadCommunicator() = default;

int ThreadCommunicator::size() const { return group_->size; }

void ThreadCommunicator::run_collective(const char* name, const void* send, size_t send_bytes,
                                        void* recv, size_t recv_bytes,
                                        const std::function<void(void* out)>& compute) {
  auto& g = *group_;
  g.fault->throw_if_aborted(name);
  // Other ranks read our send buffer until the second rendezvous, so an output that overlaps
  // it (in place) is built aside and copied in afterwards.
  const bool aside = overlaps(send, send_bytes, recv, recv_bytes);
  if (aside) scratch_.resize(recv_bytes);
  void* out = aside ? static_cast<void*>(scratch_.data()) : recv;
  {
    std::lock_guard lk(g.mu);
    g.send_slot[static_cast<size_t>(rank_)] = send;
  }
  g.rendezvous(rank_, name);
  // Every rank checks every signature, so no rank reads a buffer of the wrong size.
  detail::OpSignature mine;
  detail::OpSignature other;
  int other_rank = -1;
  {
    std::lock_guard lk(g.mu);
    mine = g.signature[static_cast<size_t>(rank_)];
    for (int r = 0; r < size() && other_rank < 0; ++r)
      if (!(g.signature[static_cast<size_t>(r)] == mine)) {
        other = g.signature[static_cast<size_t>(r)];
        other_rank = r;
      }
  }
  if (other_rank >= 0) {
    const std::string reason = fmt::format(
        "mismatched collective: group rank {} called {}(count {}, {}, {}) but group rank {} called {}(count {}, {}, {})",
        rank_, mine.name, mine.count, dtype_name(mine.type), mine.detail, other_rank, other.name,
        other.count, dtype_name(other.type), other.detail);
    g.fault->abort(reason);
    g.fault->throw_if_aborted(name);
  }
  compute(out);
  g.rendezvous(rank_, name);
  if (aside) copy(recv, out, recv_bytes);
}

namespace {
// Records what this rank is about to call, for the mismatch check in run_collective.
void publish_signature(detail::ThreadGroup& g, int rank, const detail::OpSignature& sig) {
  std::lock_guard lk(g.mu);
  g.signature[static_cast<size_t>(rank)] = sig;
}
}  // namespace

void ThreadCommunicator::all_reduce(const void* send, void* recv, size_t count, DType t, ReduceOp op) {
  const size_t bytes = count * dtype_size(t);
  publish_signature(*group_, rank_, {"all_reduce", count, t, static_cast<int>(op)});
  run_collective("all_reduce", send, bytes, recv, bytes, [&](void* out) {
    const auto& slots = group_->send_slot;
    copy(out, slots[0], bytes);
    for (int r = 1; r < size(); ++r) reduce_into(t, op, out, slots[static_cast<size_t>(r)], count);
    finish_reduction(t, op, out, count, size());
  });
}

void ThreadCommunicator::all_gather(const void* send, void* recv, size_t count, DType t) {
  const size_t bytes = count * dtype_size(t);
  publish_signature(*group_, rank_, {"all_gather", count, t, 0});
  run_collective("all_gather", send, bytes, recv, bytes * static_cast<size_t>(size()), [&](void* out) {
    for (int r = 0; r < size(); ++r)
      copy(at(out, static_cast<size_t>(r) * bytes), group_->send_slot[static_cast<size_t>(r)], bytes);
  });
}

void ThreadCommunicator::reduce_scatter(const void* send, void* recv, size_t count, DType t, ReduceOp op) {
  const size_t bytes = count * dtype_size(t);
  const size_t mine = static_cast<size_t>(rank_) * bytes;
  publish_signature(*group_, rank_, {"reduce_scatter", count, t, static_cast<int>(op)});
  run_collective("reduce_scatter", send, bytes * static_cast<size_t>(size()), recv, bytes, [&](void* out) {
    const auto& slots = group_->send_slot;
    copy(out, at(slots[0], mine), bytes);
    for (int r = 1; r < size(); ++r) reduce_into(t, op, out, at(slots[static_cast<size_t>(r)], mine), count);
    finish_reduction(t, op, out, count, size());
  });
}

void ThreadCommunicator::broadcast(const void* send, void* recv, size_t count, DType t, int root) {
  check_peer(root, "broadcast root");
  const size_t bytes = count * dtype_size(t);
  publish_signature(*group_, rank_, {"broadcast", count, t, root});
  // Only the root's send buffer is read by others; elsewhere `send` is ignored.
  run_collective("broadcast", rank_ == root ? send : nullptr, rank_ == root ? bytes : 0, recv, bytes,
                 [&](void* out) { copy(out, group_->send_slot[static_cast<size_t>(root)], bytes); });
}

void ThreadCommunicator::reduce(const void* send, void* recv, size_t count, DType t, ReduceOp op, int root) {
  check_peer(root, "reduce root");
  const size_t bytes = count * dtype_size(t);
  const bool is_root = rank_ == root;
  publish_signature(*group_, rank_, {"reduce", count, t, static_cast<int>(op) * 1024 + root});
  // recv is only written (and only needs to exist) on the root.
  run_collective("reduce", send, bytes, is_root ? recv : nullptr, is_root ? bytes : 0, [&](void* out) {
    if (!is_root) return;
    const auto& slots = group_->send_slot;
    copy(out, slots[0], bytes);
    for (int r = 1; r < size(); ++r) reduce_into(t, op, out, slots[static_cast<size_t>(r)], count);
    finish_reduction(t, op, out, count, size());
  });
}

void ThreadCommunicator::all_to_all(const void* send, void* recv, size_t count, DType t) {
  const size_t bytes = count * dtype_size(t);
  const size_t total = bytes * static_cast<size_t>(size());
  publish_signature(*group_, rank_, {"all_to_all", count, t, 0});
  run_collective("all_to_all", send, total, recv, total, [&](void* out) {
    for (int r = 0; r < size(); ++r)
      copy(at(out, static_cast<size_t>(r) * bytes),
           at(group_->send_slot[static_cast<size_t>(r)], static_cast<size_t>(rank_) * bytes), bytes);
  });
}

void ThreadCommunicator::barrier() {
  group_->fault->throw_if_aborted("barrier");
  group_->rendezvous(rank_, "barrier");
}

// --- point-to-point ---------------------------------------------------------------------------

void ThreadCommunicator::check_peer(int peer, const char* what) const {
  if (peer < 0 || peer >= size())
    throw UsageError(fmt::format("{} {} outside communicator of {} ranks", what, peer, size()));
}

void ThreadCommunicator::post_send(const void* buf, size_t bytes, int peer) {
  auto& g = *group_;
  g.fault->throw_if_aborted("send");
  std::vector<std::byte> message(bytes);
  copy(message.data(), buf, bytes);
  std::lock_guard lk(g.mu);
  g.mailbox[{rank_, peer}].push_back(std::move(message));
  g.cv.notify_all();
}

void ThreadCommunicator::complete_recv(void* buf, size_t bytes, int peer) {
  auto& g = *group_;
  g.fault->throw_if_aborted("recv");
  std::unique_lock lk(g.mu);
  auto& queue = g.mailbox[{peer, rank_}];
  g.wait(lk, "recv", [&] { return !queue.empty(); },
         [&] { return fmt::format("a message from group rank {} to group rank {}", peer, rank_); });
  std::vector<std::byte> message = std::move(queue.front());
  queue.pop_front();
  lk.unlock();
  if (message.size() != bytes) {
    g.fault->abort(fmt::format("recv on group rank {} expected {} B from group rank {}, got {} B", rank_,
                               bytes, peer, message.size()));
    g.fault->throw_if_aborted("recv");
  }
  copy(buf, message.data(), bytes);
}

void ThreadCommunicator::group_start() { ++group_depth_; }

void ThreadCommunicator::group_end() {
  GCB_CHECK(group_depth_ > 0, "group_end() without group_start()");
  if (--group_depth_ > 0) return;
  std::vector<PendingP2p> ops;
  ops.swap(pending_);
  // Sends never block, so posting all of them first lets every recv be matched.
  for (const auto& op : ops)
    if (op.is_send) post_send(op.send_buf, op.bytes, op.peer);
  for (const auto& op : ops)
    if (!op.is_send) complete_recv(op.recv_buf, op.bytes, op.peer);
}

void ThreadCommunicator::send(const void* buf, size_t count, DType t, int peer) {
  check_peer(peer, "send peer");
  const size_t bytes = count * dtype_size(t);
  if (group_depth_ > 0)
    pending_.push_back({true, buf, nullptr, bytes, peer});
  else
    post_send(buf, bytes, peer);
}

void ThreadCommunicator::recv(void* buf, size_t count, DType t, int peer) {
  check_peer(peer, "recv peer");
  const size_t bytes = count * dtype_size(t);
  if (group_depth_ > 0)
    pending_.push_back({false, nullptr, buf, bytes, peer});
  else
    complete_recv(buf, bytes, peer);
}

// --- split ------------------------------------------------------------------------------------

std::unique_ptr<Communicator> ThreadCommunicator::split(int color, int key) {
  auto& g = *group_;
  g.fault->throw_if_aborted("split");
  {
    std::lock_guard lk(g.mu);
    g.split_request[static_cast<size_t>(rank_)] = {color, key};
  }
  g.rendezvous(rank_, "split");
  // Members of my color ordered by (key, old rank); the first one creates the shared group.
  std::vector<std::pair<int, int>> members;  // (key, old rank)
  {
    std::lock_guard lk(g.mu);
    for (int r = 0; r < size(); ++r) {
      const auto [c, k] = g.split_request[static_cast<size_t>(r)];
      if (color >= 0 && c == color) members.emplace_back(k, r);
    }
  }
  std::sort(members.begin(), members.end());
  int new_rank = -1;
  for (size_t i = 0; i < members.size(); ++i)
    if (members[i].second == rank_) new_rank = static_cast<int>(i);
  const int leader = members.empty() ? -1 : members.front().second;
  if (leader == rank_) {
    auto child = std::make_shared<detail::ThreadGroup>(static_cast<int>(members.size()), g.fault);
    std::lock_guard lk(g.mu);
    g.split_result[static_cast<size_t>(rank_)] = std::move(child);
  }
  g.rendezvous(rank_, "split");
  if (color < 0) return nullptr;
  std::shared_ptr<detail::ThreadGroup> child;
  {
    // The leader overwrites its slot only in a later split, after everyone passed its first
    // rendezvous, i.e. after this read.
    std::lock_guard lk(g.mu);
    child = g.split_result[static_cast<size_t>(leader)];
  }
  return std::make_unique<ThreadCommunicator>(std::move(child), new_rank);
}

// --- run_ranks --------------------------------------------------------------------------------

namespace {

// Waits until every rank thread is done. After an abort, the other ranks leave their collectives
// within the timeout; a rank that is stuck outside any collective (a computation that never
// ends) cannot be interrupted or joined, so once the timeout has passed since the abort the
// process ends with exit 3, naming the ranks that never stopped.
void wait_or_end_process(const ThreadWorld& world, std::mutex& mu, std::condition_variable& done_cv,
                         const std::vector<bool>& done, const std::string& first_what) {
  std::unique_lock lk(mu);
  std::optional<std::chrono::steady_clock::time_point> aborted_at;
  while (std::find(done.begin(), done.end(), false) != done.end()) {
    done_cv.wait_for(lk, std::chrono::milliseconds(50));
    if (!world.aborted()) continue;
    const auto now = std::chrono::steady_clock::now();
    if (!aborted_at) aborted_at = now;
    if (now - *aborted_at <= world.timeout()) continue;
    std::string stuck;
    for (size_t r = 0; r < done.size(); ++r)
      if (!done[r]) stuck += fmt::format("{}{}", stuck.empty() ? "" : ",", r);
    std::fflush(stdout);
    std::fprintf(stderr,
                 "gcbench: timeout: rank(s) %s on host %s did not stop within %.1f s after the run was aborted (%s); "
                 "they are stuck outside any collective; ending the process\n",
                 stuck.c_str(), host_name().c_str(), static_cast<double>(world.timeout().count()) / 1e3,
                 first_what.empty() ? "a timeout" : first_what.c_str());
    std::fflush(stderr);
    _exit(kExitFault);
  }
}

}  // namespace

void run_rank_threads(ThreadWorld& world, const std::function<void(int)>& body, const std::string& where) {
  const int n = world.size();
  std::mutex mu;
  std::exception_ptr first;
  int first_rank = -1;
  std::string first_what;
  std::vector<bool> done(static_cast<size_t>(n), false);
  std::condition_variable done_cv;
  auto guarded = [&](int r) {
    set_error_rank(r);
    try {
      body(r);
    } catch (...) {
      std::string what = "unknown exception";
      try {
        throw;
      } catch (const std::exception& e) {
        what = e.what();
      } catch (...) {
      }
      {
        // Recorded before aborting, so the original failure is always the first one.
        std::lock_guard lk(mu);
        if (!first) {
          first = std::current_exception();
          first_rank = r;
          first_what = what;
        }
      }
      world.abort(what);
    }
    std::lock_guard lk(mu);
    done[static_cast<size_t>(r)] = true;
    done_cv.notify_all();
  };

  std::vector<std::thread> threads;
  threads.reserve(static_cast<size_t>(n));
  try {
    for (int r = 0; r < n; ++r) threads.emplace_back(guarded, r);
  } catch (...) {
    world.abort("could not start all rank threads");
    for (auto& t : threads) t.join();
    throw;
  }
  wait_or_end_process(world, mu, done_cv, done, first_what);
  for (auto& t : threads) t.join();
  if (!first) return;
  try {
    std::rethrow_exception(first);
  } catch (const UsageError&) {
    throw;
  } catch (...) {
    throw Fault(fmt::format("rank {}{} failed: {}", first_rank, where, first_what));
  }
}

void run_ranks(int n, const std::function<void(Communicator&)>& fn, std::chrono::milliseconds timeout) {
  ThreadWorld world(n, timeout);
  std::vector<std::unique_ptr<ThreadCommunicator>> comms;
  for (int r = 0; r < n; ++r) comms.push_back(world.communicator(r));
  run_rank_threads(world, [&](int r) { fn(*comms[static_cast<size_t>(r)]); });
}

}  // namespace gcb
