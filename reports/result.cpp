// The `gcbench.result/1` schema in code (result.hpp): Statistics, Metric and Result to and from JSON, status names,
// percent of peak; doubles that are not finite written as null.
#include "reports/result.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <sstream>

#include "core/error.hpp"
#include "core/input_file.hpp"

namespace gcb {

namespace {

nlohmann::json number_or_null(std::optional<double> v) {
  return v && std::isfinite(*v) ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

std::optional<double> optional_number(const nlohmann::json& j, const char* key) {
  if (!j.contains(key) || j.at(key).is_null()) return std::nullopt;
  return j.at(key).get<double>();
}

nlohmann::json stats_json(const Statistics& s) {
  auto num = [](double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); };
  return {{"count", s.count},    {"min", num(s.min)},       {"max", num(s.max)},
          {"mean", num(s.mean)}, {"median", num(s.median)}, {"p5", num(s.p5)},
          {"p95", num(s.p95)},   {"stddev", num(s.stddev)}, {"cv", num(s.cv)}};
}

Statistics stats_from_json(const nlohmann::json& j) {
  Statistics s;
  s.count = j.at("count").get<size_t>();
  auto get = [&](const char* k) { return j.at(k).is_null() ? std::nan("") : j.at(k).get<double>(); };
  s.min = get("min");
  s.max = get("max");
  s.mean = get("mean");
  s.median = get("median");
  s.p5 = get("p5");
  s.p95 = get("p95");
  s.stddev = get("stddev");
  s.cv = get("cv");
  return s;
}

}  // namespace

std::string_view status_name(Status s) {
  switch (s) {
    case Status::pass: return "PASS";
    case Status::fail: return "FAIL";
    case Status::waived: return "WAIVED";
    case Status::error: return "ERROR";
  }
  return "?";
}

std::optional<Status> parse_status(std::string_view s) {
  for (Status st : {Status::pass, Status::fail, Status::waived, Status::error})
    if (status_name(st) == s) return st;
  return std::nullopt;
}

std::optional<double> Metric::percent_of_peak() const {
  if (!value || !peak || *peak <= 0) return std::nullopt;
  return 100.0 * *value / *peak;
}

const Metric* Result::metric(std::string_view name) const {
  for (const auto& m : metrics)
    if (m.name == name) return &m;
  return nullptr;
}

void Result::take(const Measurement& m) {
  samples = m.samples;
  sample_flags = m.sample_flags;
  stats = m.stats;
  stop_reason = std::string(stop_reason_name(m.stop));
  batch = m.batch;
  timer = m.timer;
  latch_retakes = m.latch_retakes;
  latch_timeouts = m.latch_timeouts;
}

nlohmann::json to_json(const Metric& m) {
  nlohmann::json j = {
      {"name", m.name}, {"value", number_or_null(m.value)}, {"unit", m.unit}, {"higher_is_better", m.higher_is_better}};
  if (m.peak) {
    j["peak"] = number_or_null(m.peak);
    j["peak_source"] = m.peak_source;
    j["percent_of_peak"] = number_or_null(m.percent_of_peak());
  }
  return j;
}

nlohmann::json to_json(const Result& r) {
  nlohmann::json j;
  j["key"] = r.key;
  j["family"] = r.family();
  j["params"] = r.params;
  j["status"] = status_name(r.status);
  if (!r.reason.empty()) j["reason"] = r.reason;
  nlohmann::json metrics = nlohmann::json::array();
  for (const auto& m : r.metrics) metrics.push_back(to_json(m));
  j["metrics"] = metrics;
  j["statistics"] = r.stats ? stats_json(*r.stats) : nlohmann::json(nullptr);
  nlohmann::json samples = nlohmann::json::array();
  for (double s : r.samples) samples.push_back(std::isfinite(s) ? nlohmann::json(s) : nlohmann::json(nullptr));
  j["samples"] = samples;
  j["sample_flags"] = r.sample_flags;
  j["model"] = r.model;
  j["clocks"] = r.clocks;
  j["throttled"] = r.throttled;
  j["harness"] = {{"stop_reason", r.stop_reason}, {"batch", r.batch}, {"timer", r.timer}};
  // Latch timeouts are the timer's, not the GPU's: kept apart from sample_flags and `throttled`.
  if (r.latch_retakes > 0 || !r.latch_timeouts.empty())
    j["harness"].update({{"latch_retakes", r.latch_retakes}, {"latch_timeouts", r.latch_timeouts}});
  j["extra"] = r.extra;
  scrub_non_finite(j);
  return j;
}

nlohmann::json to_json(const ResultDocument& d) {
  nlohmann::json results = nlohmann::json::array();
  for (const auto& r : d.results) results.push_back(to_json(r));
  nlohmann::json j = {{"schema", kResultSchema}, {"context", d.context}, {"results", results}};
  scrub_non_finite(j);
  return j;
}

Metric metric_from_json(const nlohmann::json& j) {
  Metric m;
  m.name = j.at("name").get<std::string>();
  m.value = optional_number(j, "value");
  m.unit = j.at("unit").get<std::string>();
  m.higher_is_better = j.at("higher_is_better").get<bool>();
  m.peak = optional_number(j, "peak");
  if (j.contains("peak_source")) m.peak_source = j.at("peak_source").get<std::string>();
  return m;
}

Result result_from_json(const nlohmann::json& j) {
  Result r;
  try {
    if (!j.is_object()) throw UsageError(fmt::format("malformed result: {} is not an object", j.dump().substr(0, 40)));
    r.key = j.at("key").get<std::string>();
    // Renderers walk these as objects and arrays: a wrong type is refused here, not met later.
    auto require = [&](const char* field, bool ok, const char* type) {
      if (!ok) throw UsageError(fmt::format("malformed result '{}': \"{}\" must be {}", r.key, field, type));
    };
    require("params", j.at("params").is_object(), "an object");
    require("metrics", j.at("metrics").is_array(), "an array");
    require("samples", j.at("samples").is_array(), "an array");
    require("model", j.at("model").is_object(), "an object");
    require("clocks", j.at("clocks").is_object(), "an object");
    require("harness", j.at("harness").is_object(), "an object");
    require("statistics", j.at("statistics").is_object() || j.at("statistics").is_null(), "an object or null");
    require("extra", !j.contains("extra") || j.at("extra").is_object(), "an object");
    for (const auto& m : j.at("metrics")) require("metrics", m.is_object(), "an array of objects");
    r.params = j.at("params");
    const auto status = parse_status(j.at("status").get<std::string>());
    if (!status) throw UsageError(fmt::format("result '{}': unknown status {}", r.key, j.at("status").dump()));
    r.status = *status;
    if (j.contains("reason")) r.reason = j.at("reason").get<std::string>();
    for (const auto& m : j.at("metrics")) r.metrics.push_back(metric_from_json(m));
    if (!j.at("statistics").is_null()) r.stats = stats_from_json(j.at("statistics"));
    for (const auto& s : j.at("samples")) r.samples.push_back(s.is_null() ? std::nan("") : s.get<double>());
    r.sample_flags = j.at("sample_flags").get<std::vector<uint64_t>>();
    r.model = j.at("model");
    r.clocks = j.at("clocks");
    r.throttled = j.at("throttled").get<bool>();
    const auto& h = j.at("harness");
    r.stop_reason = h.at("stop_reason").get<std::string>();
    r.batch = h.at("batch").get<int>();
    r.timer = h.at("timer").get<std::string>();
    r.latch_retakes = h.value("latch_retakes", 0);
    r.latch_timeouts = h.value("latch_timeouts", std::vector<size_t>{});
    r.extra = j.value("extra", nlohmann::json::object());
  } catch (const nlohmann::json::exception& e) {
    throw UsageError(fmt::format("malformed result '{}': {}", r.key.empty() ? "?" : r.key, e.what()));
  }
  return r;
}

namespace {

// The context fields that report, compare, export and topo read, each checked for its type when
// present, so that a mistyped one is bad input naming the field (exit 2), not a fault deep in a
// reader. Parents come before their children; fields not listed are kept and never read.
void check_context(const nlohmann::json& c) {
  enum class Type { string, scalar, count, object, strings, objects };
  struct Field {
    const char* pointer;
    Type type;
  };
  static constexpr Field kFields[] = {
      {"/date", Type::string},
      {"/host", Type::string},
      {"/command_line", Type::strings},
      {"/cpu", Type::object},
      {"/cpu/model", Type::string},
      {"/cpu/logical_cores", Type::count},
      {"/cuda", Type::object},
      {"/cuda/driver_version", Type::scalar},
      {"/cuda/runtime_version", Type::scalar},
      {"/nvml", Type::object},
      {"/nvml/driver_version", Type::scalar},
      {"/gcbench", Type::object},
      {"/gcbench/version", Type::scalar},
      {"/gcbench/revision", Type::scalar},
      {"/gpus", Type::objects},
      {"/libraries", Type::object},
      {"/topology", Type::object},
      {"/topology/fingerprint", Type::scalar},
      {"/environment", Type::object},
  };
  auto expected = [](Type t) {
    switch (t) {
      case Type::string: return "a string";
      case Type::scalar: return "a string or a number";
      case Type::count: return "a non-negative integer";
      case Type::object: return "an object";
      case Type::strings: return "an array of strings";
      case Type::objects: return "an array of objects";
    }
    return "";
  };
  auto fits = [](const nlohmann::json& v, Type t) {
    switch (t) {
      case Type::string: return v.is_string();
      case Type::scalar: return v.is_string() || v.is_number();
      case Type::count: return v.is_number_unsigned() || (v.is_number_integer() && v.get<int64_t>() >= 0);
      case Type::object: return v.is_object();
      case Type::strings:
        return v.is_array() && std::all_of(v.begin(), v.end(), [](const auto& e) { return e.is_string(); });
      case Type::objects:
        return v.is_array() && std::all_of(v.begin(), v.end(), [](const auto& e) { return e.is_object(); });
    }
    return false;
  };
  for (const Field& f : kFields) {
    const nlohmann::json::json_pointer p(f.pointer);
    if (!c.contains(p)) continue;  // absent (its parent, checked first, is an object)
    const nlohmann::json& v = c.at(p);
    if (fits(v, f.type)) continue;
    std::string name = std::string("context") + f.pointer;
    std::replace(name.begin(), name.end(), '/', '.');
    throw UsageError(
        fmt::format("malformed result document: {} is a JSON {}, expected {}", name, v.type_name(), expected(f.type)));
  }
  if (c.contains("gpus"))
    for (size_t i = 0; i < c.at("gpus").size(); ++i) {
      const auto& g = c.at("gpus").at(i);
      if (g.contains("name") && !g.at("name").is_string())
        throw UsageError(fmt::format("malformed result document: context.gpus[{}].name is a JSON {}, expected a string",
                                     i, g.at("name").type_name()));
    }
}

}  // namespace

ResultDocument document_from_json(const nlohmann::json& j) {
  if (!j.is_object() || !j.contains("schema")) throw UsageError("not a gcbench result document (no \"schema\" field)");
  if (!j.at("schema").is_string())
    throw UsageError(fmt::format("not a gcbench result document (schema {})", j.at("schema").dump()));
  const auto schema = j.at("schema").get<std::string>();
  const std::string_view expected_prefix = "gcbench.result/";
  if (schema.rfind(expected_prefix, 0) != 0)
    throw UsageError(fmt::format("not a gcbench result document (schema '{}')", schema));
  if (schema != kResultSchema)
    throw UsageError(fmt::format("unsupported schema version '{}': this gcbench reads '{}'", schema, kResultSchema));
  ResultDocument d;
  if (!j.contains("context") || !j.contains("results") || !j.at("results").is_array())
    throw UsageError("malformed result document: needs \"context\" and a \"results\" array");
  if (!j.at("context").is_object()) throw UsageError("malformed result document: \"context\" is not an object");
  check_context(j.at("context"));
  d.context = j.at("context");
  for (const auto& r : j.at("results")) d.results.push_back(result_from_json(r));
  return d;
}

size_t scrub_non_finite(nlohmann::json& j) {
  size_t n = 0;
  if (j.is_number_float()) {
    if (!std::isfinite(j.get<double>())) {
      j = nullptr;
      ++n;
    }
  } else if (j.is_structured()) {
    for (auto& child : j) n += scrub_non_finite(child);
  }
  return n;
}

ResultDocument load_document(const std::string& path) {
  const std::string text = read_input_file(path, "result file");
  std::string not_a_document;
  try {
    const nlohmann::json whole = parse_json_input(text, fmt::format("result file '{}'", path));
    // A JSONL file of a single line is one JSON value too: a record, not a document.
    if (!(whole.is_object() && whole.contains("result") && !whole.contains("results")))
      return document_from_json(whole);
  } catch (const JsonSyntaxError& e) {
    // Not one JSON document: maybe JSONL (one result per line, as written during a run).
    not_a_document = e.what();
  }
  ResultDocument d;
  std::istringstream lines(text);
  int line_no = 0;
  for (std::string line; std::getline(lines, line);) {
    ++line_no;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    nlohmann::json j;
    const std::string where = fmt::format("'{}' line {}", path, line_no);
    try {
      j = parse_json_input(line, where);
    } catch (const JsonSyntaxError& e) {
      // Every JSONL record starts with '{"'; a first line without it is a broken document.
      if (d.results.empty() && !line.starts_with("{\"")) throw UsageError(not_a_document);
      if (!e.truncated())
        throw UsageError(
            fmt::format("'{}' is neither a result document nor JSONL: line {} is not JSON", path, line_no));
      // A line cut short (the writer was killed, or the disk filled): every complete line counts.
      fmt::print(stderr, "gcbench: warning: {} is incomplete (the run was interrupted while writing it); skipped\n",
                 where);
      continue;
    }
    if (!j.is_object() || !j.contains("schema") || !j.contains("result"))
      throw UsageError(fmt::format("{}: not a gcbench JSONL record", where));
    if (j.at("schema") != kResultSchema)
      throw UsageError(fmt::format("{}: unsupported schema {}", where, j.at("schema").dump()));
    d.results.push_back(result_from_json(j.at("result")));
  }
  if (d.results.empty()) throw UsageError(fmt::format("'{}' holds no results", path));
  return d;
}

}  // namespace gcb
