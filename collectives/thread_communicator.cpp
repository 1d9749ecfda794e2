// ThreadCommunicator: every collective is "publish this rank's input, rendezvous, each rank builds
// its own output by reading the others' inputs in rank order" (plus a second rendezvous when
// inputs are read in place). Point-to-point goes through per-(src,dst) mailboxes of copied
// messages. All waits poll a shared abort flag.
#include "collectives/thread_communicator.hpp"

#include <pthread.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <deque>
#include <fmt/format.h>
#include <map>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>

#include "collectives/rendezvous.hpp"
#include "core/error.hpp"

namespace gcb {

namespace detail {

// Shared by a world and every communicator split from it: one failure stops them all.
struct ThreadFaultState {
  std::atomic<bool> aborted{false};
  std::atomic<int64_t> timeout_ms{ThreadWorld::kDefaultTimeout.count()};
  bool spin = true;  // rank threads ≤ usable cores: waiters may spin before they yield and sleep
  std::mutex mu;
  std::string message;  // "rank R on host H: reason", set once by the first abort

  void abort(const std::string& reason) {
    std::lock_guard lk(mu);
    if (aborted.load()) return;
    message = fmt::format("rank {} on host {}: {}", error_rank(), host_name(), reason);
    aborted.store(true);
  }
  void throw_if_aborted(const char* what) {
    if (!aborted.load(std::memory_order_relaxed)) return;
    std::lock_guard lk(mu);
    throw Fault(fmt::format("threads communicator aborted (seen by rank {} in {}): {}", error_rank(), what, message));
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

// What one rank publishes for the collective in flight. Written by that rank before it arrives
// at the rendezvous, read by the others after it (the rendezvous orders the two). Each rank has
// two slots, used by collectives that start on odd and even rendezvous epochs: a rank may fill
// one for its next collective while slower ranks still read the other.
struct alignas(64) RankSlot {
  OpSignature signature;
  const std::byte* input = nullptr;   // the send buffer, or inline_input on the small path
  const std::byte* result = nullptr;  // chunked all_reduce: where this rank's reduced chunk is
  alignas(64) std::array<std::byte, ThreadCommunicator::kInlineBytes> inline_input;
};

struct ThreadGroup {
  ThreadGroup(int n, std::shared_ptr<ThreadFaultState> f)
      : size(n),
        fault(std::move(f)),
        meet(n, fault->spin),
        slots(2 * static_cast<size_t>(n)),
        posted(std::make_unique<std::atomic<uint64_t>[]>(static_cast<size_t>(n) * static_cast<size_t>(n))),
        mail_waiter(fault->spin),
        split_request(static_cast<size_t>(n)),
        split_result(static_cast<size_t>(n)) {}

  const int size;
  const std::shared_ptr<ThreadFaultState> fault;
  Rendezvous meet;
  std::vector<RankSlot> slots;  // [parity · size + rank]
  // Point-to-point: messages queued per (src, dst) under mu; posted[src · size + dst] counts the
  // messages ever queued, so a receiver waits on an atomic instead of the lock.
  std::unique_ptr<std::atomic<uint64_t>[]> posted;
  SpinWaiter mail_waiter;
  std::mutex mu;
  std::map<std::pair<int, int>, std::deque<std::vector<std::byte>>> mailbox;  // (src, dst)
  // Split requests, under mu.
  std::vector<std::pair<int, int>> split_request;  // (color, key)
  std::vector<std::shared_ptr<ThreadGroup>> split_result;

  RankSlot& slot(uint64_t parity, int rank) {
    return slots[parity * static_cast<size_t>(size) + static_cast<size_t>(rank)];
  }
  // Parity of the epoch `rank`'s next rendezvous will be.
  uint64_t next_parity(int rank) const { return (meet.arrived_epoch(rank) + 1) & 1; }
  std::atomic<uint64_t>& posted_count(int src, int dst) {
    return posted[static_cast<size_t>(src) * static_cast<size_t>(size) + static_cast<size_t>(dst)];
  }

  // The poll of a wait: throws once the world aborted; after the timeout (counted from the first
  // poll, so the fast path reads no clock) aborts everything, naming waiting_for().
  template <class Describe>
  auto poll_for(const char* what, Describe waiting_for) {
    return [this, what, waiting_for, start = std::optional<std::chrono::steady_clock::time_point>()]() mutable {
      fault->throw_if_aborted(what);
      const auto now = std::chrono::steady_clock::now();
      if (!start) start = now;
      const auto timeout = std::chrono::milliseconds(fault->timeout_ms.load());
      if (now - *start <= timeout) return;
      fault->abort(fmt::format("timed out after {:.1f} s in {} waiting for {}",
                               static_cast<double>(timeout.count()) / 1e3, what, waiting_for()));
      fault->throw_if_aborted(what);
    };
  }

  void rendezvous(int rank, const char* what) {
    meet.arrive_and_wait(rank, poll_for(what, [this, rank] {
                           const uint64_t epoch = meet.arrived_epoch(rank);
                           std::string missing;
                           for (int r = 0; r < size; ++r)
                             if (meet.arrived_epoch(r) < epoch)
                               missing += fmt::format("{}{}", missing.empty() ? "" : ",", r);
                           return fmt::format("rank(s) {} of this {}-rank communicator", missing, size);
                         }));
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

// A copy onto itself (this rank's own chunk of an in-place result) writes nothing: others may be
// reading those bytes.
void copy(void* dst, const void* src, size_t bytes) {
  if (bytes > 0 && dst != src) std::memcpy(dst, src, bytes);
}

}  // namespace

// --- ThreadWorld ----------------------------------------------------------------------------

ThreadWorld::ThreadWorld(int size, std::chrono::milliseconds timeout)
    : fault_(std::make_shared<detail::ThreadFaultState>()) {
  if (size < 1) throw UsageError(fmt::format("a thread world needs at least 1 rank, got {}", size));
  fault_->timeout_ms.store(timeout.count());
  // More rank threads than cores: a spinning waiter would only steal the core its peer needs.
  fault_->spin = size <= detail::usable_cpus();
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
std::chrono::milliseconds ThreadWorld::timeout() const { return std::chrono::milliseconds(fault_->timeout_ms.load()); }

// --- ThreadCommunicator: collectives ----------------------------------------------------------

ThreadCommunicator::ThreadCommunicator(std::shared_ptr<detail::ThreadGroup> group, int rank)
    : group_(std::move(group)),
      rank_(rank),
      inputs_(static_cast<size_t>(group_->size)),
      received_(static_cast<size_t>(group_->size), 0) {}

ThreadCommunicator::~ThreadCommunicator() = default;

int ThreadCommunicator::size() const { return group_->size; }

detail::RankSlot& ThreadCommunicator::publish(const detail::OpSignature& sig, const void* send, size_t send_bytes,
                                              bool copy_inline) {
  auto& g = *group_;
  g.fault->throw_if_aborted(sig.name);
  detail::RankSlot& mine = g.slot(g.next_parity(rank_), rank_);
  mine.signature = sig;
  if (copy_inline) {
    copy(mine.inline_input.data(), send, send_bytes);
    mine.input = mine.inline_input.data();
  } else {
    mine.input = static_cast<const std::byte*>(send);
  }
  return mine;
}

void ThreadCommunicator::meet_and_check(const detail::OpSignature& mine) {
  auto& g = *group_;
  const uint64_t parity = g.next_parity(rank_);
  g.rendezvous(rank_, mine.name);
  // Every rank checks every signature, so no rank reads a buffer of the wrong size.
  for (int r = 0; r < size(); ++r) {
    const detail::RankSlot& s = g.slot(parity, r);
    inputs_[static_cast<size_t>(r)] = s.input;
    if (s.signature == mine) continue;
    const detail::OpSignature& other = s.signature;
    g.fault->abort(fmt::format(
        "mismatched collective: group rank {} called {}(count {}, {}, {}) but group rank {} called {}(count {}, {}, {})",
        rank_, mine.name, mine.count, dtype_name(mine.type), mine.detail, r, other.name, other.count,
        dtype_name(other.type), other.detail));
    g.fault->throw_if_aborted(mine.name);
  }
}

void ThreadCommunicator::run_collective(const detail::OpSignature& sig, size_t input_bytes, const void* send,
                                        size_t send_bytes, void* recv, size_t recv_bytes, const Compute& compute,
                                        size_t kept) {
  // Small inputs are copied into this rank's slot: the others read the copy, so the collective
  // needs one rendezvous and may write recv at once, whatever overlaps what.
  if (input_bytes <= kInlineBytes) {
    publish(sig, send, send_bytes, true);
    meet_and_check(sig);
    compute(static_cast<std::byte*>(recv), inputs_);
    return;
  }
  // Large inputs are read in place by the others until the second rendezvous, so an output that
  // overlaps this rank's own send buffer is built aside and copied in afterwards.
  const bool input_kept = kept != kNothingKept && send == static_cast<const std::byte*>(recv) + kept;
  const bool aside = !input_kept && overlaps(send, send_bytes, recv, recv_bytes);
  if (aside) scratch_.resize(recv_bytes);
  auto* out = aside ? scratch_.data() : static_cast<std::byte*>(recv);
  publish(sig, send, send_bytes, false);
  meet_and_check(sig);
  compute(out, inputs_);
  group_->rendezvous(rank_, sig.name);
  if (aside) copy(recv, out, recv_bytes);
}

namespace {

// out = in[0] (op) in[1] (op) … in rank order, then the avg division: the one reduction order of
// this backend (and of MpiCommunicator's rank-ordered mode).
void reduce_in_rank_order(std::byte* out, const std::vector<const std::byte*>& in, size_t offset, size_t count, DType t,
                          ReduceOp op) {
  copy(out, in[0] + offset, count * dtype_size(t));
  for (size_t r = 1; r < in.size(); ++r) reduce_into(t, op, out, in[r] + offset, count);
  finish_reduction(t, op, out, count, static_cast<int>(in.size()));
}

}  // namespace

void ThreadCommunicator::all_reduce(const void* send, void* recv, size_t count, DType t, ReduceOp op) {
  const size_t bytes = count * dtype_size(t);
  const detail::OpSignature sig{"all_reduce", count, t, static_cast<int>(op)};
  if (bytes >= kChunkedBytes && size() > 1) return all_reduce_chunked(sig, send, recv);
  run_collective(sig, bytes, send, bytes, recv, bytes,
                 [&](std::byte* out, const auto& in) { reduce_in_rank_order(out, in, 0, count, t, op); });
}

void ThreadCommunicator::all_reduce_chunked(const detail::OpSignature& sig, const void* send, void* recv) {
  // Reduce-scatter then all-gather through shared memory: rank r reduces chunk r of every input
  // (in rank order, so each element is computed exactly as by the plain path), then every rank
  // copies the other chunks from their owners. Each rank reads 2× the buffer instead of n×.
  auto& g = *group_;
  const size_t es = dtype_size(sig.type), count = sig.count;
  const auto n = static_cast<size_t>(size());
  auto chunk = [&](size_t r) {  // [first, first + len) elements; the first count % n ranks get one more
    const size_t base = count / n, extra = count % n;
    return std::pair{r * base + std::min(r, extra), base + (r < extra ? 1 : 0)};
  };
  const uint64_t parity = g.next_parity(rank_);
  detail::RankSlot& mine = publish(sig, send, count * es, false);
  const auto [first, len] = chunk(static_cast<size_t>(rank_));
  // In place (or overlapping) the others still read this chunk of our send buffer: reduce aside.
  const bool aside = overlaps(send, count * es, recv, count * es);
  if (aside) scratch_.resize(len * es);
  std::byte* result = aside ? scratch_.data() : static_cast<std::byte*>(recv) + first * es;
  mine.result = result;
  meet_and_check(sig);
  reduce_in_rank_order(result, inputs_, first * es, len, sig.type, static_cast<ReduceOp>(sig.detail));
  g.rendezvous(rank_, sig.name);
  for (size_t r = 0; r < n; ++r) {
    const auto [f, l] = chunk(r);
    const std::byte* from = r == static_cast<size_t>(rank_) ? result : g.slot(parity, static_cast<int>(r)).result;
    if (from != static_cast<std::byte*>(recv) + f * es) copy(static_cast<std::byte*>(recv) + f * es, from, l * es);
  }
  g.rendezvous(rank_, sig.name);
}

void ThreadCommunicator::all_gather(const void* send, void* recv, size_t count, DType t) {
  const size_t bytes = count * dtype_size(t);
  run_collective(
      {"all_gather", count, t, 0}, bytes, send, bytes, recv, bytes * static_cast<size_t>(size()),
      [&](std::byte* out, const auto& in) {
        for (size_t r = 0; r < in.size(); ++r) copy(out + r * bytes, in[r], bytes);
      },
      static_cast<size_t>(rank_) * bytes);
}

void ThreadCommunicator::reduce_scatter(const void* send, void* recv, size_t count, DType t, ReduceOp op) {
  const size_t bytes = count * dtype_size(t);
  const size_t mine = static_cast<size_t>(rank_) * bytes;
  const size_t total = bytes * static_cast<size_t>(size());
  run_collective({"reduce_scatter", count, t, static_cast<int>(op)}, total, send, total, recv, bytes,
                 [&](std::byte* out, const auto& in) { reduce_in_rank_order(out, in, mine, count, t, op); });
}

void ThreadCommunicator::broadcast(const void* send, void* recv, size_t count, DType t, int root) {
  check_peer(root, "broadcast root");
  const size_t bytes = count * dtype_size(t);
  // Only the root's send buffer is read by others; elsewhere `send` is ignored.
  const bool is_root = rank_ == root;
  run_collective(
      {"broadcast", count, t, root}, bytes, is_root ? send : nullptr, is_root ? bytes : 0, recv, bytes,
      [&](std::byte* out, const auto& in) { copy(out, in[static_cast<size_t>(root)], bytes); },
      is_root ? 0 : kNothingKept);
}

void ThreadCommunicator::reduce(const void* send, void* recv, size_t count, DType t, ReduceOp op, int root) {
  check_peer(root, "reduce root");
  const size_t bytes = count * dtype_size(t);
  const bool is_root = rank_ == root;
  // recv is only written (and only needs to exist) on the root.
  run_collective({"reduce", count, t, static_cast<int>(op) * 1024 + root}, bytes, send, bytes, is_root ? recv : nullptr,
                 is_root ? bytes : 0, [&](std::byte* out, const auto& in) {
                   if (is_root) reduce_in_rank_order(out, in, 0, count, t, op);
                 });
}

void ThreadCommunicator::all_to_all(const void* send, void* recv, size_t count, DType t) {
  const size_t bytes = count * dtype_size(t);
  const size_t total = bytes * static_cast<size_t>(size());
  const size_t mine = static_cast<size_t>(rank_) * bytes;
  run_collective({"all_to_all", count, t, 0}, total, send, total, recv, total, [&](std::byte* out, const auto& in) {
    for (size_t r = 0; r < in.size(); ++r) copy(out + r * bytes, in[r] + mine, bytes);
  });
}

void ThreadCommunicator::barrier() {
  const detail::OpSignature sig{"barrier", 0, DType::i8, 0};
  publish(sig, nullptr, 0, true);
  meet_and_check(sig);
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
  {
    std::lock_guard lk(g.mu);
    g.mailbox[{rank_, peer}].push_back(std::move(message));
  }
  g.posted_count(rank_, peer).fetch_add(1, std::memory_order_seq_cst);
  g.mail_waiter.notify();
}

void ThreadCommunicator::complete_recv(void* buf, size_t bytes, int peer) {
  auto& g = *group_;
  g.fault->throw_if_aborted("recv");
  uint64_t& received = received_[static_cast<size_t>(peer)];
  const std::atomic<uint64_t>& posted = g.posted_count(peer, rank_);
  g.mail_waiter.wait([&] { return posted.load(std::memory_order_acquire) > received; }, g.poll_for("recv", [&] {
    return fmt::format("a message from group rank {} to group rank {}", peer, rank_);
  }));
  std::vector<std::byte> message;
  {
    std::lock_guard lk(g.mu);
    auto& queue = g.mailbox[{peer, rank_}];
    message = std::move(queue.front());
    queue.pop_front();
  }
  ++received;
  if (message.size() != bytes) {
    g.fault->abort(fmt::format("recv on group rank {} expected {} B from group rank {}, got {} B", rank_, bytes, peer,
                               message.size()));
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
  {
    std::lock_guard lk(g.mu);
    g.split_request[static_cast<size_t>(rank_)] = {color, key};
  }
  const detail::OpSignature sig{"split", 0, DType::i8, 0};
  publish(sig, nullptr, 0, true);
  meet_and_check(sig);
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

// Pins the calling thread to the rank-th CPU of `allowed`: that CPU, or -1 when there is none or
// pinning failed.
int pin_to_own_cpu(const cpu_set_t& allowed, int rank) {
  const int cpu = detail::nth_cpu(allowed, rank);
  if (cpu < 0) return -1;
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(cpu, &one);
  return pthread_setaffinity_np(pthread_self(), sizeof(one), &one) == 0 ? cpu : -1;
}

// spread_rank_threads without the giving back: `allowed` receives the mask to restore.
int spread_and_meet(Communicator& host_comm, cpu_set_t& allowed) {
  CPU_ZERO(&allowed);
  if (host_comm.size() < 2 || host_comm.size() > detail::usable_cpus()) return -1;
  // Waiting for the scheduler was not enough: on a busy machine a fresh world's two rank threads
  // still shared one CPU after 1000 barriers in most worlds (every op then took the 50 µs spin
  // and a yield). Pinning moves a thread at once; giving the mask back leaves it there (spinning
  // threads on separate CPUs are balanced), and the thread, and any thread it starts (OpenMP,
  // BLAS), keeps the process's freedom.
  const int cpu = pthread_getaffinity_np(pthread_self(), sizeof(allowed), &allowed) == 0
                      ? pin_to_own_cpu(allowed, host_comm.rank())
                      : -1;
  // Every rank has moved before any lets go, and the rendezvous is warm before anything is timed.
  for (int i = 0; i < 100; ++i) host_comm.barrier();
  return cpu;
}

}  // namespace

int spread_rank_threads(Communicator& host_comm) {
  cpu_set_t allowed;
  const int cpu = spread_and_meet(host_comm, allowed);
  if (cpu >= 0) pthread_setaffinity_np(pthread_self(), sizeof(allowed), &allowed);
  return cpu;
}

RanksKeptApart::RanksKeptApart(Communicator& host_comm)
    : comm_(host_comm), cpu_(spread_and_meet(host_comm, allowed_)) {}

std::vector<int32_t> RanksKeptApart::all_cpus() const {
  const int32_t mine = cpu_;
  std::vector<int32_t> cpus(static_cast<size_t>(comm_.size()));
  comm_.all_gather(&mine, cpus.data(), 1, DType::i32);
  return cpus;
}

RanksKeptApart::~RanksKeptApart() {
  if (cpu_ >= 0) pthread_setaffinity_np(pthread_self(), sizeof(allowed_), &allowed_);
}

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
