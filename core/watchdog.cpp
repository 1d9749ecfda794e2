#include "core/watchdog.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <fmt/format.h>
#include <map>
#include <mutex>
#include <thread>

#include "core/error.hpp"

namespace gcb {

namespace {

using Clock = std::chrono::steady_clock;

struct Scope {
  const char* what;
  int rank;
  Clock::time_point start;
};

struct State {
  std::atomic<bool> armed{false};
  std::mutex mu;
  std::condition_variable cv;
  std::map<unsigned long long, Scope> scopes;
  unsigned long long next_id = 0;
  std::chrono::milliseconds timeout{0};
  std::function<void(const WatchExpiry&)> on_expiry;
  bool fired = false;
  bool monitor_started = false;
};

State& state() {
  static State* s = new State;  // never destroyed: the detached monitor may outlive main()
  return *s;
}

// Checks often enough that the end comes well within a second of the timeout.
std::chrono::milliseconds period(std::chrono::milliseconds timeout) {
  return std::clamp(timeout / 4, std::chrono::milliseconds(10), std::chrono::milliseconds(250));
}

void monitor() {
  State& s = state();
  std::unique_lock lk(s.mu);
  auto last = Clock::now();
  for (;;) {
    s.cv.wait_for(lk, s.armed.load() ? period(s.timeout) : std::chrono::milliseconds(1000));
    const auto now = Clock::now();
    // A gap far beyond the period means this process itself was stopped (SIGSTOP, a debugger)
    // or not scheduled: its waits did not last that long on their own, so they are not blamed.
    if (const auto gap = now - last; gap > std::max<Clock::duration>(4 * period(s.timeout), std::chrono::seconds(1)))
      for (auto& [id, scope] : s.scopes) scope.start += gap;
    last = now;
    if (!s.armed.load() || s.fired) continue;
    for (const auto& [id, scope] : s.scopes) {
      if (now - scope.start <= s.timeout) continue;
      WatchExpiry e{scope.what, scope.rank, std::chrono::duration<double>(now - scope.start).count(),
                    std::chrono::duration<double>(s.timeout).count()};
      s.fired = true;
      auto action = s.on_expiry;
      lk.unlock();
      action(e);
      lk.lock();
      break;
    }
  }
}

}  // namespace

WatchScope::WatchScope(const char* what) {
  State& s = state();
  if (!s.armed.load(std::memory_order_relaxed)) return;
  std::lock_guard lk(s.mu);
  id_ = ++s.next_id;
  s.scopes.emplace(id_, Scope{what, error_rank(), Clock::now()});
}

WatchScope::~WatchScope() {
  if (id_ == 0) return;
  State& s = state();
  std::lock_guard lk(s.mu);
  s.scopes.erase(id_);
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
