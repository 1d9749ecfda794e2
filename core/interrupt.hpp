// Ctrl-C and scheduler cancels (SIGINT, SIGTERM) keep what was measured: the first signal asks
// every rank to stop at its next safe point (between cases, sizes or layouts), rank 0 writes the
// results that finished, marked "interrupted", and the process exits 128 + the signal (130 for
// SIGINT, 143 for SIGTERM: the shell's convention, POSIX.1-2017 XCU 2.8.2 "Exit Status for
// Commands"). A second signal ends the process at once, removing the temporary file of a
// document being written. The same signal again within kDuplicateWindowNs is one stop
// delivered twice (timeout(1) signals the command and then its process group; Ctrl-C reaches a
// launcher's group while the launcher forwards it), not a second one. Slurm's scancel and a time limit send SIGTERM,
// then SIGKILL after KillWait (slurm.conf(5)); torchrun forwards SIGINT/SIGTERM to its workers.
#pragma once

#include <optional>
#include <string>

namespace gcb {

inline constexpr long long kDuplicateWindowNs = 500'000'000;  // 500 ms

// Installs the SIGINT and SIGTERM handlers (SA_RESTART; the process keeps its signal mask).
// `announce`: the first signal prints one line on stderr (the writing process only, so a
// thousand ranks do not print a thousand lines).
void install_interrupt_handlers(bool announce);

// The first stop signal this process received (SIGINT or SIGTERM), 0 while none arrived. One
// relaxed atomic load: cheap enough for every safe point.
int interrupt_signal();

// Test hook: acts as if `signo` had arrived once (0 clears it and any recorded stop).
void simulate_interrupt(int signo);

// 128 + signo (130 SIGINT, 143 SIGTERM).
constexpr int interrupt_exit_code(int signo) { return 128 + signo; }
// "SIGINT", "SIGTERM", else "signal N".
std::string signal_name(int signo);

// Where a run stopped: the signal every rank agreed on and what was running when it stopped
// (the case, size or layout that was skipped). Recorded once, by the rank that writes.
struct Stop {
  int signo = 0;
  std::string running;
};
void record_stop(int signo, const std::string& running);
std::optional<Stop> recorded_stop();

// The temporary file of a document being written (reports/writer.cpp): a second signal unlinks
// it before ending the process. `dir` is an open folder descriptor, `name` the file's name in it
// (copied; at most 63 bytes). Clear it once the file was renamed or removed.
void set_pending_temp_file(int dir, const char* name);
void clear_pending_temp_file();

}  // namespace gcb
