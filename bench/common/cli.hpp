// Flags every subcommand shares (--json --jsonl --csv --device --seed --quiet, the harness
// flags, --profile-range), device selection, and the end of a run: the result document written
// atomically, the CSV, the summary line and the exit code.
#pragma once

#include <CLI/CLI.hpp>
#include <algorithm>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "bench/common/runner.hpp"
#include "core/buffer.hpp"
#include "core/context.hpp"
#include "core/dtype.hpp"
#include "core/suggest.hpp"
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
// For flags that name a file: an empty value ('') is refused, never read as "not given".
CLI::Validator file_path();

// A transformer for flags whose values name an enum: CLI11 turns each name into the enum's number,
// so an options struct holds the enum (`std::vector<E>` with ->delimiter(',') for lists), and
// refuses any other word with "WORD: expected one of a, b, c" (exit 2, as every usage error; with
// the closest name when one is near, core/suggest.hpp).
// Unlike CLI::CheckedTransformer it accepts names only: a bare number is not a silent alias.
// `names` lists every value in the order help shows them; a later name for a value already named
// is an alias, accepted but neither listed nor suggested.
// "WORD (did you mean 'X'?): expected one of a, b, c": the refusal of a word not among `known`.
std::string unknown_word(const std::string& text, const std::vector<std::string>& known);
template <typename E>
CLI::Validator enum_names(const std::vector<std::pair<std::string, E>>& names) {
  std::string listed;
  std::vector<std::string> words;
  std::vector<E> named;
  for (const auto& [name, value] : names) {
    if (std::find(named.begin(), named.end(), value) != named.end()) continue;  // an alias
    named.push_back(value);
    listed += (listed.empty() ? "" : ", ") + name;
    words.push_back(name);
  }
  CLI::Validator v(
      [names, words](std::string& text) -> std::string {
        for (const auto& [name, value] : names)
          if (name == text) {
            text = std::to_string(static_cast<long long>(value));
            return {};
          }
        return unknown_word(text, words);
      },
      "{" + listed + "}");
  return v;
}

// The transformer of --dtype: each value names one of `accepted` (its canonical name or an alias
// parse_dtype knows, core/dtype.hpp), so an options struct holds DType values; any other word is
// refused with "WORD: expected one of fp32, fp64, bf16" (the canonical names of `accepted`, in
// its order; exit 2).
CLI::Validator dtype_names(const std::vector<DType>& accepted);
// "fp32, fp64, bf16": the canonical names of `types`, for help texts and messages.
std::string dtype_list(const std::vector<DType>& types);

// --backend NAME: a communicator backend of the factory's table (collectives/factory.hpp), the
// names and the help text taken from it; "" (not given) = default_coll_backend().
void add_backend_option(CLI::App& app, std::string& backend);

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

// --device of the families that run on a backend rather than on chosen devices (coll, train):
// "cpu" = a backend on host memory, "gpu" = one on device memory (every rank its own GPU),
// "all" = nullopt, the family's default. gpu:N is refused (gcb::UsageError: the ranks take every
// visible GPU, choose them with CUDA_VISIBLE_DEVICES), as is anything select_devices refuses.
std::optional<MemorySpace> device_memory(const std::string& device);
// The communicator backend for --device: `backend` (an explicit --backend) when it moves that
// memory, gcb::UsageError when it does not; else the first built one that does
// (communicator_for); `backend` unchanged for --device all.
std::string communicator_for_device(const std::string& device, const std::string& backend);

// The one line for a command line CLI11 refused (after "gcbench: error: "): its message, with the
// closest subcommand for an unknown one and the closest flag of the subcommand for each unknown
// flag ("did you mean", core/suggest.hpp), and which --help to read.
std::string parse_error_line(const CLI::App& app, const CLI::ParseError& e);

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
