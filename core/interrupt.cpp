// SIGINT/SIGTERM: a flag the safe points read, a second signal that ends at once (see the header).
// Only async-signal-safe calls in the handler (signal-safety(7)): write, unlinkat, _exit.
#include "core/interrupt.hpp"

#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cstring>
#include <mutex>

namespace gcb {

namespace {

std::atomic<int> g_signal{0};
std::atomic<bool> g_announce{false};
// When the first signal came (CLOCK_MONOTONIC, ns): a copy of it is not a second signal (on_signal).
std::atomic<long long> g_first_ns{0};
// The pending temporary file: its folder's descriptor (-1: none) and its name.
std::atomic<int> g_temp_dir{-1};
char g_temp_name[64] = {};

std::mutex g_stop_mu;
std::optional<Stop> g_stop;

void say(const char* text) { [[maybe_unused]] const ssize_t n = ::write(STDERR_FILENO, text, std::strlen(text)); }

long long monotonic_ns() {
  timespec t{};
  ::clock_gettime(CLOCK_MONOTONIC, &t);  // async-signal-safe (signal-safety(7))
  return static_cast<long long>(t.tv_sec) * 1000000000LL + t.tv_nsec;
}

void on_signal(int signo) {
  const long long now = monotonic_ns();
  int expected = 0;
  if (!g_signal.compare_exchange_strong(expected, signo)) {
    // One stop delivered twice is not a second signal: timeout(1) sends it to the command and
    // then to the command's process group (GNU coreutils src/timeout.c, cleanup()); a terminal's
    // Ctrl-C reaches a launcher's whole foreground group while the launcher forwards it too. The
    // same signal within kDuplicateWindowNs is that copy; a person's second Ctrl-C comes later.
    if (expected == signo && now - g_first_ns.load() < kDuplicateWindowNs) return;
    // The second signal: nothing waits for a safe point any more.
    const int dir = g_temp_dir.exchange(-1);
    if (dir >= 0) ::unlinkat(dir, g_temp_name, 0);
    say(signo == SIGINT ? "gcbench: second SIGINT: ending now\n" : "gcbench: second SIGTERM: ending now\n");
    ::_exit(interrupt_exit_code(signo));
  }
  g_first_ns.store(now);
  if (g_announce.load())
    say(signo == SIGINT ? "gcbench: SIGINT: stopping at the next safe point and writing what finished (another "
                          "SIGINT, 0.5 s or more later, ends now)\n"
                        : "gcbench: SIGTERM: stopping at the next safe point and writing what finished (another "
                          "signal, 0.5 s or more later, ends now)\n");
}

}  // namespace

void install_interrupt_handlers(bool announce) {
  g_announce.store(announce);
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  ::sigaction(SIGINT, &sa, nullptr);
  ::sigaction(SIGTERM, &sa, nullptr);
}

int interrupt_signal() { return g_signal.load(std::memory_order_relaxed); }

void simulate_interrupt(int signo) {
  g_signal.store(signo);
  if (signo == 0) {
    std::lock_guard lk(g_stop_mu);
    g_stop.reset();
  }
}

std::string signal_name(int signo) {
  switch (signo) {
    case SIGINT: return "SIGINT";
    case SIGTERM: return "SIGTERM";
    default: return "signal " + std::to_string(signo);
  }
}

void record_stop(int signo, const std::string& running) {
  std::lock_guard lk(g_stop_mu);
  if (!g_stop) g_stop = Stop{signo, running};
}

std::optional<Stop> recorded_stop() {
  std::lock_guard lk(g_stop_mu);
  return g_stop;
}

void set_pending_temp_file(int dir, const char* name) {
  g_temp_dir.store(-1);
  std::strncpy(g_temp_name, name, sizeof(g_temp_name) - 1);
  g_temp_name[sizeof(g_temp_name) - 1] = '\0';
  g_temp_dir.store(dir);
}

void clear_pending_temp_file() { g_temp_dir.store(-1); }

}  // namespace gcb
