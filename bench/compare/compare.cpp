// `gcbench compare` and `gcbench export`: files in, verdicts and exports out. Every output
// path is checked before anything is read (never an input, never twice), and written through
// the output layer at the end, so bad input (exit 2) never leaves a partial file behind.
#include "bench/compare/compare.hpp"

#include <cmath>
#include <fmt/format.h>
#include <memory>

#include "bench/common/cli.hpp"
#include "core/error.hpp"
#include "reports/compare.hpp"
#include "reports/export.hpp"
#include "reports/result.hpp"
#include "reports/writer.hpp"

namespace gcb::bench {

double parse_threshold(const std::string& text) {
  const bool percent = !text.empty() && text.back() == '%';
  const std::string number = percent ? text.substr(0, text.size() - 1) : text;
  size_t used = 0;
  double v = 0;
  try {
    v = std::stod(number, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != number.size() || !std::isfinite(v) || v < 0)
    throw UsageError(fmt::format("--threshold '{}' is not a non-negative number or percentage (e.g. 5%)", text));
  if (percent) return v / 100;
  if (v >= 1)
    throw UsageError(fmt::format("--threshold '{}' is ambiguous: write {}% for percent or a fraction < 1", text, text));
  return v;
}

namespace {

struct CompareCli {
  std::vector<std::string> files;  // BASE... NEW
  std::string threshold = "5%", md, junit, html;
  CompareOptions options;
  bool quiet = false;
};

struct ExportCli {
  std::string format, input, output, time_unit = "ns";
};

// load_document, with the file named when its message does not already name it.
ResultDocument load(const std::string& path) {
  try {
    return load_document(path);
  } catch (const UsageError& e) {
    const std::string what = e.what();
    if (what.find(path) != std::string::npos) throw;
    throw UsageError(fmt::format("'{}': {}", path, what));
  }
}

}  // namespace

void add_compare_command(CLI::App& root, std::function<int()>& run) {
  auto* app = root.add_subcommand(
      "compare",
      "Compare result documents, BASE (one run, or several runs pooled) against NEW: per case "
      "SAME/FASTER/SLOWER/NOISY/AMBIGUOUS/SUSPECT; exit 1 on a regression, 4 when nothing regressed but a case was "
      "too noisy to judge");
  auto o = std::make_shared<CompareCli>();
  app->add_option(
         "DOCUMENTS", o->files,
         "BASE [BASE ...] NEW: baseline result documents (JSON or JSONL; several runs of one suite are pooled, and a change must "
         "then also clear their slowest or fastest run by the threshold and lie outside one more run's prediction "
         "interval from its family's run-to-run spread), then the contender's")
      ->required()
      ->expected(2, -1);
  app->add_option("--threshold", o->threshold, "Smallest relative change that counts (5% or 0.05)")
      ->capture_default_str();
  app->add_option("--alpha", o->options.alpha, "Family-wise significance level of the Holm-corrected U tests")
      ->capture_default_str();
  app->add_option("--metric", o->options.metrics, "Only these metric names (default: each result's headline)")
      ->delimiter(',');
  app->add_option("--md", o->md, "Write a Markdown summary (PR comment, < 64 KB)")->check(file_path());
  app->add_option("--html", o->html,
                  "Write one HTML page: the verdict first, changed cases by severity, SAME and WAIVED/absent rows "
                  "folded away")
      ->check(file_path());
  app->add_option("--junit", o->junit, "Write JUnit XML (one testcase per comparison, SLOWER = failure)")
      ->check(file_path());
  app->add_flag("--all-metrics", o->options.all_metrics,
                "Judge every shared metric (default: each result's headline, its first metric: bandwidth, busbw, "
                "TFLOP/s, step time)");
  app->add_flag("--all", o->options.all_rows, "Show every row, SAME ones too (default: the rows that changed)");
  app->add_flag("-q,--quiet", o->quiet, "Print only the verdict line, the environment differences and warnings");
  run = [o] {
    o->options.threshold = parse_threshold(o->threshold);
    std::vector<NamedPath> inputs;
    for (size_t i = 0; i + 1 < o->files.size(); ++i) inputs.emplace_back("BASE", o->files[i]);
    inputs.emplace_back("NEW", o->files.back());
    const Outputs outputs({{"--md", o->md}, {"--junit", o->junit}, {"--html", o->html}}, inputs);
    std::vector<ResultDocument> runs;
    for (size_t i = 0; i + 1 < o->files.size(); ++i) runs.push_back(load(o->files[i]));
    const ResultDocument contender = load(o->files.back());
    const CompareReport report = compare_documents(merge_runs(runs), contender, o->options);
    fmt::print("{}", render_compare_console(report, o->options, !o->quiet));
    if (!o->md.empty()) outputs.write(o->md, render_compare_markdown(report, o->options));
    if (!o->junit.empty()) outputs.write(o->junit, render_compare_junit(report));
    if (!o->html.empty()) outputs.write(o->html, render_compare_html(report, o->options));
    if (report.regressed()) return kExitVerifyFailed;
    return report.count(Verdict::noisy) > 0 ? kExitNoisy : kExitOk;
  };
}

void add_export_command(CLI::App& root, std::function<int()>& run) {
  auto* app = root.add_subcommand("export", "Convert a result document: Google Benchmark JSON, Bencher BMF, CSV");
  auto o = std::make_shared<ExportCli>();
  app->add_option("--format", o->format, "gbench, bmf or csv")->required();
  app->add_option("FILE", o->input, "Result document (JSON or JSONL)")->required();
  app->add_option("-o,--output", o->output, "Output file (default: standard output)")->check(file_path());
  app->add_option("--time-unit", o->time_unit, "gbench real_time/cpu_time unit: ns, us, ms, s")->capture_default_str();
  run = [o] {
    const ExportFormat format = parse_export_format(o->format);
    const Outputs outputs({{"-o", o->output}}, {{"FILE", o->input}});
    const ResultDocument doc = load(o->input);
    const std::string text = export_text(doc, format, o->time_unit);
    if (o->output.empty()) {
      fmt::print("{}", text);
    } else {
      outputs.write(o->output, text);
    }
    return kExitOk;
  };
}

}  // namespace gcb::bench
