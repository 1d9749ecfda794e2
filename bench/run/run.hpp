// `gcbench run`: the suite of every family that applies.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <string>
#include <vector>

#include "bench/mem/mem.hpp"

namespace gcb::bench {

// The mem options and harness budget of the quick suite.
MemOptions quick_mem_options();
HarnessOptions quick_harness(HarnessOptions requested);
void add_run_command(CLI::App& root, std::function<int()>& run, const std::vector<std::string>& argv);

}  // namespace gcb::bench
