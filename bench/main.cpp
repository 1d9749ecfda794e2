// The gcbench command: one subcommand per row of the family table (bench/families.cpp). Exit codes:
// 0 all passed or waived, 1 a verification failed or a case hit an error, 2 bad input (one line
// on stderr, nothing written), 3 a fault: a failed library call, a timeout, or an output that
// could not be written (README "Failure behaviour").
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "bench/families.hpp"
#include "collectives/world.hpp"
#include "core/context.hpp"
#include "core/error.hpp"
#include "reports/writer.hpp"

namespace {

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
  return code;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace gcb;
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
    fmt::print(stderr, "gcbench: error: {} (see gcbench --help)\n", e.what());
    return kExitUsage;
  }
  int code = kExitUsage;
  try {
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
