// `gcbench run --suite quick|full`: every family of the table (bench/families.cpp) that has a
// suite entry, in table order, into one result document.
#include "bench/run/run.hpp"

#include "core/error.hpp"

namespace gcb::bench {

HarnessOptions quick_harness(HarnessOptions h) {
  // A quick suite trades precision for time: fewer samples and a 1 s budget per case. The user's
  // explicit flags still win where they ask for less.
  h.min_samples = std::min(h.min_samples, 5);
  h.max_time = std::min(h.max_time, 1.0);
  h.min_time = std::min(h.min_time, 0.05);
  h.noise = std::max(h.noise, 0.02);
  return h;
}

void add_run_command(CLI::App& root, std::function<int()>& run, const CommandContext& context) {
  auto* app = root.add_subcommand("run", "Run every benchmark family that applies to this machine");
  auto common = std::make_shared<CommonOptions>();
  auto suite = std::make_shared<std::string>("quick");
  add_common_options(*app, *common);
  app->add_option("--suite", *suite,
                  "quick (small presets, about a minute on a CPU-only machine) or full (mem, gemm and attn with "
                  "their defaults; train, coll and p2p run their quick presets in both suites)")
      ->check(CLI::IsMember({"quick", "full"}))
      ->capture_default_str();
  run = [=, &argv = context.argv, families = context.families] {
    const bool quick = *suite == "quick";
    validate(common->harness);  // the user's values, before the quick preset adjusts them
    CommonOptions options = *common;
    if (quick) options.harness = quick_harness(options.harness);
    const DeviceSelection sel = select_devices(options.device);
    Session session(options, argv);
    const HarnessOptions micro =
        microsecond_family_harness(*app, options.harness, quick ? 5 : kMicrosecondFamilySamples);
    const SuiteRun entry{quick, sel, options.seed, micro, session.runner()};
    for (const Family& family : families)
      if (family.run_in_suite) family.run_in_suite(entry);
    return session.finish();
  };
}

}  // namespace gcb::bench
