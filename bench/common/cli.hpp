// Flags every subcommand shares (--json --jsonl --csv --device --seed --quiet, the harness
// flags, --profile-range), device selection, and the end of a run: the result document written
// atomically, the CSV, the summary line and the exit code.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "bench/common/runner.hpp"
#include "core/context.hpp"
#include "reports/result.hpp"
#include "reports/writer.hpp"

namespace gcb::bench {

struct CommonOptions {
  std::string json, jsonl, csv;
  std::string device = "all";
  uint64_t seed = 1;
  bool quiet = false;
  bool profile_range = false;
  HarnessOptions harness;
};

// Validators for numeric flags whose absence means "the default" (often stored as 0): given
// explicitly, a value must be a finite number > 0 (positive) or ≥ 0 (non_negative).
CLI::Validator positive();
CLI::Validator non_negative();

// --timeout SECONDS (> 0), the same words in every subcommand: `what` says what it bounds.
void add_timeout_option(CLI::App& app, double& seconds, const std::string& what);

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
  std::vector<int> gpus;    // existing devices selected
  std::string gpu_missing;  // why gpus is empty although requested
};
// "cpu", "gpu" (every GPU), "gpu:N" (one; must exist), "all" (default: the host and every GPU).
// Throws gcb::UsageError for anything else or a GPU index that does not exist.
DeviceSelection select_devices(const std::string& spec);

// The one decision of which process writes files and prints the summary: world rank 0 under
// mpirun/srun (from the launcher's variables, known before MPI starts), else the only process.
bool this_process_writes();

// The files a subcommand writes, checked before anything runs (check_output_paths: folders exist,
// no output is an input or another output; exit 2) and written through the output layer by the
// writing process only.
class Outputs {
 public:
  explicit Outputs(std::vector<NamedPath> outputs, std::vector<NamedPath> inputs = {});
  bool writes() const { return writes_; }
  // write_output() on the writing process; nothing elsewhere or for an empty path.
  void write(const std::string& path, std::string_view text) const;

 private:
  bool writes_;
};

// Outputs and inputs a subcommand has beyond the common --json/--jsonl/--csv (train's --dump and
// its model file), checked together with them.
struct SessionFiles {
  std::vector<NamedPath> outputs, inputs;
};

// What a run holds between parsing and the end: validated options, the output paths checked,
// the JSONL sink (appending, created with the first result), the runner, and the command line
// for the context. On a process that does not write, the runner is quiet and nothing is written.
class Session {
 public:
  Session(const CommonOptions& o, std::vector<std::string> command_line, const SessionFiles& files = {});
  Runner& runner() { return runner_; }
  bool writes() const { return outputs_.writes(); }
  // Writes --json and --csv, prints the summary; returns the exit code: 0 when every result
  // passed or was waived, 1 when any FAILED or hit an ERROR, 3 when an output could not be
  // written (the document then goes to a fallback file named on stderr, and the JSONL keeps
  // every result appended before).
  int finish(nlohmann::json library_versions = nlohmann::json::object());

 private:
  CommonOptions options_;
  std::vector<std::string> command_line_;
  Outputs outputs_;
  std::unique_ptr<JsonlSink> sink_;
  Runner runner_;
};

}  // namespace gcb::bench
