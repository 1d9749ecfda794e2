// `gcbench report`: result documents → one self-contained HTML report (inline SVG, no
// JavaScript), a Markdown summary for PR comments and a CSV, comparing runs side by side.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <string>
#include <vector>

namespace gcb::bench {

struct ReportOptions {
  std::vector<std::string> inputs;  // result documents or JSONL files
  std::string html, markdown, csv;  // outputs; at least one
  std::string baseline;             // optional: the run every ratio is relative to (else inputs[0])
  std::string title = "gcbench report";
  std::string format;  // "coll-table": print the nccl-tests tables to standard output instead
};

// Checks every output path, loads every input (any problem: gcb::UsageError with one line,
// before anything is written), renders, then writes each output atomically; with format
// "coll-table", prints each input's coll tables instead (exactly as `gcbench coll` printed them).
// Returns the exit code (0).
int run_report(const ReportOptions& o);

void add_report_command(CLI::App& root, std::function<int()>& run);

}  // namespace gcb::bench
