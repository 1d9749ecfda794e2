// A process-wide watchdog for work that may never end: a peer rank that died, was stopped
// (SIGSTOP) or deadlocked leaves the other ranks blocked inside MPI calls that nothing else
// would end, and a computation can spin forever (a training step thrashing for memory). Code
// that must finish within the run's --timeout holds a WatchScope; a monitor thread checks a few
// times per second and, when a scope has lasted longer than the timeout, calls the expiry
// action once, which ends the process (MPI_Abort under a launcher, _exit otherwise). Whatever
// state the culprit is in, the others' scopes expire: the run ends within the timeout plus two
// of the monitor's periods (a scope's age counts from the first check that saw it open).
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <string>

namespace gcb {

struct WatchExpiry {
  std::string what;    // the scope that lasted too long ("MPI all_reduce", "training step")
  int rank = -1;       // error_rank() of the thread that entered it
  double seconds = 0;  // how long it had lasted, at least (timed from the first check that saw it)
  double timeout = 0;  // the armed timeout, seconds
};

namespace watchdog_detail {
// Whether the watchdog is armed: read inline by every WatchScope, so an unarmed scope costs one load.
extern std::atomic<bool> armed;
}  // namespace watchdog_detail

// Marks the enclosing block as watched. Costs one relaxed load while the watchdog is not armed,
// and a handful of stores into this thread's slot while it is: no lock and no clock read (the
// monitor times a scope from when it first saw it open), since every MPI call of an armed run
// opens one and the bare MPI call it is compared with lasts a fraction of a microsecond.
class WatchScope {
 public:
  // `what` must outlive the scope (a string literal).
  explicit WatchScope(const char* what) {
    if (watchdog_detail::armed.load(std::memory_order_relaxed)) watched_ = open(what);
  }
  ~WatchScope() {
    if (watched_) close();
  }
  WatchScope(const WatchScope&) = delete;
  WatchScope& operator=(const WatchScope&) = delete;

 private:
  static bool open(const char* what);  // false past the nesting limit (that scope is not watched)
  static void close();
  bool watched_ = false;  // an entry of this thread's slot is this scope's
};

// Arms the watchdog: from now on a scope older than `timeout` calls `on_expiry` on the monitor
// thread (at most once per arming). `on_expiry` must end the process or return after making
// the process end; scopes opened before arming are not watched. Re-arming replaces both.
void arm_watchdog(std::chrono::milliseconds timeout, std::function<void(const WatchExpiry&)> on_expiry);
void disarm_watchdog();

// The expiry line every action prints: "gcbench: timeout: rank R on host H spent S s in WHAT
// (--timeout T s)".
std::string watchdog_message(const WatchExpiry& e);

// The default action: prints watchdog_message(e) + `detail` on stderr, flushes stdio and calls
// _exit(kExitFault) (rank threads that never return cannot be joined, so nothing else would end
// the process).
[[noreturn]] void exit_on_expiry(const WatchExpiry& e, const std::string& detail = "");

}  // namespace gcb
