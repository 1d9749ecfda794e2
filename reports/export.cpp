// export.hpp's exporters: Google Benchmark JSON (google/benchmark docs/user_guide.md), Bencher Metric Format and CSV,
// pure functions of a document that never write NaN or Infinity; parse_export_format.
#include "reports/export.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <fmt/format.h>
#include <map>

#include "core/error.hpp"
#include "reports/render.hpp"

namespace gcb {

namespace {

using ojson = nlohmann::ordered_json;

double seconds_per_unit(std::string_view unit) {
  if (unit == "ns") return 1e9;
  if (unit == "us") return 1e6;
  if (unit == "ms") return 1e3;
  if (unit == "s") return 1;
  throw UsageError(fmt::format("unknown time unit '{}' (ns, us, ms, s)", unit));
}

std::string param_text(const nlohmann::json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); }

std::string context_text(const nlohmann::json& ctx, const char* pointer) {
  const nlohmann::json::json_pointer p(pointer);
  if (!ctx.contains(p) || ctx.at(p).is_null()) return "";
  return param_text(ctx.at(p));
}

bool exportable(const Result& r) {
  return r.status == Status::pass && r.stats && r.stats->count > 0 && std::isfinite(r.stats->median);
}

// Keys Google Benchmark itself writes into a benchmark entry; a counter must not shadow one.
bool reserved_key(const std::string& k) {
  static constexpr std::array<std::string_view, 22> kReserved = {"name",
                                                                 "family_index",
                                                                 "per_family_instance_index",
                                                                 "run_name",
                                                                 "run_type",
                                                                 "repetitions",
                                                                 "repetition_index",
                                                                 "threads",
                                                                 "aggregate_name",
                                                                 "aggregate_unit",
                                                                 "error_occurred",
                                                                 "error_message",
                                                                 "iterations",
                                                                 "real_time",
                                                                 "cpu_time",
                                                                 "time_unit",
                                                                 "cpu_coefficient",
                                                                 "real_coefficient",
                                                                 "big_o",
                                                                 "rms",
                                                                 "label",
                                                                 "allocs_per_iter"};
  return std::find(kReserved.begin(), kReserved.end(), k) != kReserved.end();
}

// Google Benchmark's context: its own keys first, then our facts as string-valued custom
// context (AddCustomContext takes strings only).
ojson gbench_context(const nlohmann::json& ctx) {
  ojson c;
  c["date"] = ctx.value("date", std::string());
  c["host_name"] = ctx.value("host", std::string());
  c["executable"] = "gcbench";
  const std::string cores = context_text(ctx, "/cpu/logical_cores");
  c["num_cpus"] = cores.empty() ? 0 : std::stoi(cores);
  c["mhz_per_cpu"] = 0;          // not recorded by gcbench; Google Benchmark always writes the key
  c["caches"] = ojson::array();  // Bencher's cpp_google adapter requires the key
  c["load_avg"] = ojson::array();
  c["library_build_type"] = "release";
  auto custom = [&](const char* key, const char* pointer) {
    const std::string v = context_text(ctx, pointer);
    if (!v.empty()) c[key] = v;
  };
  custom("gcbench_version", "/gcbench/version");
  custom("gcbench_revision", "/gcbench/revision");
  custom("cpu_model", "/cpu/model");
  custom("gpu", "/gpus/0/name");
  custom("driver_version", "/nvml/driver_version");
  custom("cuda_runtime", "/cuda/runtime_version");
  custom("nccl", "/libraries/nccl");
  custom("topology_fingerprint", "/topology/fingerprint");
  return c;
}

}  // namespace

ExportFormat parse_export_format(std::string_view name) {
  if (name == "gbench") return ExportFormat::gbench;
  if (name == "bmf") return ExportFormat::bmf;
  if (name == "csv") return ExportFormat::csv;
  throw UsageError(fmt::format("unknown export format '{}' (gbench, bmf, csv)", name));
}

std::string benchmark_name(const Result& r) {
  std::string name = r.key;
  for (auto it = r.params.begin(); it != r.params.end(); ++it) name += "/" + it.key() + ":" + param_text(it.value());
  return name;
}

nlohmann::ordered_json export_gbench(const ResultDocument& doc, std::string_view time_unit) {
  const double scale = seconds_per_unit(time_unit);
  ojson benchmarks = ojson::array();
  std::map<std::string, std::pair<int, int>> families;  // key -> (family index, next instance index)
  for (const Result& r : doc.results) {
    if (!exportable(r)) continue;
    auto [it, added] = families.emplace(r.key, std::pair{static_cast<int>(families.size()), 0});
    const std::string name = benchmark_name(r);
    ojson b;
    b["name"] = name;
    b["family_index"] = it->second.first;
    b["per_family_instance_index"] = it->second.second++;
    b["run_name"] = name;
    b["run_type"] = "iteration";
    b["repetitions"] = 1;  // one entry per result: the median of its samples
    b["repetition_index"] = 0;
    b["threads"] = 1;
    b["iterations"] = r.stats->count;
    b["real_time"] = r.stats->median * scale;
    b["cpu_time"] = r.stats->median * scale;  // no CPU time is measured; compare.py reads both
    b["time_unit"] = std::string(time_unit);
    for (const Metric& m : r.metrics) {
      if (!m.value || !std::isfinite(*m.value)) continue;
      b[reserved_key(m.name) ? "gcb_" + m.name : m.name] = *m.value;
    }
    benchmarks.push_back(std::move(b));
  }
  ojson out;
  out["context"] = gbench_context(doc.context);
  out["benchmarks"] = std::move(benchmarks);
  return out;
}

nlohmann::ordered_json export_bmf(const ResultDocument& doc) {
  ojson out = ojson::object();
  for (const Result& r : doc.results) {
    if (r.status != Status::pass) continue;
    ojson measures = ojson::object();
    for (const Metric& m : r.metrics)
      if (m.value && std::isfinite(*m.value)) measures[m.name] = {{"value", *m.value}};
    if (exportable(r)) {
      // Seconds per launch in ns, with the 5th/95th percentiles as the bounds.
      const std::string key = measures.contains("latency") ? "launch_latency" : "latency";
      measures[key] = {
          {"value", r.stats->median * 1e9}, {"lower_value", r.stats->p5 * 1e9}, {"upper_value", r.stats->p95 * 1e9}};
      if (!std::isfinite(r.stats->p5) || !std::isfinite(r.stats->p95))
        measures[key] = {{"value", r.stats->median * 1e9}};
    }
    if (!measures.empty()) out[benchmark_name(r)] = std::move(measures);
  }
  return out;
}

std::string export_text(const ResultDocument& doc, ExportFormat format, std::string_view time_unit) {
  switch (format) {
    case ExportFormat::gbench: return export_gbench(doc, time_unit).dump(2) + "\n";
    case ExportFormat::bmf: return export_bmf(doc).dump(2) + "\n";
    case ExportFormat::csv: return render_csv(doc);
  }
  return "";
}

}  // namespace gcb
