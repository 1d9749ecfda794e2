// The gcbench command: one subcommand per row of the family table (bench/families.cpp). Exit codes:
// 0 all passed or waived, 1 a verification failed or a case hit an error, 2 bad input (one line
// on stderr, nothing written), 3 a fault: a failed library call, a timeout, or an output that
// could not be written (README "Failure behaviour"); 4 compare: a case too noisy to judge; 5 plan: no
// layout fits (bench/plan/plan.hpp); 130 / 143 stopped by SIGINT / SIGTERM, with
// what finished written (core/interrupt.hpp).
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/sysinfo.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "bench/common/cli.hpp"
#include "bench/families.hpp"
#include "collectives/world.hpp"
#include "core/context.hpp"
#include "core/error.hpp"
#include "core/interrupt.hpp"
#include "gcb/config.hpp"
#include "kernels/mem/host_mem.hpp"
#include "reports/writer.hpp"

namespace {

// Start-up under a tight address-space limit (ulimit -v). OpenBLAS's library constructor, which
// runs before main(), maps one 128 MiB buffer per thread it will use (OMP_NUM_THREADS, at most
// the configured CPUs) and, when the mapping fails, retries forever: the process hangs before
// it can read a flag. The executable's preinit_array runs before any library's constructor, so
// this probe maps (and unmaps) that much address space first and, when it cannot, ends the run
// with one line and exit 3. A watchdog alarm covers whatever else could stall before main():
// main() cancels it.
constexpr unsigned kStartupSeconds = 30;

void startup_stalled(int) {
  static const char kLine[] =
      "gcbench: fault: start-up did not reach main() within 30 s (a library's initialisation is stuck; "
      "OpenBLAS retries its buffer allocation forever when ulimit -v leaves too little room)\n";
  [[maybe_unused]] const ssize_t n = ::write(STDERR_FILENO, kLine, sizeof(kLine) - 1);
  ::_exit(3);
}

#if GCB_HAVE_OPENBLAS
// The buffers OpenBLAS 0.3's constructor maps (one per thread of its pool, BUFFER_SIZE 128 MiB
// on x86-64 and arm64) and room for what the other constructors and main() map before work.
// `envp` is the environment main() will see (getenv() may not work yet).
size_t openblas_startup_bytes(char** envp) {
  long cpus = get_nprocs_conf();
  for (char** e = envp; e && *e; ++e)
    if (std::strncmp(*e, "OMP_NUM_THREADS=", 16) == 0 && std::atol(*e + 16) > 0)
      cpus = std::min(cpus, std::atol(*e + 16));
  cpus = std::clamp(cpus, 1L, 64L);  // 64: Debian's MAX_THREADS
  return static_cast<size_t>(cpus) * (size_t{128} << 20) + (size_t{8} << 20);
}
#endif

void check_startup(int, char**, [[maybe_unused]] char** envp) {
  struct sigaction sa {};
  sa.sa_handler = startup_stalled;
  ::sigaction(SIGALRM, &sa, nullptr);
  ::alarm(kStartupSeconds);
#if GCB_HAVE_OPENBLAS
  rlimit limit{};
  if (::getrlimit(RLIMIT_AS, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return;
  const size_t need = openblas_startup_bytes(envp);
  void* probe = ::mmap(nullptr, need, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (probe != MAP_FAILED) {
    ::munmap(probe, need);
    return;
  }
  char line[400];
  const int n = std::snprintf(line, sizeof(line),
                              "gcbench: fault: the address-space limit (ulimit -v %llu KiB) leaves less than the "
                              "%zu MiB OpenBLAS maps when it loads (128 MiB per thread; OMP_NUM_THREADS=1 needs "
                              "least): raise ulimit -v or lower OMP_NUM_THREADS\n",
                              static_cast<unsigned long long>(limit.rlim_cur / 1024), need >> 20);
  [[maybe_unused]] const ssize_t w = ::write(STDERR_FILENO, line, static_cast<size_t>(std::max(n, 0)));
  ::_exit(3);
#endif
}

// glibc runs the executable's preinit_array before the constructors of the libraries it loads.
[[gnu::section(".preinit_array"), gnu::used]] void (*const preinit_check_startup)(int, char**, char**) = check_startup;

// Subcommands that only read documents: they start no thread pool.
bool reads_documents_only(const CLI::App& app) {
  for (const char* name : {"report", "compare", "export", "topo"})
    if (app.got_subcommand(name)) return true;
  return false;
}

// Subcommands with safe points for SIGINT/SIGTERM (between cases, sizes, layouts or families).
// report/compare/export/topo only read; plan computes; scan's stages have none yet.
bool stops_at_safe_points(const CLI::App& app) {
  for (const char* name : {"mem", "gemm", "attn", "p2p", "coll", "train", "run"})
    if (app.got_subcommand(name)) return true;
  return false;
}

// Standard output is an output like any other: a failed write (a full disk behind a
// redirection, /dev/full, a closed pipe) must not end with exit 0. Under an MPI launch, a rank
// that leaves with an error ends the others, which would otherwise wait for it.
int finish_process(int code) {
  using namespace gcb;
  if (std::fflush(stdout) != 0 || std::ferror(stdout)) {
    fmt::print(stderr, "gcbench: error: writing standard output failed: {}\n", std::strerror(errno));
    code = std::max(code, kExitFault);
  }
  if (code == kExitUsage || code == kExitFault) abort_world_after_error(code);
  // Stopped by a signal: the other ranks leave only after rank 0 has written (a launcher ends the
  // job at the first non-zero exit).
  if (code == interrupt_exit_code(SIGINT) || code == interrupt_exit_code(SIGTERM)) wait_for_writer_before_exit();
  return code;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace gcb;
  ::alarm(0);  // start-up is over (check_startup)
  std::signal(SIGALRM, SIG_DFL);
  // Past RLIMIT_FSIZE a write fails with EFBIG and is reported like a full disk, instead of the
  // signal killing the run with everything unsaved.
  std::signal(SIGXFSZ, SIG_IGN);
  const std::vector<std::string> args(argv, argv + argc);
  CLI::App app{"gcbench: GPU-cluster benchmarking suite (memory, interconnect, collectives, kernels, training)"};
  app.set_version_flag("--version", fmt::format("gcbench {} ({})", gcbench_version(), gcbench_revision()));
  app.require_subcommand(1);
  std::map<std::string, std::function<int()>> commands;
  const bench::CommandContext context{args, bench::families()};
  for (const bench::Family& family : context.families) family.add_command(app, commands[family.name], context);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version
    fmt::print(stderr, "gcbench: error: {}\n", bench::parse_error_line(app, e));
    return kExitUsage;
  }
  // Ctrl-C and scancel stop at the next safe point and keep what finished (core/interrupt.hpp), in
  // the subcommands that have safe points; the others keep the default (end at once).
  if (stops_at_safe_points(app)) install_interrupt_handlers(bench::this_process_writes());
  int code = kExitUsage;
  try {
    // Before the first parallel region: libgomp ends the process with exit 1 ("a verification
    // FAILED") when it cannot start its threads.
    if (!reads_documents_only(app)) {
      int threads = kernels::host_threads();  // OpenMP's default, or the subcommand's --threads
      for (const CLI::App* sub : app.get_subcommands())
        if (const CLI::Option* t = sub->get_option_no_throw("--threads"); t && t->count() > 0) threads = t->as<int>();
      kernels::require_host_threads(threads);
    }
    for (auto& [name, run] : commands)
      if (app.got_subcommand(name)) code = run();
  } catch (const UsageError& e) {
    fmt::print(stderr, "gcbench: error: {}\n", e.what());
    code = kExitUsage;
  } catch (const WriteError& e) {
    fmt::print(stderr, "gcbench: error: {}\n", e.what());
    code = kExitFault;
  } catch (const std::exception& e) {
    fmt::print(stderr, "gcbench: fault: {}\n", e.what());
    code = kExitFault;
  }
  return finish_process(code);
}
