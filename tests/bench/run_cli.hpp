// Running the gcbench binary from a CLI test (the target defines GCB_BINARY): exit code, standard
// output and standard error, as a user meets them. One copy for every tests/bench/**/*_cli.cpp.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdlib>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace gcb::test {

struct CliRun {
  int code = -1;         // the exit code; -1 when the process did not exit normally
  std::string out, err;  // err is empty with merge_stderr (then it is part of out)
};

inline std::string read_file(const std::string& path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// A path in the temporary directory that this test process alone uses: gcb-TAG-PID-NAME.
inline std::string temp_path(const std::string& tag, const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("gcb-" + tag + "-" + std::to_string(getpid()) + "-" + name))
      .string();
}

// The binary under test: GCB_BINARY, or $GCB_TEST_BINARY when set (to run these tests against
// another build, e.g. to see a regression test fail on the code before its fix).
inline std::string gcbench_binary() {
  const char* other = std::getenv("GCB_TEST_BINARY");
  return other && *other ? std::string(other) : std::string(GCB_BINARY);
}

// `GCB_BINARY args`, through the shell (so args may hold quotes and redirections of their own).
// `prefix` runs first in the same shell ("ulimit -f 4 &&").
inline CliRun run_gcbench(const std::string& args, bool merge_stderr = false, const std::string& prefix = "") {
  namespace fs = std::filesystem;
  const fs::path err_file = fs::temp_directory_path() / ("gcb-cli-err-" + std::to_string(getpid()));
  const std::string cmd =
      prefix + " " + gcbench_binary() + " " + args + (merge_stderr ? std::string(" 2>&1") : " 2>" + err_file.string());
  CliRun r;
  FILE* p = popen(cmd.c_str(), "r");
  std::array<char, 4096> buf{};
  while (p != nullptr && fgets(buf.data(), static_cast<int>(buf.size()), p) != nullptr) r.out += buf.data();
  const int status = p != nullptr ? pclose(p) : -1;
  r.code = status != -1 && WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  if (!merge_stderr) {
    r.err = read_file(err_file.string());
    fs::remove(err_file);
  }
  return r;
}

}  // namespace gcb::test
