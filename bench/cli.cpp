#include "bench/cli.hpp"

#include "bench/topo.hpp"

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/gpu.hpp"
#include "reports/render.hpp"
#include "reports/writer.hpp"

namespace gcb::bench {

void add_common_options(CLI::App& app, CommonOptions& o, bool with_device, bool with_harness) {
  app.add_option("--json", o.json, "Write the result document (gcbench.result/1) to FILE at the end")
      ->type_name("FILE");
  app.add_option("--jsonl", o.jsonl, "Append one JSON line per case to FILE as each case ends")->type_name("FILE");
  app.add_option("--csv", o.csv, "Write one CSV row per result and metric to FILE")->type_name("FILE");
  app.add_option("--seed", o.seed, "Seed of all generated inputs (recorded in results)")->capture_default_str();
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
  app.add_option("--max-time", h->max_time, "Wall seconds of sampling per case (budget)")->capture_default_str();
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
    const int i = std::stoi(idx);
    if (i >= count)
      throw UsageError(count == 0 ? fmt::format("unknown device '{}': no GPU ({})", spec, gpu::runtime().unavailable_reason)
                                  : fmt::format("unknown device '{}': this machine has {} GPU(s)", spec, count));
    sel.gpu_requested = true;
    sel.gpus.push_back(i);
  } else {
    throw UsageError(fmt::format("unknown device '{}' (expected cpu, gpu, gpu:N or all)", spec));
  }
  return sel;
}

namespace {
// Everything that can be wrong with the options is found here, before any file is created.
const CommonOptions& validated(const CommonOptions& o) {
  validate(o.harness);
  for (const std::string* path : {&o.json, &o.jsonl, &o.csv})
    if (!path->empty()) check_writable(*path);
  return o;
}
RunnerOptions runner_options(const CommonOptions& o) { return RunnerOptions{o.harness, o.profile_range, o.quiet}; }
}  // namespace

Session::Session(const CommonOptions& o, std::vector<std::string> command_line)
    : options_(validated(o)),
      command_line_(std::move(command_line)),
      sink_(o.jsonl.empty() ? nullptr : std::make_unique<JsonlSink>(o.jsonl)),
      runner_(runner_options(o), sink_.get()) {}

int Session::finish(nlohmann::json library_versions) {
  ContextOptions ctx;
  ctx.command_line = command_line_;
  ctx.library_versions = std::move(library_versions);
  ResultDocument doc;
  doc.context = collect_run_context(ctx);
  doc.context["seed"] = options_.seed;
  doc.context["topology"] = topology_context(topo::live_topology());
  doc.results = runner_.results();
  if (!options_.json.empty()) write_document(options_.json, doc);
  if (!options_.csv.empty()) write_file_atomic(options_.csv, render_csv(doc));
  fmt::print("\n{}\n", status_summary(doc.results));
  for (const auto& r : doc.results)
    if (r.status == Status::fail || r.status == Status::error) return kExitVerifyFailed;
  return kExitOk;
}

}  // namespace gcb::bench
