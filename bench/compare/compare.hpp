// `gcbench compare BASE NEW` (regression verdicts, exit 1 on a regression) and
// `gcbench export --format gbench|bmf|csv FILE` (results for other tools). Both only read
// result documents; the logic lives in reports/compare.hpp and reports/export.hpp.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <string>

namespace gcb::bench {

// "5%" -> 0.05, "0.05" -> 0.05; a bare number >= 1 is rejected as ambiguous. UsageError.
double parse_threshold(const std::string& text);

void add_compare_command(CLI::App& root, std::function<int()>& run);
void add_export_command(CLI::App& root, std::function<int()>& run);

}  // namespace gcb::bench
