// `gcbench run --suite quick|full`: every family that exists and applies to this machine, into
// one result document: mem, train (a small layout sweep), gemm, attn, coll, p2p.
#include "bench/run/run.hpp"

#include "bench/attn/attn.hpp"
#include "bench/coll/coll.hpp"
#include "bench/gemm/gemm.hpp"
#include "bench/mem/mem.hpp"
#include "bench/p2p/p2p.hpp"
#include "bench/train/train.hpp"
#include "core/error.hpp"

namespace gcb::bench {

MemOptions quick_mem_options() {
  MemOptions o;
  o.kernels = {"copy", "triad", "dot"};
  o.copy_min = 64 << 10;
  o.copy_max = 256 << 20;
  o.copy_factor = 16;
  o.latency_min = 4 << 10;
  o.latency_max = 16 << 20;
  o.peer_rounds = 2;  // one round in each order
  return o;
}

HarnessOptions quick_harness(HarnessOptions h) {
  // A quick suite trades precision for time: fewer samples and a 1 s budget per case. The user's
  // explicit flags still win where they ask for less.
  h.min_samples = std::min(h.min_samples, 5);
  h.max_time = std::min(h.max_time, 1.0);
  h.min_time = std::min(h.min_time, 0.05);
  h.noise = std::max(h.noise, 0.02);
  return h;
}

void add_run_command(CLI::App& root, std::function<int()>& run, const std::vector<std::string>& argv) {
  auto* app = root.add_subcommand("run", "Run every benchmark family that applies to this machine");
  auto common = std::make_shared<CommonOptions>();
  auto suite = std::make_shared<std::string>("quick");
  add_common_options(*app, *common);
  app->add_option("--suite", *suite, "quick (about a minute on a CPU-only machine) or full (every default)")
      ->check(CLI::IsMember({"quick", "full"}))
      ->capture_default_str();
  run = [=, &argv] {
    const bool quick = *suite == "quick";
    validate(common->harness);  // the user's values, before the quick preset adjusts them
    CommonOptions options = *common;
    if (quick) options.harness = quick_harness(options.harness);
    const DeviceSelection sel = select_devices(options.device);
    Session session(options, argv);
    run_mem(quick ? quick_mem_options() : MemOptions{}, sel, options.seed, session.runner());
    run_train_quick(session.runner());
    run_gemm(quick ? quick_gemm_options() : GemmOptions{}, sel, options.seed, session.runner());
    run_attn(quick ? quick_attn_options() : AttnOptions{}, sel, options.seed, session.runner());
    // Collectives over the ranks this launch has (threads here; GPUs or mpirun's ranks elsewhere);
    // their nccl-tests table is not printed on top of the runner's rows.
    const HarnessOptions micro =
        microsecond_family_harness(*app, options.harness, quick ? 5 : kMicrosecondFamilySamples);
    run_coll_quick(micro, session.runner(), /*quiet=*/true);
    run_p2p_quick(sel, micro, session.runner(), options.seed);
    return session.finish();
  };
}

}  // namespace gcb::bench
