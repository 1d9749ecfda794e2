// `gcbench report`: result documents → one self-contained HTML report (inline SVG, no
// JavaScript), a Markdown summary for PR comments and a CSV, comparing runs side by side.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "bench/common/family.hpp"
#include "reports/html.hpp"

namespace gcb::bench {

struct ReportOptions {
  std::vector<std::string> inputs;  // result documents or JSONL files
  std::string html, markdown, csv;  // outputs; at least one
  std::string baseline;             // optional: the run every ratio is relative to (else inputs[0])
  std::string title = "gcbench report";
  std::string format;  // "NAME-table": print family NAME's console tables to standard output instead
};

// Checks every output path, loads every input (any problem: gcb::UsageError with one line,
// before anything is written), renders, then writes each output atomically; with format
// "NAME-table" (NAME a family among `sections` whose view has console tables: coll), prints each
// input's tables of that family instead (exactly as `gcbench NAME` printed them).
// A family with one of `sections` gets its view; any other its side-by-side table. Returns the
// exit code (0).
int run_report(const ReportOptions& o, std::span<const report::ReportSection> sections);

// The sections are the views of the rows of `families` (the family table) that have one.
void add_report_command(CLI::App& root, std::function<int()>& run, std::span<const Family> families);

}  // namespace gcb::bench
