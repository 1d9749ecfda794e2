// `gcbench run --suite quick|full`: every family of the table (bench/families.cpp) that has a
// suite entry, in table order (or the ones --families names), into one result document, with a
// progress line per family.
#include "bench/run/run.hpp"

#include <fmt/format.h>

#include <chrono>
#include <cstdio>
#include <sstream>

#include "core/error.hpp"
#include "core/interrupt.hpp"

namespace gcb::bench {

HarnessOptions quick_harness(HarnessOptions h) {
  // A quick suite trades precision for time: a 1 s budget per case, kQuickSamples samples (what
  // `compare`'s U test needs, see run.hpp). The user's explicit flags still win where they ask
  // for less.
  h.min_samples = std::min(h.min_samples, kQuickSamples);
  h.max_samples = std::max(h.max_samples, h.min_samples);
  h.max_time = std::min(h.max_time, 1.0);
  h.min_time = std::min(h.min_time, 0.05);
  h.noise = std::max(h.noise, 0.02);
  return h;
}

std::vector<const Family*> suite_families(std::span<const Family> table, const std::string& only) {
  std::vector<const Family*> all;
  for (const Family& f : table)
    if (f.run_in_suite) all.push_back(&f);
  if (only.empty()) return all;
  auto names = [&] {
    std::string s;
    for (const Family* f : all) s += (s.empty() ? "" : ", ") + std::string(f->name);
    return s;
  };
  if (only.back() == ',')
    throw UsageError(fmt::format("--families '{}': an empty name (the suite has {})", only, names()));
  std::vector<std::string> wanted;
  std::stringstream in(only);
  for (std::string name; std::getline(in, name, ',');) {
    if (name.empty()) throw UsageError(fmt::format("--families '{}': an empty name (the suite has {})", only, names()));
    bool known = false;
    for (const Family* f : all) known = known || name == f->name;
    if (!known) throw UsageError(fmt::format("--families: no family '{}' in the suite (it has {})", name, names()));
    wanted.push_back(name);
  }
  std::vector<const Family*> chosen;  // table order, each once
  for (const Family* f : all)
    for (const std::string& w : wanted)
      if (w == f->name) {
        chosen.push_back(f);
        break;
      }
  return chosen;
}

void add_run_command(CLI::App& root, std::function<int()>& run, const CommandContext& context) {
  auto* app = root.add_subcommand("run", "Run every benchmark family that applies to this machine");
  auto common = std::make_shared<CommonOptions>();
  auto suite = std::make_shared<std::string>("quick");
  auto only = std::make_shared<std::string>();
  add_common_options(*app, *common);
  // The help shows what each suite uses, generated from the quick preset itself.
  const HarnessOptions full_preset = common->harness, quick_preset = quick_harness(full_preset);
  const auto both = [](auto q, auto f) { return fmt::format("{} (quick), {} (full)", q, f); };
  app->get_option("--min-samples")->default_str(both(quick_preset.min_samples, full_preset.min_samples));
  app->get_option("--max-time")->default_str(both(quick_preset.max_time, full_preset.max_time));
  app->get_option("--min-time")->default_str(both(quick_preset.min_time, full_preset.min_time));
  app->get_option("--noise")->default_str(both(quick_preset.noise, full_preset.noise));
  app->add_option("--suite", *suite,
                  fmt::format("quick (small presets, about a minute on a CPU-only machine; every case at least {} "
                              "samples and at most 1 s of sampling, which replace --min-samples, --max-time, "
                              "--min-time and --noise where those ask for more) or full (mem, gemm and attn "
                              "with their defaults; train, coll and p2p run their quick presets in both suites)",
                              kQuickSamples))
      ->check(CLI::IsMember({"quick", "full"}))
      ->capture_default_str();
  app->add_option("--families", *only,
                  "comma-separated families of the suite to run (mem, coll, p2p, gemm, attn, train; default: all), "
                  "in the suite's order");
  run = [=, &argv = context.argv, families = context.families] {
    const bool quick = *suite == "quick";
    validate(common->harness);  // the user's values, before the quick preset adjusts them
    const std::vector<const Family*> chosen = suite_families(families, *only);
    CommonOptions options = *common;
    if (quick) options.harness = quick_harness(options.harness);
    const DeviceSelection sel = select_devices(options.device);
    // --device gpu asks for GPU work: a machine whose GPU is missing (driver gone, none visible)
    // must not pass on CPU work alone. --device all keeps the CPU cases and WAIVEs the GPU ones.
    if (options.device == "gpu" && sel.gpus.empty())
      throw Fault(
          fmt::format("run --device gpu: no usable GPU ({}); --device all runs the CPU cases alone", sel.gpu_missing));
    Session session(options, argv);
    const HarnessOptions micro =
        microsecond_family_harness(*app, options.harness, quick ? kQuickSamples : kMicrosecondFamilySamples);
    const SuiteRun entry{quick, sel, options.seed, micro, session.runner()};
    const auto start = std::chrono::steady_clock::now();
    auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };
    const bool progress = !options.quiet && this_process_writes();
    for (size_t i = 0; i < chosen.size(); ++i) {
      // Ctrl-C / scancel: the families that finished are written. Read from the flag, not from a
      // recorded stop: every process of a launch gets the signal, but only some may have passed
      // a safe point of their own since (a family's last case), and all must skip the next family.
      if (const int signo = interrupt_signal(); signo != 0) {
        record_stop(signo, fmt::format("run: family {}", chosen[i]->name));
        break;
      }
      const size_t before = session.runner().results().size();
      if (progress)
        fmt::print(stderr, "run: [{}/{}] {} ... ({:.1f} s so far)\n", i + 1, chosen.size(), chosen[i]->name, elapsed());
      chosen[i]->run_in_suite(entry);
      if (progress)
        fmt::print(stderr, "run: [{}/{}] {} done: {} cases ({:.1f} s so far)\n", i + 1, chosen.size(), chosen[i]->name,
                   session.runner().results().size() - before, elapsed());
    }
    return session.finish();
  };
}

}  // namespace gcb::bench
