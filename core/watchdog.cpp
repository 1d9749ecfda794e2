#include "core/watchdog.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <fmt/format.h>
#include <array>
#include <ctime>
#include <vector>
#include <mutex>
#include <thread>

#include "core/error.hpp"

namespace gcb {

namespace {

using Clock = std::chrono::steady_clock;

// Nanoseconds on CLOCK_MONOTONIC_COARSE: a few ns to read (its tick is 1–4 ms, far below any
// timeout), where a steady_clock read costs ~20 ns — paid twice per collective call.
int64_t coarse_now_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

// One thread's open scopes, innermost last. Only the owning thread opens and closes entries; the
// monitor reads them (and moves `start` forward after a pause of the process). An open and a
// close cost a few relaxed/release stores and no lock: a mutex and a map node per MPI call were
// tens of ns on every small collective.
constexpr int kMaxDepth = 8;  // deeper scopes are not watched (nesting is 2–3 in practice)

struct Slot {
  struct Entry {
    std::atomic<const char*> what{nullptr};
    std::atomic<int> rank{-1};
    std::atomic<int64_t> start{0};
  };
  std::array<Entry, kMaxDepth> entries;
  int depth = 0;  // the owning thread's alone
  Slot();
  ~Slot();
};

struct State {
  std::atomic<bool> armed{false};
  std::mutex mu;  // the slot list, timeout, action and `fired`
  std::condition_variable cv;
  std::vector<Slot*> slots;
  std::chrono::milliseconds timeout{0};
  std::function<void(const WatchExpiry&)> on_expiry;
  bool fired = false;
  bool monitor_started = false;
};

State& state() {
  static State* s = new State;  // never destroyed: the detached monitor may outlive main()
  return *s;
}

Slot::Slot() {
  State& s = state();
  std::lock_guard lk(s.mu);
  s.slots.push_back(this);
}

Slot::~Slot() {
  State& s = state();
  std::lock_guard lk(s.mu);
  s.slots.erase(std::remove(s.slots.begin(), s.slots.end(), this), s.slots.end());
}

Slot& my_slot() {
  thread_local Slot slot;
  return slot;
}

// Checks often enough that the end comes well within a second of the timeout.
std::chrono::milliseconds period(std::chrono::milliseconds timeout) {
  return std::clamp(timeout / 4, std::chrono::milliseconds(10), std::chrono::milliseconds(250));
}

int64_t to_ns(Clock::duration d) { return std::chrono::duration_cast<std::chrono::nanoseconds>(d).count(); }

void monitor() {
  State& s = state();
  std::unique_lock lk(s.mu);
  int64_t last = coarse_now_ns();
  for (;;) {
    s.cv.wait_for(lk, s.armed.load() ? period(s.timeout) : std::chrono::milliseconds(1000));
    const int64_t now = coarse_now_ns();
    // A gap far beyond the period means this process itself was stopped (SIGSTOP, a debugger)
    // or not scheduled: its waits did not last that long on their own, so they are not blamed.
    // A scope that closes and another that opens meanwhile keep their own start (the exchange
    // fails).
    if (const int64_t gap = now - last; gap > to_ns(std::max<Clock::duration>(4 * period(s.timeout), std::chrono::seconds(1))))
      for (Slot* slot : s.slots)
        for (auto& e : slot->entries) {
          int64_t start = e.start.load(std::memory_order_relaxed);
          if (e.what.load(std::memory_order_acquire) != nullptr)
            e.start.compare_exchange_strong(start, start + gap, std::memory_order_relaxed);
        }
    last = now;
    if (!s.armed.load() || s.fired) continue;
    for (Slot* slot : s.slots) {
      for (auto& e : slot->entries) {
        const char* what = e.what.load(std::memory_order_acquire);
        if (what == nullptr) continue;
        // Read after `what` (stored before it): this scope's start, or a younger scope's.
        const int64_t age = now - e.start.load(std::memory_order_relaxed);
        if (age <= to_ns(s.timeout)) continue;
        const WatchExpiry x{what, e.rank.load(std::memory_order_relaxed), static_cast<double>(age) * 1e-9,
                            std::chrono::duration<double>(s.timeout).count()};
        s.fired = true;
        auto action = s.on_expiry;
        lk.unlock();
        action(x);
        lk.lock();
        break;
      }
      if (s.fired) break;
    }
  }
}

}  // namespace

WatchScope::WatchScope(const char* what) {
  if (!state().armed.load(std::memory_order_relaxed)) return;
  Slot& slot = my_slot();
  if (slot.depth >= kMaxDepth) return;  // not watched (see kMaxDepth)
  auto& e = slot.entries[static_cast<size_t>(slot.depth++)];
  e.start.store(coarse_now_ns(), std::memory_order_relaxed);
  e.rank.store(error_rank(), std::memory_order_relaxed);
  e.what.store(what, std::memory_order_release);  // published last: the monitor reads it first
  watched_ = true;
}

WatchScope::~WatchScope() {
  if (!watched_) return;
  Slot& slot = my_slot();
  slot.entries[static_cast<size_t>(--slot.depth)].what.store(nullptr, std::memory_order_release);
}

void arm_watchdog(std::chrono::milliseconds timeout, std::function<void(const WatchExpiry&)> on_expiry) {
  State& s = state();
  std::lock_guard lk(s.mu);
  s.timeout = timeout;
  s.on_expiry = std::move(on_expiry);
  s.fired = false;
  s.armed.store(true);
  if (!s.monitor_started) {
    std::thread(monitor).detach();
    s.monitor_started = true;
  }
  s.cv.notify_all();
}

void disarm_watchdog() {
  State& s = state();
  std::lock_guard lk(s.mu);
  s.armed.store(false);
}

std::string watchdog_message(const WatchExpiry& e) {
  return fmt::format("gcbench: timeout: {} on host {} spent {:.1f} s in {} (--timeout {:g} s)",
                     e.rank >= 0 ? fmt::format("rank {}", e.rank) : std::string("a helper thread"), host_name(),
                     e.seconds, e.what, e.timeout);
}

void exit_on_expiry(const WatchExpiry& e, const std::string& detail) {
  const std::string line = watchdog_message(e) + (detail.empty() ? "" : "; " + detail) + "; ending the run\n";
  std::fflush(stdout);
  std::fputs(line.c_str(), stderr);
  std::fflush(stderr);
  _exit(kExitFault);
}

}  // namespace gcb
