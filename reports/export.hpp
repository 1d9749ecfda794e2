// Exporters that let other tools read gcbench results (google/benchmark docs/user_guide.md JSON output,
// §2.1, §2.2): Google Benchmark JSON (tools/compare.py, github-action-benchmark `googlecpp`,
// Bencher `cpp_google`), Bencher Metric Format, and CSV. Pure functions of the document; no
// output ever holds NaN or Infinity.
#pragma once

#include <string>
#include <string_view>

#include "reports/result.hpp"

namespace gcb {

enum class ExportFormat { gbench, bmf, csv };
// "gbench", "bmf", "csv"; throws gcb::UsageError otherwise.
ExportFormat parse_export_format(std::string_view name);

// "<key>/<param>:<value>/..." in params key order, e.g. "mem/host/triad/dtype:fp32/size:65536".
std::string benchmark_name(const Result& r);

// Google Benchmark 1.7.1 JSON: {"context": {...}, "benchmarks": [...]}. One "iteration" entry per
// result that PASSED with samples: real_time = cpu_time = the median seconds per launch in
// `time_unit` ("ns", "us", "ms", "s"; one unit for all, so compare.py compares like with like),
// iterations = sample count, and every finite metric as a flat counter.
nlohmann::ordered_json export_gbench(const ResultDocument& doc, std::string_view time_unit = "ns");
// Bencher Metric Format: {"<benchmark name>": {"<measure>": {"value", "lower_value", "upper_value"}}}.
// Measure "latency" = seconds per launch in ns (median, p5, p95); each finite metric of a PASS
// result is a measure named after the metric (value only).
nlohmann::ordered_json export_bmf(const ResultDocument& doc);
// The text of the chosen format (JSON pretty-printed, newline-terminated).
std::string export_text(const ResultDocument& doc, ExportFormat format, std::string_view time_unit = "ns");

}  // namespace gcb
