// `gcbench report`: loads the result documents (load_input), renders every output asked for — HTML, Markdown, CSV
// (combined_csv) — before writing any, or prints a family's console tables (--format NAME-table); add_report_command
// registers it with the family table's report sections.
#include "bench/report/report.hpp"

#include <fmt/format.h>
#include <algorithm>
#include <memory>

#include "bench/common/cli.hpp"
#include "core/error.hpp"
#include "reports/escape.hpp"
#include "reports/html.hpp"
#include "reports/markdown.hpp"
#include "reports/render.hpp"
#include "reports/writer.hpp"

namespace gcb::bench {

namespace {

// One CSV for all runs: render_csv's rows with the run's label in front, under one header.
std::string combined_csv(const std::vector<report::Run>& runs) {
  std::vector<Result> all;  // one set of parameter columns over every run
  for (const auto& run : runs) all.insert(all.end(), run.doc.results.begin(), run.doc.results.end());
  const std::vector<std::string> columns = csv_param_columns(all);
  std::string out;
  for (size_t i = 0; i < runs.size(); ++i) {
    const std::string csv = render_csv(runs[i].doc, columns);
    size_t pos = 0;
    bool header = true;
    while (pos < csv.size()) {
      const size_t nl = csv.find('\n', pos);
      const std::string line = csv.substr(pos, nl == std::string::npos ? std::string::npos : nl - pos);
      pos = nl == std::string::npos ? csv.size() : nl + 1;
      if (header) {
        if (i == 0) out += "run," + line + "\n";
        header = false;
        continue;
      }
      out += csv_field(runs[i].label) + "," + line + "\n";
    }
  }
  return out;
}

// Any problem loading names the file once.
ResultDocument load_input(const std::string& path) {
  try {
    return load_document(path);
  } catch (const UsageError& e) {
    const std::string what = e.what();
    throw UsageError(what.find(path) != std::string::npos ? what : fmt::format("'{}': {}", path, what));
  }
}

std::string table_format(const report::ReportSection& s) { return fmt::format("{}-table", s.family); }

}  // namespace

int run_report(const ReportOptions& o, std::span<const report::ReportSection> sections) {
  if (o.inputs.empty()) throw UsageError("report needs at least one result file");
  if (!o.format.empty()) {
    const auto s = std::find_if(sections.begin(), sections.end(), [&](const report::ReportSection& x) {
      return x.view->tables && table_format(x) == o.format;
    });
    if (s == sections.end()) throw UsageError(fmt::format("--format {}: no family prints such tables", o.format));
    if (!o.html.empty() || !o.markdown.empty() || !o.csv.empty() || !o.baseline.empty())
      throw UsageError(
          fmt::format("--format {} prints to standard output; it takes no -o, --md, --csv or --baseline", o.format));
    std::vector<ResultDocument> docs;
    for (const auto& p : o.inputs) docs.push_back(load_input(p));  // every input loads before anything prints
    for (const auto& doc : docs) fmt::print("{}", s->view->tables(doc.results));
    return kExitOk;
  }
  if (o.html.empty() && o.markdown.empty() && o.csv.empty())
    throw UsageError("report has nothing to write: give -o FILE.html, --md FILE or --csv FILE");
  std::vector<std::string> paths;
  if (!o.baseline.empty()) paths.push_back(o.baseline);
  paths.insert(paths.end(), o.inputs.begin(), o.inputs.end());
  std::vector<NamedPath> inputs;
  for (const auto& p : paths) inputs.push_back({p == o.baseline ? "--baseline" : "RESULTS", p});
  const Outputs outputs({{"-o", o.html}, {"--md", o.markdown}, {"--csv", o.csv}}, inputs);
  const auto labels = report::run_labels(paths);
  std::vector<report::Run> runs;
  for (size_t i = 0; i < paths.size(); ++i) runs.push_back({labels[i], load_input(paths[i])});

  // Render everything before writing anything, so a failure leaves no partial set of outputs.
  std::string html, markdown, csv;
  if (!o.html.empty()) html = report::render_html(runs, sections, {o.title});
  if (!o.markdown.empty()) markdown = report::render_markdown(runs, sections, {o.title, 64000});
  if (!o.csv.empty()) csv = combined_csv(runs);
  outputs.write(o.html, html);
  outputs.write(o.markdown, markdown);
  outputs.write(o.csv, csv);
  return kExitOk;
}

void add_report_command(CLI::App& root, std::function<int()>& run, std::span<const Family> families) {
  auto* app =
      root.add_subcommand("report", "Render result files as an HTML report (+ Markdown, CSV), runs side by side");
  auto o = std::make_shared<ReportOptions>();
  app->add_option("results", o->inputs, "result documents (--json) or JSONL files (--jsonl); the first is the baseline")
      ->required();
  app->add_option("-o,--output", o->html, "self-contained HTML report (inline SVG, no JavaScript)")->check(file_path());
  app->add_option("--md", o->markdown, "Markdown summary, at most 64,000 bytes (fits a GitHub PR comment)")
      ->check(file_path());
  app->add_option("--csv", o->csv, "CSV: one row per run × result × metric")->check(file_path());
  app->add_option("--baseline", o->baseline,
                  "result file every ratio is relative to (default: the first RESULTS file)");
  app->add_option("--title", o->title, "report title")->capture_default_str();
  // --format NAME-table for each family whose view has console tables.
  std::vector<report::ReportSection> sections = report_sections(families);
  std::vector<std::string> formats;
  std::string format_help;
  for (const auto& s : sections)
    if (s.view->tables) {
      formats.push_back(table_format(s));
      format_help +=
          fmt::format("{}{}: print {} to standard output, as `gcbench {}` printed them, instead of writing files",
                      format_help.empty() ? "" : "; ", formats.back(), s.view->tables_help, s.family);
    }
  app->add_option("--format", o->format, format_help)->check(CLI::IsMember(formats));
  run = [o, sections = std::move(sections)] { return run_report(*o, sections); };
}

}  // namespace gcb::bench
