// The rendezvous of the threads backend: N rank threads meet once per epoch. A waiting thread
// spins with a pause instruction for a few microseconds (shared-memory collectives are that
// short), then yields its core, then sleeps on a condition variable, so an oversubscribed world
// (more rank threads than cores) still progresses promptly and an idle one costs nothing.
// Spinning is skipped entirely when the world has more rank threads than the process may use
// cores. The barrier is a shared arrival counter (Mellor-Crummey & Scott, "Algorithms for
// scalable synchronization on shared-memory multiprocessors", ACM TOCS 9(1), 1991, §3); waiting
// is spin-then-block (Karlin, Li, Manasse & Owicki, "Empirical studies of competitive spinning
// for a shared-memory multiprocessor", SOSP 1991).
#pragma once

#include <sched.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace gcb::detail {

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#elif defined(__aarch64__)
  asm volatile("yield" ::: "memory");
#endif
}

// CPUs this process may run on (sched_getaffinity), at least 1.
int usable_cpus();
// The n-th CPU (from 0, in CPU order) of `set`, or -1 when it has no more than n.
int nth_cpu(const cpu_set_t& set, int n);

// Waits for a condition that another thread makes true: spin, then yield, then sleep (see the
// file comment). Whoever makes a condition true calls notify(); it costs one atomic load unless
// a waiter sleeps.
class SpinWaiter {
 public:
  // How long a waiter spins, then yields, before it sleeps. Spinning covers a collective's
  // shared-memory round trip (well under a microsecond to tens of them); yielding covers a peer
  // that is runnable but descheduled; anything longer (a rank still computing) sleeps.
  static constexpr std::chrono::microseconds kSpinFor{50};
  static constexpr std::chrono::microseconds kYieldFor{2000};
  static constexpr std::chrono::milliseconds kSleepSlice{10};

  // `spin` false skips the spin phase (oversubscribed worlds).
  explicit SpinWaiter(bool spin) : spin_(spin) {}

  // Returns once done() is true. `poll()` is called about every 64 spins and every sleep slice;
  // it may throw (abort, timeout), which ends the wait.
  template <class Done, class Poll>
  void wait(Done&& done, Poll&& poll) {
    for (int i = 0; i < 64; ++i) {
      if (done()) return;
      cpu_relax();
    }
    poll();
    const auto start = std::chrono::steady_clock::now();
    const auto spin_until = start + (spin_ ? kSpinFor : std::chrono::microseconds(0));
    const auto yield_until = start + kYieldFor;
    for (;;) {
      for (int i = 0; i < 64; ++i) {
        if (done()) return;
        cpu_relax();
      }
      poll();
      const auto now = std::chrono::steady_clock::now();
      if (now >= yield_until) break;
      if (now >= spin_until) std::this_thread::yield();
    }
    // Registering as a sleeper and re-checking under the lock pairs with notify()'s seq_cst
    // read of sleepers_: either it sees us and wakes us, or we see its change.
    sleepers_.fetch_add(1, std::memory_order_seq_cst);
    struct Leave {
      std::atomic<int>& n;
      ~Leave() { n.fetch_sub(1, std::memory_order_seq_cst); }
    } leave{sleepers_};
    for (;;) {
      {
        std::unique_lock lk(mu_);
        if (done()) return;
        cv_.wait_for(lk, kSleepSlice);
        if (done()) return;
      }
      poll();
    }
  }

  // Call after making a waited-for condition true (with a seq_cst or release store).
  void notify() {
    if (sleepers_.load(std::memory_order_seq_cst) > 0) {
      std::lock_guard lk(mu_);
      cv_.notify_all();
    }
  }

 private:
  const bool spin_;
  alignas(64) std::atomic<int> sleepers_{0};
  std::mutex mu_;
  std::condition_variable cv_;
};

class Rendezvous {
 public:
  // `parties` threads meet; `spin` as SpinWaiter.
  Rendezvous(int parties, bool spin);

  int parties() const { return parties_; }
  // The epoch `party` last arrived at (0 before its first arrival); for timeout messages.
  uint64_t arrived_epoch(int party) const { return slots_[party].epoch.load(std::memory_order_relaxed); }

  // Arrives for `party`'s next epoch and returns once every party has arrived for it. Memory
  // written by any party before it arrived is visible to every party after the call returns.
  // `poll` as SpinWaiter::wait; if it throws, this party counts as arrived but stops waiting.
  template <class Poll>
  void arrive_and_wait(int party, Poll&& poll) {
    const uint64_t epoch = slots_[party].epoch.load(std::memory_order_relaxed) + 1;
    slots_[party].epoch.store(epoch, std::memory_order_relaxed);
    const uint64_t target = epoch * static_cast<uint64_t>(parties_);
    // Arrivals only ever grow: epoch e is complete once e·parties arrivals happened, and no party
    // can arrive for e + 1 before that.
    if (arrived_.fetch_add(1, std::memory_order_seq_cst) + 1 == target) {
      waiter_.notify();
      return;
    }
    waiter_.wait([&] { return arrived_.load(std::memory_order_acquire) >= target; }, poll);
  }

 private:
  struct alignas(64) PartySlot {
    std::atomic<uint64_t> epoch{0};
  };

  const int parties_;
  std::unique_ptr<PartySlot[]> slots_;
  alignas(64) std::atomic<uint64_t> arrived_{0};
  SpinWaiter waiter_;
};

}  // namespace gcb::detail
