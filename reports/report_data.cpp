// report_data.hpp: run labels (the first run is the baseline), results matched across runs by key and params
// (match_rows), the families present and the context fields that differ between runs.
#include "reports/report_data.hpp"

#include <algorithm>
#include <filesystem>
#include <fmt/format.h>
#include <map>
#include <set>

#include "reports/render.hpp"

namespace gcb::report {

namespace {

std::string scalar(const nlohmann::json& v) {
  if (v.is_null()) return "-";
  if (v.is_string()) return v.get<std::string>().empty() ? "-" : v.get<std::string>();
  if (v.is_number_float()) return format_value(v.get<double>());
  return v.dump();
}

std::string at(const nlohmann::json& j, const char* pointer) {
  const nlohmann::json::json_pointer p(pointer);
  return j.is_object() && j.contains(p) ? scalar(j.at(p)) : "-";
}

// "2× NVIDIA H100 80GB HBM3" — each distinct value of one GPU field with its count, in order.
std::string per_gpu(const nlohmann::json& ctx, const char* field, const char* suffix = "") {
  if (!ctx.contains("gpus") || !ctx.at("gpus").is_array() || ctx.at("gpus").empty()) return "-";
  std::vector<std::pair<std::string, int>> seen;
  for (const auto& g : ctx.at("gpus")) {
    std::string v = g.is_object() && g.contains(field) ? scalar(g.at(field)) : "-";
    if (v != "-") v += suffix;
    auto it = std::find_if(seen.begin(), seen.end(), [&](const auto& p) { return p.first == v; });
    if (it == seen.end())
      seen.emplace_back(v, 1);
    else
      ++it->second;
  }
  std::string out;
  for (const auto& [v, n] : seen)
    out += fmt::format("{}{}{}", out.empty() ? "" : ", ", n > 1 ? fmt::format("{}× ", n) : "", v);
  return out;
}

}  // namespace

std::vector<std::string> run_labels(const std::vector<std::string>& paths) {
  std::vector<std::string> labels;
  std::map<std::string, int> count;
  for (const auto& p : paths) {
    std::string base = std::filesystem::path(p).filename().string();
    if (base.empty()) base = p;
    const int n = ++count[base];
    labels.push_back(n == 1 ? base : fmt::format("{}#{}", base, n));
  }
  return labels;
}

std::vector<std::string> families(const std::vector<Run>& runs) {
  std::vector<std::string> out;
  for (const auto& run : runs)
    for (const auto& r : run.doc.results)
      if (std::find(out.begin(), out.end(), r.family()) == out.end()) out.push_back(r.family());
  return out;
}

const Result* Row::first() const {
  for (const Result* r : per_run)
    if (r) return r;
  return nullptr;
}

std::vector<Row> match_rows(const std::vector<Run>& runs, const std::function<bool(const Result&)>& keep) {
  std::vector<Row> rows;
  std::map<std::string, size_t> index;
  for (size_t i = 0; i < runs.size(); ++i) {
    for (const auto& r : runs[i].doc.results) {
      if (!keep(r)) continue;
      const std::string id = r.key + "\n" + r.params.dump();
      auto [it, inserted] = index.emplace(id, rows.size());
      if (inserted) rows.push_back(Row{r.key, r.params, std::vector<const Result*>(runs.size(), nullptr)});
      Row& row = rows[it->second];
      if (!row.per_run[i]) row.per_run[i] = &r;  // a repeated key+params in one run: the first wins
    }
  }
  return rows;
}

std::vector<Row> family_rows(const std::vector<Run>& runs, const std::string& family,
                             const std::function<bool(const Result&)>& sweeps_bytes) {
  const auto swept = [&](const Result& r) {
    return sweeps_bytes && sweeps_bytes(r) && r.params.contains("bytes") && r.params.at("bytes").is_number();
  };
  const auto series_id = [](const Result& r) {
    nlohmann::json p = r.params;
    p.erase("bytes");
    p.erase("count");
    return r.key + "\n" + p.dump();
  };
  std::map<std::string, double> largest;
  for (const auto& run : runs)
    for (const auto& r : run.doc.results)
      if (r.family() == family && swept(r)) {
        double& m = largest[series_id(r)];
        m = std::max(m, r.params.at("bytes").get<double>());
      }
  return match_rows(runs, [&](const Result& r) {
    if (r.family() != family) return false;
    return !swept(r) || r.params.at("bytes").get<double>() == largest[series_id(r)];
  });
}

const Metric* headline(const Result* r) {
  if (!r || r->metrics.empty() || !r->metrics.front().value) return nullptr;
  return &r->metrics.front();
}

std::string headline_label(const Result* r) {
  const Metric* m = headline(r);
  if (!m) return "";
  if (r->metric(m->name + "_median")) return m->name + ", best sample";
  if (r->metric(m->name + "_min") || r->metric(m->name + "_best")) return m->name + ", median";
  return m->name;
}

std::optional<double> ratio_to_baseline(const Row& row, size_t run) {
  if (run >= row.per_run.size()) return std::nullopt;
  const Metric* base = headline(row.per_run[0]);
  const Metric* other = headline(row.per_run[run]);
  if (!base || !other || *base->value == 0 || base->unit != other->unit) return std::nullopt;
  return *other->value / *base->value;
}

std::vector<std::pair<std::string, std::string>> environment_fields(const nlohmann::json& c) {
  std::string driver = at(c, "/nvml/driver_version");
  if (driver == "-") driver = at(c, "/cuda/driver_version");
  const std::string gpus = per_gpu(c, "name");
  return {
      {"GPU", gpus},
      {"GPU count", c.contains("gpus") && c.at("gpus").is_array() ? std::to_string(c.at("gpus").size()) : "-"},
      {"driver", driver},
      {"CUDA runtime", at(c, "/cuda/runtime_version")},
      {"NCCL", at(c, "/libraries/nccl")},
      {"SM clock (kHz)", per_gpu(c, "sm_clock_khz")},
      {"SM clock max (MHz)", per_gpu(c, "sm_clock_max_mhz")},
      {"memory clock (kHz)", per_gpu(c, "memory_clock_khz")},
      {"topology fingerprint", at(c, "/topology/fingerprint")},
      {"host", at(c, "/host")},
      {"CPU", at(c, "/cpu/model")},
      {"gcbench", at(c, "/gcbench/version") + " " + at(c, "/gcbench/revision")},
  };
}

std::vector<EnvField> environment_diff(const std::vector<Run>& runs) {
  std::vector<EnvField> out;
  if (runs.size() < 2) return out;
  std::vector<std::vector<std::pair<std::string, std::string>>> fields;
  for (const auto& r : runs) fields.push_back(environment_fields(r.doc.context));
  for (size_t f = 0; f < fields[0].size(); ++f) {
    EnvField e{fields[0][f].first, {}};
    std::set<std::string> distinct;
    for (const auto& per_run : fields) {
      e.values.push_back(per_run[f].second);
      distinct.insert(per_run[f].second);
    }
    if (distinct.size() > 1) out.push_back(std::move(e));
  }
  return out;
}

std::string params_without(const nlohmann::json& params, const std::vector<std::string>& drop) {
  nlohmann::json p = params;
  for (const auto& d : drop) p.erase(d);
  return params_summary(p);
}

}  // namespace gcb::report
