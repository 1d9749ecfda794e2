// The shared command-line pieces of cli.hpp: validators (positive, non_negative, dtype_names, file_path), the --backend
// and --timeout options, which process writes outputs, Session::finish (result document, CSV, summary line, exit code)
// and the one-line parse error.
#include "bench/common/cli.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>

#include "collectives/factory.hpp"
#include "collectives/world.hpp"
#include "core/error.hpp"
#include "core/interrupt.hpp"
#include "core/suggest.hpp"
#include "core/gpu.hpp"
#include "reports/render.hpp"
#include "topology/topology.hpp"
#include "reports/writer.hpp"

namespace gcb::bench {

namespace {

CLI::Validator number_at_least(double floor, bool inclusive, const char* what) {
  return CLI::Validator(
      [=](std::string& text) -> std::string {
        double v = 0;
        const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
        const bool number = ec == std::errc() && end == text.data() + text.size() && std::isfinite(v);
        if (number && (inclusive ? v >= floor : v > floor)) return {};
        return fmt::format("'{}' is not {}", text, what);
      },
      what);
}

}  // namespace

CLI::Validator positive() { return number_at_least(0, false, "a positive number"); }
CLI::Validator non_negative() { return number_at_least(0, true, "a non-negative number"); }

std::string dtype_list(const std::vector<DType>& types) {
  std::string listed;
  for (DType t : types) listed += (listed.empty() ? "" : ", ") + std::string(dtype_name(t));
  return listed;
}

std::string unknown_word(const std::string& text, const std::vector<std::string>& known) {
  return fmt::format("{}{}: expected one of {}", text, did_you_mean(text, known), fmt::join(known, ", "));
}

CLI::Validator dtype_names(const std::vector<DType>& accepted) {
  const std::string listed = dtype_list(accepted);
  return CLI::Validator(
      [accepted, listed](std::string& text) -> std::string {
        const std::optional<DType> t = parse_dtype(text);
        if (!t || std::find(accepted.begin(), accepted.end(), *t) == accepted.end())
          return text + ": expected one of " + listed;
        text = std::to_string(static_cast<int>(*t));
        return {};
      },
      "{" + listed + "}");
}

void add_backend_option(CLI::App& app, std::string& backend) {
  std::vector<std::string> names;
  for (const CommunicatorBackend& b : communicator_backends()) names.emplace_back(b.name);
  app.add_option("--backend", backend,
                 fmt::format("Communicator backend: {} (default: the first built one that moves device memory when "
                             "GPUs exist, else host memory; one that spans processes under mpirun/srun)",
                             communicator_backend_names()))
      ->check(CLI::Validator(
          [names](std::string& text) -> std::string {
            if (std::find(names.begin(), names.end(), text) != names.end()) return {};
            return unknown_word(text, names);
          },
          ""))
      ->type_name("NAME");
}

void add_timeout_option(CLI::App& app, double& seconds, const std::string& what) {
  app.add_option("--timeout", seconds,
                 fmt::format("Seconds {} may last before the run ends with exit 3, naming the rank that timed out and "
                             "any rank of this host that is stopped or gone (README \"Failure behaviour\")",
                             what))
      ->check(positive())
      ->capture_default_str();
}

CLI::Validator file_path() {
  return CLI::Validator(
      [](std::string& text) -> std::string { return text.empty() ? "an empty path names no file" : ""; }, "");
}

void add_common_options(CLI::App& app, CommonOptions& o, bool with_device, bool with_harness) {
  app.add_option("--json", o.json, "Write the result document (gcbench.result/1) to FILE at the end")
      ->type_name("FILE")
      ->check(file_path());
  app.add_option("--jsonl", o.jsonl, "Append one JSON line per case to FILE as each case ends")
      ->type_name("FILE")
      ->check(file_path());
  app.add_option("--csv", o.csv, "Write one CSV row per result and metric to FILE")
      ->type_name("FILE")
      ->check(file_path());
  app.add_option("--seed", o.seed, "Seed of all generated inputs (recorded in results)")
      ->check(non_negative())
      ->capture_default_str();
  app.add_flag("-q,--quiet", o.quiet, "Print only the summary line");
  if (with_device) {
    app.add_option("--device", o.device, "cpu | gpu | gpu:N | all (all devices that exist)")->capture_default_str();
  }
  if (!with_harness) return;
  auto* h = &o.harness;
  app.add_option("--warmup", h->warmup, "Untimed launches before sampling")->capture_default_str();
  app.add_option("--min-samples", h->min_samples, "Never stop with fewer samples")->capture_default_str();
  app.add_option("--max-samples", h->max_samples, "Stop at this many samples whatever the noise")
      ->capture_default_str();
  app.add_option("--min-time", h->min_time, "Seconds of measured time before the noise rule may stop")
      ->capture_default_str();
  app.add_option("--max-time", h->max_time,
                 "Wall seconds of warm-up and sampling per case (budget; set-up and checks not counted)")
      ->capture_default_str();
  app.add_option("--noise", h->noise, "Stop once the relative stddev of the samples is at most this (0.005 = 0.5%)")
      ->capture_default_str();
  app.add_flag("--cold", h->cold, "Flush caches (L2 on GPU, LLC on host) before every sample");
  app.add_flag("--profile-range", o.profile_range,
               "Wrap only timed regions in cudaProfilerStart/Stop (nsys --capture-range=cudaProfilerApi)");
}

HarnessOptions microsecond_family_harness(const CLI::App& app, HarnessOptions h, int samples) {
  if (app.count("--noise") > 0) return h;
  const bool min_given = app.count("--min-samples") > 0, max_given = app.count("--max-samples") > 0;
  const int n = max_given ? h.max_samples : min_given ? h.min_samples : samples;
  if (!min_given) h.min_samples = n;
  if (!max_given) h.max_samples = std::max(n, h.min_samples);
  return h;
}

std::optional<MemorySpace> device_memory(const std::string& device) {
  if (device.rfind("gpu:", 0) == 0) {
    select_devices(device);  // an index that does not exist: that message first
    throw UsageError(
        fmt::format("--device {}: the ranks use every visible GPU, one each (choose them with "
                    "CUDA_VISIBLE_DEVICES); give --device gpu",
                    device));
  }
  const DeviceSelection sel = select_devices(device);
  if (sel.cpu && sel.gpu_requested) return std::nullopt;  // all
  return sel.cpu ? MemorySpace::host : MemorySpace::device;
}

std::string communicator_for_device(const std::string& device, const std::string& backend) {
  const std::optional<MemorySpace> memory = device_memory(device);
  if (!memory) return backend;
  if (backend.empty()) return std::string(communicator_for(*memory, world_is_processes()));
  if (communicator_backend(backend).memory != *memory)
    throw UsageError(fmt::format("--backend {} moves {} memory but --device {} asks for {} memory", backend,
                                 memory_space_name(communicator_backend(backend).memory), device,
                                 memory_space_name(*memory)));
  return backend;
}

DeviceSelection select_devices(const std::string& spec) {
  DeviceSelection sel;
  const int count = gpu::device_count();
  auto all_gpus = [&] {
    sel.gpu_requested = true;
    for (int i = 0; i < count; ++i) sel.gpus.push_back(i);
    if (count == 0) sel.gpu_missing = "no GPU: " + gpu::runtime().unavailable_reason;
  };
  if (spec == "cpu") {
    sel.cpu = true;
  } else if (spec == "gpu") {
    all_gpus();
  } else if (spec == "all") {
    sel.cpu = true;
    all_gpus();
  } else if (spec.rfind("gpu:", 0) == 0) {
    const std::string idx = spec.substr(4);
    if (idx.empty() || idx.find_first_not_of("0123456789") != std::string::npos)
      throw UsageError(fmt::format("unknown device '{}' (expected cpu, gpu, gpu:N or all)", spec));
    int i = 0;
    const auto [end, ec] = std::from_chars(idx.data(), idx.data() + idx.size(), i);
    if (ec != std::errc() || end != idx.data() + idx.size() || i >= count)
      throw UsageError(count == 0
                           ? fmt::format("unknown device '{}': no GPU ({})", spec, gpu::runtime().unavailable_reason)
                           : fmt::format("unknown device '{}': this machine has {} GPU(s)", spec, count));
    sel.gpu_requested = true;
    sel.gpus.push_back(i);
  } else {
    throw UsageError(fmt::format("unknown device '{}' (expected cpu, gpu, gpu:N or all)", spec));
  }
  return sel;
}

bool this_process_writes() {
  const LauncherInfo launcher = detect_launcher();
  return !launcher.launched || launcher.rank == 0;
}

Outputs::Outputs(std::vector<NamedPath> outputs, std::vector<NamedPath> inputs) : writes_(this_process_writes()) {
  // Only the writing process needs the folders; the others may run where they do not exist.
  if (writes_) check_output_paths(outputs, inputs);
}

void Outputs::write(const std::string& path, std::string_view text) const {
  if (writes_ && !path.empty()) write_output(path, text);
}

namespace {

// Everything that can be wrong with the options is found here, before any file is created.
const CommonOptions& validated(const CommonOptions& o) {
  validate(o.harness);
  return o;
}

std::vector<NamedPath> session_outputs(const CommonOptions& o, const SessionFiles& files) {
  std::vector<NamedPath> out = {{"--json", o.json}, {"--jsonl", o.jsonl}, {"--csv", o.csv}};
  out.insert(out.end(), files.outputs.begin(), files.outputs.end());
  return out;
}

RunnerOptions runner_options(const CommonOptions& o, bool writes) {
  return RunnerOptions{o.harness, o.profile_range, o.quiet || !writes};
}

// Writes one output at the end of a run; on failure says what happened and where the data are
// instead, and returns kExitFault (never kExitUsage: the input was fine, the disk was not).
int write_at_end(const Outputs& outputs, const std::string& flag, const std::string& path, const std::string& text,
                 const JsonlSink* sink) {
  try {
    outputs.write(path, text);
    return kExitOk;
  } catch (const WriteError& e) {
    const std::string rescue = rescue_path(path);
    std::string kept;
    try {
      write_output(rescue, text);
      kept = fmt::format("was written to '{}' instead", rescue);
    } catch (const WriteError& again) {
      kept = fmt::format("could not be written elsewhere either ({})", again.what());
    }
    std::string jsonl;
    if (sink && sink->appended() > 0)
      jsonl = fmt::format("; the {} results appended to '{}' are kept", sink->appended(), sink->path());
    fmt::print(stderr, "gcbench: error: {}: {}; the {} output {}{}\n", flag, e.what(), flag, kept, jsonl);
    return kExitFault;
  }
}

}  // namespace

Session::Session(const CommonOptions& o, std::vector<std::string> command_line, const SessionFiles& files)
    : options_(validated(o)),
      command_line_(std::move(command_line)),
      outputs_(session_outputs(o, files), files.inputs),
      sink_(o.jsonl.empty() || !outputs_.writes() ? nullptr : std::make_unique<JsonlSink>(o.jsonl)),
      runner_(runner_options(o, outputs_.writes()), sink_.get()) {}

int Session::finish(nlohmann::json library_versions) {
  int code = kExitOk;
  for (const auto& r : runner_.results())
    if (r.status == Status::fail || r.status == Status::error) code = kExitVerifyFailed;
  // Stopped by SIGINT/SIGTERM at a safe point (core/interrupt.hpp): every rank exits 128 + the
  // signal; the writing one first writes what finished, marked as interrupted.
  const std::optional<Stop> stop = recorded_stop();
  if (!outputs_.writes()) return stop ? interrupt_exit_code(stop->signo) : code;
  ContextOptions ctx;
  ctx.command_line = command_line_;
  ctx.library_versions = std::move(library_versions);
  ResultDocument doc;
  doc.context = collect_run_context(ctx);
  doc.context["seed"] = options_.seed;
  doc.context["topology"] = topo::topology_context(topo::live_topology());
  doc.results = runner_.results();
  if (stop)
    doc.context["interrupted"] = {
        {"signal", signal_name(stop->signo)}, {"running", stop->running}, {"finished_results", doc.results.size()}};
  if (!options_.json.empty())
    code = std::max(code, write_at_end(outputs_, "--json", options_.json, to_json(doc).dump(2) + "\n", sink_.get()));
  if (!options_.csv.empty())
    code = std::max(code, write_at_end(outputs_, "--csv", options_.csv, render_csv(doc), sink_.get()));
  if (sink_ && !sink_->error().empty()) code = std::max(code, kExitFault);  // already warned
  // The results, once: one table per family with the params that tell them apart as columns (while
  // the run went on, each case was a progress line on stderr).
  runner_.clear_progress();
  if (runner_.prints_rows() && !doc.results.empty()) fmt::print("{}", render_console(doc.results));
  fmt::print("\n{}\n", status_summary(doc.results));
  if (stop) {
    std::fflush(stdout);
    fmt::print(stderr, "gcbench: interrupted by {} before {}: {} finished result(s) kept{}\n", signal_name(stop->signo),
               stop->running, doc.results.size(), options_.json.empty() ? "" : " in " + options_.json);
    return code == kExitFault ? code : interrupt_exit_code(stop->signo);
  }
  return code;
}

namespace {

// Every spelling of the flags of `app`: --long and -s.
std::vector<std::string> flag_spellings(const CLI::App& app) {
  std::vector<std::string> out;
  for (const CLI::Option* o : app.get_options()) {
    for (const std::string& l : o->get_lnames()) out.push_back("--" + l);
    for (const std::string& s : o->get_snames()) out.push_back("-" + s);
  }
  return out;
}

}  // namespace

std::string parse_error_line(const CLI::App& app, const CLI::ParseError& e) {
  // The innermost subcommand given: its flags are the ones meant, its --help the one to read.
  const CLI::App* innermost = &app;
  std::string path = "gcbench";  // CLI11 names the top-level app after argv[0], a path
  while (!innermost->get_subcommands().empty()) {
    innermost = innermost->get_subcommands().back();
    path += " " + innermost->get_name();
  }
  const std::vector<std::string> extras = app.remaining(true);
  if (innermost == &app && dynamic_cast<const CLI::RequiredError*>(&e) != nullptr) {
    // No subcommand matched: the first word given is the one that should have.
    const auto word =
        std::find_if(extras.begin(), extras.end(), [](const std::string& x) { return !x.starts_with('-'); });
    if (word != extras.end()) {
      std::vector<std::string> names;
      for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; }))
        names.push_back(sub->get_name());
      const std::string hint = did_you_mean(*word, names);
      return fmt::format("unknown subcommand '{}'{} (see {} --help{})", *word, hint, path,
                         hint.empty() ? fmt::format("; known: {}", fmt::join(names, ", ")) : "");
    }
  }
  std::string hints;
  if (dynamic_cast<const CLI::ExtrasError*>(&e) != nullptr) {
    std::vector<std::string> flags = flag_spellings(*innermost);
    if (innermost != &app)
      for (const std::string& f : flag_spellings(app)) flags.push_back(f);
    for (const std::string& x : extras) {
      if (!x.starts_with('-') || x == "-" || x == "--") continue;
      const std::string flag = x.substr(0, x.find('='));
      if (const std::string hint = did_you_mean(flag, flags); !hint.empty())
        hints += fmt::format("unknown flag '{}'{}; ", flag, hint);
    }
  }
  std::string what = e.what();
  if (!hints.empty() && !what.empty()) what[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(what[0])));
  return fmt::format("{}{} (see {} --help)", hints, what, path);
}

}  // namespace gcb::bench
