// ThreadCommunicator: ranks are threads of one process sharing host memory (docs/design.md
// "Communicator"). It is the plain, obviously-correct backend: every reduction is done in rank
// order 0..n-1, so results are bitwise identical across ranks, reruns and the MPI backend.
#pragma once

#include <sched.h>

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <cstdint>
#include <vector>

#include "collectives/communicator.hpp"

namespace gcb {

namespace detail {
struct ThreadFaultState;  // abort flag + timeout shared by a world and everything split from it
struct ThreadGroup;       // rendezvous state of one communicator's ranks
struct OpSignature;       // what a rank called (op, count, dtype, op detail)
struct RankSlot;          // what a rank publishes for the collective in flight
}  // namespace detail

class ThreadCommunicator;

// The shared state of N rank threads. Create it once, then give each rank thread its own
// communicator(rank). Every wait inside a collective polls the abort flag and gives up after
// timeout(): no rank ever blocks forever.
class ThreadWorld {
 public:
  static constexpr std::chrono::milliseconds kDefaultTimeout{300'000};

  explicit ThreadWorld(int size, std::chrono::milliseconds timeout = kDefaultTimeout);
  int size() const;
  // One per rank; call from (or hand to) that rank's thread. Each rank asks exactly once.
  std::unique_ptr<ThreadCommunicator> communicator(int rank);

  // Makes every rank blocked in (or later entering) a collective of this world, or of any
  // communicator split from it, throw gcb::Fault naming the aborting rank (error_rank() of the
  // calling thread), its host and `reason`. The first abort wins; later calls are ignored.
  void abort(std::string reason);
  bool aborted() const;
  void set_timeout(std::chrono::milliseconds timeout);
  std::chrono::milliseconds timeout() const;

 private:
  std::shared_ptr<detail::ThreadFaultState> fault_;
  std::shared_ptr<detail::ThreadGroup> group_;
};

class ThreadCommunicator final : public Communicator {
 public:
  // Per-rank inputs up to this size are copied into the group's shared slots, so the collective
  // needs one rendezvous instead of two (latency-bound sizes).
  static constexpr size_t kInlineBytes = 4096;
  // all_reduce from this size on is a shared-memory reduce-scatter + all-gather (three
  // rendezvous, 2× the buffer read per rank instead of n×); below, every rank reduces it all.
  static constexpr size_t kChunkedBytes = size_t{64} << 10;

  ThreadCommunicator(std::shared_ptr<detail::ThreadGroup> group, int rank);
  ~ThreadCommunicator() override;

  int rank() const override { return rank_; }
  int size() const override;
  std::string_view backend() const override { return "threads"; }
  MemorySpace memory() const override { return MemorySpace::host; }

  // All calls block until this rank's output is complete and no other rank still reads this
  // rank's buffers. Buffers of different ranks must not overlap; in place is send == recv (and,
  // for all_gather/reduce_scatter, NCCL's recv + rank·count / send + rank·count forms).
  void all_reduce(const void* send, void* recv, size_t count, DType t, ReduceOp op) override;
  void all_gather(const void* send, void* recv, size_t count, DType t) override;
  void reduce_scatter(const void* send, void* recv, size_t count, DType t, ReduceOp op) override;
  void broadcast(const void* send, void* recv, size_t count, DType t, int root) override;
  void reduce(const void* send, void* recv, size_t count, DType t, ReduceOp op, int root) override;
  void all_to_all(const void* send, void* recv, size_t count, DType t) override;
  // Sends are buffered (copied) so they never block. Inside a group, sends and recvs are only
  // recorded; group_end() posts all sends, then completes the recvs: no order can deadlock.
  // Buffers must stay valid until group_end(). Collectives inside a group run immediately.
  void group_start() override;
  void group_end() override;
  void send(const void* buf, size_t count, DType t, int peer) override;
  void recv(void* buf, size_t count, DType t, int peer) override;
  void barrier() override;
  void synchronize() override {}
  // color < 0 means "no group" (MPI_UNDEFINED / NCCL_SPLIT_NOCOLOR) and returns nullptr.
  std::unique_ptr<Communicator> split(int color, int key) override;

 private:
  struct PendingP2p {
    bool is_send;
    const void* send_buf;
    void* recv_buf;
    size_t bytes;
    int peer;
  };

