// One row per subcommand family: its name, how it adds its command, its entry in `gcbench run`
// where it has one and its view in `gcbench report` where it has one. gcbench's main registers
// the commands in table order (so `--help` lists them in it), `gcbench run` runs the suite entries
// in the same order and `gcbench report` draws each family's section with its row's view. Adding a
// family is its folder, one row in bench/families.cpp and one add_subdirectory line (and its
// library in gcb_bench's link list).
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "bench/common/cli.hpp"
#include "bench/common/runner.hpp"
#include "core/harness.hpp"
#include "reports/html.hpp"

namespace gcb::bench {

struct Family;

// What a family's command may need besides its parent app: the process's command line (for the
// result context) and the whole table (for `run`, which loops over it, and `report`, which draws
// the rows' views).
struct CommandContext {
  const std::vector<std::string>& argv;
  std::span<const Family> families;
};

// One family's part of `gcbench run`: the suite (quick or full), the devices and seed the user
// chose, the harness of microsecond families (collectives, rank pairs: see
// microsecond_family_harness) and the runner every result goes through.
struct SuiteRun {
  bool quick;
  const DeviceSelection& devices;
  uint64_t seed;
  const HarnessOptions& microsecond_harness;
  Runner& runner;
};

struct Family {
  const char* name;
  void (*add_command)(CLI::App& root, std::function<int()>& run, const CommandContext& context);
  void (*run_in_suite)(const SuiteRun& suite);  // nullptr: not part of `gcbench run`
  // Its section of `gcbench report` (reports/html.hpp; bench/NAME/NAME_report.hpp). nullptr: its
  // results get "Family NAME" and the side-by-side table.
  const report::ReportView* report_view;
};

// The report sections of the rows with a view of their own, in table order.
inline std::vector<report::ReportSection> report_sections(std::span<const Family> families) {
  std::vector<report::ReportSection> out;
  for (const Family& f : families)
    if (f.report_view) out.push_back({f.name, f.report_view});
  return out;
}

}  // namespace gcb::bench
