// The versioned result schema `gcbench.result/1` (docs/design.md "Result"): one document is
// {schema, context, results[]}. Every renderer and exporter is a pure function of it.
// Doubles that are not finite never reach a file: they become null, and the result's status
// says why.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/harness.hpp"
#include "core/stats.hpp"

namespace gcb {

inline constexpr std::string_view kResultSchema = "gcbench.result/1";

enum class Status { pass, fail, waived, error };
std::string_view status_name(Status s);  // "PASS", "FAIL", "WAIVED", "ERROR"
std::optional<Status> parse_status(std::string_view s);

struct Metric {
  std::string name;             // "bandwidth", "latency", "busbw", ...
  std::optional<double> value;  // null when not measurable (status says why)
  std::string unit;             // "GB/s" (1e9 B/s), "s", "ns", "TFLOP/s", ...
  bool higher_is_better = true;
  std::optional<double> peak;  // same unit as value, when known
  std::string peak_source;     // where the peak comes from ("spec:H100 SXM", "nvml:derived")
  std::optional<double> percent_of_peak() const;
};

struct Result {
  std::string key;                                   // "<family>/<case>", e.g. "mem/hbm/triad"
  nlohmann::json params = nlohmann::json::object();  // the axes of this case
  Status status = Status::pass;
  std::string reason;                                // for FAIL, WAIVED, ERROR
  std::vector<double> samples;                       // raw seconds per launch
  std::vector<uint64_t> sample_flags;                // per sample: NVML throttle reasons (0 = none)
  std::optional<Statistics> stats;                   // of samples
  std::vector<Metric> metrics;                       // the first is the headline
  nlohmann::json model = nlohmann::json::object();   // bytes / flops per launch
  nlohmann::json clocks = nlohmann::json::object();  // NVML before/after
  bool throttled = false;                            // any sample taken while a slowdown reason was active
  int latch_retakes = 0;                             // harness: samples retaken after the timer's latch timed out
  std::vector<size_t> latch_timeouts;                // harness: samples kept although their latch timed out
  std::string stop_reason;                           // harness: converged | max_samples | max_time
  int batch = 0;
  std::string timer;
  nlohmann::json extra = nlohmann::json::object();  // family-specific fields

  std::string family() const { return key.substr(0, key.find('/')); }
  const Metric* metric(std::string_view name) const;
  // Fills samples, flags, stats, stop reason, batch and timer from a harness measurement.
  void take(const Measurement& m);
};

struct ResultDocument {
  nlohmann::json context = nlohmann::json::object();
  std::vector<Result> results;
};

nlohmann::json to_json(const Metric& m);
nlohmann::json to_json(const Result& r);
nlohmann::json to_json(const ResultDocument& d);
// Strict readers: throw gcb::UsageError with one clear line for a wrong schema name, a newer
// schema version, or a malformed field.
Metric metric_from_json(const nlohmann::json& j);
Result result_from_json(const nlohmann::json& j);
ResultDocument document_from_json(const nlohmann::json& j);

// Replaces every non-finite number in `j` by null; returns how many were replaced.
size_t scrub_non_finite(nlohmann::json& j);

// Loads a result document (or a JSONL file of results) from disk; UsageError on any problem.
ResultDocument load_document(const std::string& path);

}  // namespace gcb
