// `gcbench scan` on the command line: flags, validation before anything runs, the World, and the
// result document through the shared Session (--json, --jsonl, --csv).
#include <fmt/format.h>

#include <memory>

#include "bench/common/cli.hpp"
#include "bench/scan/scan.hpp"
#include "collectives/world.hpp"
#include "core/error.hpp"
#include "core/size.hpp"
#include "models/model/config.hpp"
#include "reports/result.hpp"

namespace gcb::scan {

namespace {

struct ScanFlags {
  std::vector<std::string> stages;
  bool reference = false;
  std::string device_size, link_size = "256M", pair_size, coll_size;
  std::string budget = "0";
};

uint64_t size_or_zero(const std::string& s) { return s.empty() ? 0 : parse_size(s); }

void apply(const ScanFlags& f, ScanOptions& o) {
  if (!f.stages.empty()) {
    o.stages.clear();
    for (const auto& s : f.stages) {
      if (s == "all")
        o.stages = kStageNames;
      else
        o.stages.push_back(s);
    }
  }
  if (f.reference && !has_stage(o, "reference")) o.stages.push_back("reference");
  o.device_size = size_or_zero(f.device_size);
  o.link_size = parse_size(f.link_size);
  o.pair_size = size_or_zero(f.pair_size);
  o.coll_size = size_or_zero(f.coll_size);
  o.budget_s = parse_budget_s(f.budget);
}

}  // namespace

void add_scan_command(CLI::App& root, std::function<int()>& run, const std::vector<std::string>& argv) {
  auto* app = root.add_subcommand(
      "scan",
      "Find the slow node, GPU or link: inventory, per device, intra-node links, inter-node pairs, "
      "collectives with recursive halving, optional reference step; exit 1 when anything is not OK");
  auto common = std::make_shared<bench::CommonOptions>();
  auto o = std::make_shared<ScanOptions>();
  auto f = std::make_shared<ScanFlags>();
  // The budget sets each measurement's time; these are the rest of the harness rule.
  common->harness.noise = 0.01;
  common->harness.min_samples = 5;
  common->harness.warmup = 1;
  bench::add_common_options(*app, *common, false, false);
  app->add_option("--warmup", common->harness.warmup, "Untimed launches before each measurement")
      ->capture_default_str();
  app->add_option("--min-samples", common->harness.min_samples,
                  "Samples per measurement at least (the budget permitting)")
      ->capture_default_str();
  app->add_option("--noise", common->harness.noise, "Stop a measurement once its relative stddev is at most this")
      ->capture_default_str();
  app->add_option("--stages", f->stages,
                  "Comma-separated: inventory, device, links, pairs, coll, reference, or all "
                  "(default: all but reference)")
      ->delimiter(',');
  app->add_flag("--reference", f->reference, "Add the reference step (a few GPT training steps on every rank)");
  app->add_option(
         "--budget", f->budget,
         "Seconds for the whole scan, or with a unit: 600, 600s, 10m (0 = 120 + 30 per node; --rehearse: 30 + 4 per node); a "
         "stage that cannot fit its share is skipped")
      ->capture_default_str();
  auto* tolerance = app->add_option("--tolerance", o->rule.tolerance,
                                    "Relative shortfall against the peer median (or the faster half) that matters "
                                    "(--rehearse with more ranks than CPUs: 0.6 unless given)")
                        ->capture_default_str();
  app->add_option("--mad-threshold", o->rule.mad_threshold,
                  "How many robust sigmas (1.4826 x MAD) below the median a figure must be to be SLOW")
      ->capture_default_str();
  app->add_option("--min-percent-of-expected", o->rule.min_percent_of_expected,
                  "A figure below this % of its spec/topology value is SLOW whatever its peers say")
      ->capture_default_str();
  app->add_flag("--fail-fast", o->fail_fast, "Stop after the first stage that finds something");
  app->add_option("--device-size", f->device_size, "STREAM array bytes per device (default: mem's, 4 x LLC/L2)");
  app->add_option("--gemm-size", o->gemm_size, "Square GEMM size (default 1024 on the host, 8192 on GPUs)");
  app->add_option("--burn", o->burn, "Seconds of bf16 GEMM per GPU at least (default: the stage's budget share)");
  app->add_option("--link-size", f->link_size, "Bytes per copy between the GPUs of a node")->capture_default_str();
  app->add_option("--pair-rounds", o->pair_rounds,
                  "Round-robin rounds of the pair stage, each node meeting one partner per round "
                  "(0 = all N-1, at most 32)")
      ->capture_default_str();
  app->add_option("--pair-size", f->pair_size,
                  "Bytes per message between nodes (default 8M host memory, 256M device memory)");
  app->add_option("--coll-ops", o->coll_ops,
                  "Collectives over the whole job: all_reduce, all_gather, reduce_scatter "
                  "(the first one drives the halving search)")
      ->delimiter(',')
      ->capture_default_str();
  app->add_option("--coll-size", f->coll_size, "Collective size (default 8M host memory, 256M device memory)");
  app->add_option("--coll-iters", o->coll_iters, "Collective ops per sample")->capture_default_str();
  app->add_option("--reference-model", o->reference_model,
                  "GPT config of the reference step, as `gcbench train --model`: a name (gpt2 is gpt2-124m) or a "
                  "JSON config file")
      ->transform([](const std::string& s) { return models::canonical_config_name(s); })
      ->capture_default_str();
  app->add_option("--reference-steps", o->reference_steps, "Timed training steps per rank")->capture_default_str();
  bench::add_backend_option(*app, o->backend);
  app->add_option("--ranks", o->ranks, "Rank threads for the threads backend (default 1)");
  app->add_option("--timeout", o->timeout, "Seconds a rank may wait for the others before the run aborts")
      ->capture_default_str();
  app->add_option("--baseline", o->baseline, "A previous scan's JSON: each node against its own past (drift)")
      ->type_name("FILE");
  app->add_option("--inventory-from", o->inventory_from,
                  "[NAME=]FILE: compare saved topology dumps (nvidia-smi topo -m, NCCL XML, hwloc XML, gcbench JSON) "
                  "as nodes; measures nothing")
      ->type_name("[NAME=]FILE");
  app->add_flag("--rehearse", o->rehearse,
                "Rehearsal on one host: every rank (--ranks threads or MPI ranks) is its own node \"<host>-r<rank>\", "
                "so the stages between nodes run over shared memory/loopback (their figures are the host's, "
                "not a network's)");
  app->add_flag("--test-fake-nodes", o->rehearse, "Old name of --rehearse")->group("");
  run = [=, &argv] {
    ScanOptions options = *o;
    options.tolerance_given = tolerance->count() > 0;
    apply(*f, options);
    validate(options);
    validate(common->harness);
    if (!options.baseline.empty()) (void)load_document(options.baseline);  // a bad file exits 2 before any work
    const std::vector<std::string> args(argv.begin() + (argv.empty() ? 0 : 1), argv.end());
    bench::CommonOptions session_options = *common;
    session_options.quiet = true;  // scan prints its own progress and culprits
    // Every file the scan reads, so that no output may overwrite one.
    bench::SessionFiles files;
    files.inputs.push_back({"--baseline", options.baseline});
    for (const std::string& item : options.inventory_from) {  // [NAME=]FILE, as run_inventory_files reads it
      const size_t eq = item.find('=');
      const bool named = eq != std::string::npos && item.substr(0, eq).find('/') == std::string::npos;
      files.inputs.push_back({"--inventory-from", named ? item.substr(eq + 1) : item});
    }
    if (!options.inventory_from.empty()) {
      bench::Session session(session_options, argv, files);
      const int code = run_inventory_files(options, session.runner(), common->quiet);
      return std::max(code, session.finish());
    }
    const LauncherInfo launcher = detect_launcher();
    if (launcher.launched && launcher.rank != 0) {
      // Only rank 0 prints and writes files; the others measure into a runner nobody reads.
      bench::Runner silent(bench::RunnerOptions{common->harness, false, true}, nullptr);
      return run_scan(options, *common, silent, args);
    }
    bench::Session session(session_options, argv, files);
    const int code = run_scan(options, *common, session.runner(), args);
    return std::max(code, session.finish());
  };
}

}  // namespace gcb::scan
