// The process-wide watchdog (watchdog.hpp): a slot per thread holding its WatchScope's start, and the monitor thread
// that checks them a few times per second and calls the expiry handler when a scope outlives its timeout.
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

namespace watchdog_detail {
constinit std::atomic<bool> armed{false};
}  // namespace watchdog_detail

namespace {

using watchdog_detail::armed;
using Clock = std::chrono::steady_clock;

// Nanoseconds on CLOCK_MONOTONIC_COARSE, read by the monitor alone (its tick is 1–4 ms, far
// below any timeout).
int64_t coarse_now_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

// One thread's open scopes, innermost last. Only the owning thread opens and closes entries, with
// a few relaxed/release stores and no lock or clock read: a mutex and a map node per MPI call were
// tens of ns on every small collective, and a coarse clock read still ~13 ns of a 0.2 µs call.
// Instead each opening gets a number, and the monitor times an entry from the first check that
// saw that number there: a scope's age is known to within one monitor period.
constexpr int kMaxDepth = 8;  // deeper scopes are not watched (nesting is 2–3 in practice)

struct Slot {
  struct Entry {
    std::atomic<const char*> what{nullptr};
    std::atomic<int> rank{-1};
    std::atomic<uint64_t> opening{0};  // which of the slot's openings this entry holds
    // The monitor's alone (under State::mu): the opening it last saw here, and when it first did.
    uint64_t seen_opening = 0;
    int64_t seen_at_ns = 0;
  };
  std::array<Entry, kMaxDepth> entries;
  int depth = 0;          // the owning thread's alone
  uint64_t openings = 0;  // the owning thread's alone
  Slot();
  ~Slot();
};

struct State {
  std::mutex mu;  // the slot list, the monitor's marks, timeout, action and `fired`
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
    s.cv.wait_for(lk, armed.load() ? period(s.timeout) : std::chrono::milliseconds(1000));
    const int64_t now = coarse_now_ns();
    // A gap far beyond the period means this process itself was stopped (SIGSTOP, a debugger)
    // or not scheduled: its waits did not last that long on their own, so they are not blamed.
    if (const int64_t gap = now - last;
        gap > to_ns(std::max<Clock::duration>(4 * period(s.timeout), std::chrono::seconds(1))))
      for (Slot* slot : s.slots)
        for (auto& e : slot->entries) e.seen_at_ns += gap;
    last = now;
    if (!armed.load() || s.fired) continue;
    for (Slot* slot : s.slots) {
      for (auto& e : slot->entries) {
        const char* what = e.what.load(std::memory_order_acquire);
        if (what == nullptr) continue;
        // Read after `what` (stored before it): this scope's opening, or a younger scope's.
        const uint64_t opening = e.opening.load(std::memory_order_relaxed);
        if (opening != e.seen_opening) {  // opened since the last check: its age starts now
          e.seen_opening = opening;
          e.seen_at_ns = now;
          continue;
        }
        const int64_t age = now - e.seen_at_ns;
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

bool WatchScope::open(const char* what) {
  Slot& slot = my_slot();
  if (slot.depth >= kMaxDepth) return false;  // not watched (see kMaxDepth)
  auto& e = slot.entries[static_cast<size_t>(slot.depth++)];
  e.opening.store(++slot.openings, std::memory_order_relaxed);
  e.rank.store(error_rank(), std::memory_order_relaxed);
  e.what.store(what, std::memory_order_release);  // published last: the monitor reads it first
  return true;
}

void WatchScope::close() {
  Slot& slot = my_slot();
  slot.entries[static_cast<size_t>(--slot.depth)].what.store(nullptr, std::memory_order_release);
}

void arm_watchdog(std::chrono::milliseconds timeout, std::function<void(const WatchExpiry&)> on_expiry) {
  State& s = state();
  std::lock_guard lk(s.mu);
  s.timeout = timeout;
  s.on_expiry = std::move(on_expiry);
  s.fired = false;
  armed.store(true);
  if (!s.monitor_started) {
    std::thread(monitor).detach();
    s.monitor_started = true;
  }
  s.cv.notify_all();
}

void disarm_watchdog() {
  State& s = state();
  std::lock_guard lk(s.mu);
  armed.store(false);
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
