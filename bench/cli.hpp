// Flags every subcommand shares (--json --jsonl --csv --device --seed --quiet, the harness
// flags, --profile-range), device selection, and the end of a run: the result document written
// atomically, the CSV, the summary line and the exit code.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "bench/runner.hpp"
#include "core/context.hpp"
#include "reports/result.hpp"

namespace gcb::bench {

struct CommonOptions {
  std::string json, jsonl, csv;
  std::string device = "all";
  uint64_t seed = 1;
  bool quiet = false;
  bool profile_range = false;
  HarnessOptions harness;
};

// `with_device` = the subcommand runs on devices (mem, gemm, ...); `with_harness` = it times.
void add_common_options(CLI::App& app, CommonOptions& o, bool with_device = true, bool with_harness = true);

// Families whose samples take microseconds (collectives, rank pairs) stop on a sample count by
// default, as nccl-tests takes one measurement of -n iterations per size: a relative-stddev target
// rarely converges at that scale (the noise is the machine's), and a sweep would then run every
// size to --max-samples. The noise rule applies when --noise is given; an explicit
// --min-samples or --max-samples sets the count. `samples` is the family's default count.
inline constexpr int kMicrosecondFamilySamples = 10;
HarnessOptions microsecond_family_harness(const CLI::App& app, HarnessOptions h,
                                          int samples = kMicrosecondFamilySamples);

struct DeviceSelection {
  bool cpu = false;
  bool gpu_requested = false;
  std::vector<int> gpus;     // existing devices selected
  std::string gpu_missing;   // why gpus is empty although requested
};
// "cpu", "gpu" (every GPU), "gpu:N" (one; must exist), "all" (default: the host and every GPU).
// Throws gcb::UsageError for anything else or a GPU index that does not exist.
DeviceSelection select_devices(const std::string& spec);

// What a run holds between parsing and the end: validated options, the JSONL sink opened only
// after validation, the runner, and the command line for the context.
class Session {
 public:
  Session(const CommonOptions& o, std::vector<std::string> command_line);
  Runner& runner() { return runner_; }
  // Writes --json and --csv (atomically), prints the summary; returns the exit code:
  // 0 when every result passed or was waived, 1 when any FAILED or hit an ERROR.
  int finish(nlohmann::json library_versions = nlohmann::json::object());

 private:
  CommonOptions options_;
  std::vector<std::string> command_line_;
  std::unique_ptr<JsonlSink> sink_;
  Runner runner_;
};

}  // namespace gcb::bench