  // compute(out, inputs): this rank's output from every rank's input (inputs[r], rank order).
  using Compute = std::function<void(std::byte* out, const std::vector<const std::byte*>& inputs)>;
  // Runs one collective: publish the input (a copy when the op's per-rank input, `input_bytes`,
  // the same on every rank, is small), rendezvous, check that every rank called the same thing,
  // compute; large inputs are read in place, so a second rendezvous keeps them alive and an
  // output overlapping this rank's input is built aside — unless the input sits in the output at
  // `kept`, the offset where the result is this rank's input unchanged (broadcast's root and
  // all_gather in place, as nccl-tests places them): then nothing there is written and nothing
  // is built aside.
  static constexpr size_t kNothingKept = static_cast<size_t>(-1);
  void run_collective(const detail::OpSignature& sig, size_t input_bytes, const void* send, size_t send_bytes,
                      void* recv, size_t recv_bytes, const Compute& compute, size_t kept = kNothingKept);
  void all_reduce_chunked(const detail::OpSignature& sig, const void* send, void* recv);
  detail::RankSlot& publish(const detail::OpSignature& sig, const void* send, size_t send_bytes, bool copy_inline);
  // Rendezvous, then every rank's input pointer into inputs_; a mismatched signature aborts all.
  void meet_and_check(const detail::OpSignature& mine);
  void post_send(const void* buf, size_t bytes, int peer);
  void complete_recv(void* buf, size_t bytes, int peer);
  void check_peer(int peer, const char* what) const;

  std::shared_ptr<detail::ThreadGroup> group_;
  int rank_;
  int group_depth_ = 0;
  std::vector<PendingP2p> pending_;
  std::vector<std::byte> scratch_;
  std::vector<const std::byte*> inputs_;
  std::vector<uint64_t> received_;  // messages taken from each peer's mailbox to this rank
};

// Runs fn(communicator) on n rank threads of a fresh ThreadWorld. Each thread calls
// set_error_rank(rank) first. The first exception aborts the world (so the other ranks end with
// gcb::Fault instead of hanging), all threads are joined, and the first failure is rethrown:
// a gcb::UsageError as is, anything else as gcb::Fault "rank R failed: <what>".
void run_ranks(int n, const std::function<void(Communicator&)>& fn,
               std::chrono::milliseconds timeout = ThreadWorld::kDefaultTimeout);

// The thread and fault handling behind run_ranks (and the World's thread mode): body(r) on one
// thread per rank of `world`, the same abort-join-rethrow rules; `where` follows the rank in the
// Fault message (e.g. " on host node7"). A rank thread still running world.timeout() after the
// abort (stuck outside any collective, so nothing can interrupt it) ends the process: a message
// naming it on stderr, then _exit(kExitFault).
void run_rank_threads(ThreadWorld& world, const std::function<void(int)>& body, const std::string& where = "");

// Called by every rank thread of a fresh world before anything is timed, when the ranks fit on
// the cores (nothing otherwise): rank r pins itself to the r-th CPU it may use, the ranks meet
// 100 times, and each gives its affinity mask back. A fresh world's threads can start on one core
// and stay there (on a busy machine, even through 1000 barriers); until they are apart every
// rendezvous waits out the spin and a yield, 50–180 µs where apart it takes 0.1–0.5 µs.
// Returns the CPU this rank was moved to, -1 when it was not (one rank, too few CPUs, no affinity).
int spread_rank_threads(Communicator& host_comm);

// spread_rank_threads without giving the mask back until this object ends (on the same thread):
// for a measurement of ranks on separate cores during which the scheduler must not put two of
// them on one CPU (plan's host probe: with the mask given back it at times did, and two ranks'
// back-to-back GEMMs then measured 0.87–1.96× one rank's between runs on a quiet 2-vCPU host;
// kept apart, 1.00–1.11×).
class RanksKeptApart {
 public:
  explicit RanksKeptApart(Communicator& host_comm);
  ~RanksKeptApart();
  RanksKeptApart(const RanksKeptApart&) = delete;
  RanksKeptApart& operator=(const RanksKeptApart&) = delete;
  int cpu() const { return cpu_; }  // as spread_rank_threads returns
  // Every rank's cpu(), in rank order (what a result records as extra.rank_cpus). Collective over
  // the communicator it was made with.
  std::vector<int32_t> all_cpus() const;

 private:
  Communicator& comm_;
  cpu_set_t allowed_;
  int cpu_ = -1;
};

}  // namespace gcb
