// The one table of subcommand families. Row order is the order of `gcbench --help` and of the
// suite `gcbench run` runs (its entries: the quick presets of each family; train, coll and p2p
// use them in the full suite too). A row's last field is its view in `gcbench report`
// (bench/NAME/NAME_report.hpp); nullptr where its results get the side-by-side table.
#include "bench/families.hpp"

#include <array>

#include "bench/attn/attn.hpp"
#include "bench/coll/coll.hpp"
#include "bench/coll/coll_report.hpp"
#include "bench/compare/compare.hpp"
#include "bench/gemm/gemm.hpp"
#include "bench/mem/mem.hpp"
#include "bench/mem/mem_report.hpp"
#include "bench/p2p/p2p.hpp"
#include "bench/p2p/p2p_report.hpp"
#include "bench/plan/plan.hpp"
#include "bench/plan/plan_report.hpp"
#include "bench/report/report.hpp"
#include "bench/run/run.hpp"
#include "bench/scan/scan.hpp"
#include "bench/scan/scan_report.hpp"
#include "bench/topo/topo.hpp"
#include "bench/train/train.hpp"
#include "bench/train/train_report.hpp"

namespace gcb::bench {
namespace {

using App = CLI::App;
using Run = std::function<int()>;
using Context = CommandContext;

const std::array kFamilies = {
    Family{
        "mem", [](App& a, Run& r, const Context& c) { add_mem_command(a, r, c.argv); },
        [](const SuiteRun& s) { run_mem(s.quick ? quick_mem_options() : MemOptions{}, s.devices, s.seed, s.runner); },
        &kMemReportView},
    // Collectives over the ranks this launch has (threads here; GPUs or mpirun's ranks
    // elsewhere); in the suite their nccl-tests table is not printed on top of the runner's rows.
    Family{"coll", [](App& a, Run& r, const Context& c) { add_coll_command(a, r, c.argv); },
           [](const SuiteRun& s) { run_coll_quick(s.microsecond_harness, s.runner, /*quiet=*/true, s.seed); },
           &kCollReportView},
    Family{"p2p", [](App& a, Run& r, const Context& c) { add_p2p_command(a, r, c.argv); },
           [](const SuiteRun& s) { run_p2p_quick(s.devices, s.microsecond_harness, s.runner, s.seed); },
           &kP2pReportView},
    Family{"gemm", [](App& a, Run& r, const Context& c) { add_gemm_command(a, r, c.argv); },
           [](const SuiteRun& s) {
             run_gemm(s.quick ? quick_gemm_options() : GemmOptions{}, s.devices, s.seed, s.runner);
           },
           nullptr},
    Family{"attn", [](App& a, Run& r, const Context& c) { add_attn_command(a, r, c.argv); },
           [](const SuiteRun& s) {
             run_attn(s.quick ? quick_attn_options() : AttnOptions{}, s.devices, s.seed, s.runner);
           },
           nullptr},
    Family{"run", add_run_command, nullptr, nullptr},
    Family{"report", [](App& a, Run& r, const Context& c) { add_report_command(a, r, c.families); }, nullptr, nullptr},
    Family{"topo", [](App& a, Run& r, const Context&) { add_topo_command(a, r); }, nullptr, nullptr},
    Family{"train", [](App& a, Run& r, const Context& c) { add_train_command(a, r, c.argv); },
           [](const SuiteRun& s) { run_train_quick(s.runner, s.seed, kQuickSamples); }, &kTrainReportView},
    Family{"plan", [](App& a, Run& r, const Context& c) { add_plan_command(a, r, c.argv); }, nullptr, &kPlanReportView},
    Family{"compare", [](App& a, Run& r, const Context&) { add_compare_command(a, r); }, nullptr, nullptr},
    Family{"export", [](App& a, Run& r, const Context&) { add_export_command(a, r); }, nullptr, nullptr},
    Family{"scan", [](App& a, Run& r, const Context& c) { scan::add_scan_command(a, r, c.argv); }, nullptr,
           &scan::kScanReportView},
};

}  // namespace

std::span<const Family> families() { return kFamilies; }

}  // namespace gcb::bench
