// `gcbench run`: the suite of every family that applies.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>

#include "bench/common/family.hpp"

namespace gcb::bench {

// The harness budget of the quick suite.
HarnessOptions quick_harness(HarnessOptions requested);
// Registers `run`, which runs the suite entry of every family in `context.families`, in order.
void add_run_command(CLI::App& root, std::function<int()>& run, const CommandContext& context);

}  // namespace gcb::bench
