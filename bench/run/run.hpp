// `gcbench run`: the suite of every family that applies.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "bench/common/family.hpp"

namespace gcb::bench {

// Samples per case in the quick suite: enough that `gcbench compare`'s U test can find one case's
// change significant at α 0.05 after Holm's correction over up to kQuickGatedCases cases
// (min_samples_for_u_test(0.05, 250) = 10; test_compare checks the two agree). With the 5 samples
// of before, no change could ever pass the test, and compare fell back to 3 × CV.
constexpr int kQuickGatedCases = 250;
constexpr int kQuickSamples = 10;

// The harness budget of the quick suite: at least kQuickSamples samples (fewer only where the
// user's --min-samples asks for fewer), at most 1 s of sampling per case.
HarnessOptions quick_harness(HarnessOptions requested);
// The suite's families in table order, or those of a comma-separated `only` (gcb::UsageError for
// a name the suite does not have, listing the ones it has).
std::vector<const Family*> suite_families(std::span<const Family> table, const std::string& only);
// Registers `run`, which runs the suite entry of every family in `context.families`, in order.
void add_run_command(CLI::App& root, std::function<int()>& run, const CommandContext& context);

}  // namespace gcb::bench
