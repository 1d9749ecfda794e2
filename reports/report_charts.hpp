// The generic charts of the HTML report, built from result documents by the conventions in
// docs/readme-report.md: series named by the params that differ, sweeps of a parameter,
// bandwidth vs size with α–β fit curves, and the roofline. A family's own charts (bench/NAME/
// NAME_report.cpp) are made of these. Each chart function returns finished <svg> strings.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "reports/report_data.hpp"

namespace gcb::report {

// Bandwidth (in the unit of the measured points) predicted by t(n) = α + n/β at sizes
// log-spaced over [lo, hi]: y = scale · n / t(n) / 1e9 (GB/s). `scale` converts the swept
// size n into the bytes the bandwidth metric counts (e.g. 2 for a copy counting read + written).
std::vector<std::pair<double, double>> fit_bandwidth_curve(double alpha_s, double beta_bytes_per_s, double scale,
                                                           double lo, double hi, int points = 33);

// One roofline per run whose first GPU has a known SKU (reports/specs.hpp) and that holds
// results with model flops > 0 and bytes > 0 measured on a GPU.
std::vector<std::string> roofline_charts(const std::vector<Run>& runs);

// The number at j[key]; NaN when j is not an object or the value is absent or not a number.
double number_at(const nlohmann::json& j, const char* key);
// A legend or category names a series by the params that tell it apart from the others of its
// chart: the keys whose values differ among `params`, sorted.
std::vector<std::string> differing_keys(const std::vector<nlohmann::json>& params);
// "k=v k=v" of the named keys present in `params`.
std::string named(const nlohmann::json& params, const std::vector<std::string>& keys);
// What every series of a chart shares (params not among `apart`, one value in all of them), for
// its title: " (device=gpu:0 engine=ce)"; "" when nothing is shared.
std::string shared_text(const std::vector<nlohmann::json>& params, const std::vector<std::string>& apart);
// A series name with the run's label in front when there are several runs ("measured" for an
// unnamed series of one run).
std::string with_run(const std::vector<Run>& runs, size_t i, const std::string& name);
// The named metric's value ("" = the headline) and unit.
std::optional<double> metric_value(const Result& r, const std::string& name);
std::string metric_unit(const Result& r, const std::string& name);

// One curve of a swept parameter: every result of a run that shares all params but `drop`.
struct Sweep {
  nlohmann::json rest;
  std::vector<std::pair<double, double>> points;
  const Result* sample = nullptr;
};
// The PASS results of `run` that `keep` holds, as (params[x_param], metric) curves, sorted by x.
std::vector<Sweep> sweeps(const Run& run, const std::function<bool(const Result&)>& keep, const std::string& x_param,
                          const std::vector<std::string>& drop, const std::string& metric);
// A bandwidth-vs-size chart over sweeps (of params "bytes") of every run, with a dashed α–β curve
// per sweep whose fit result (KEY/fit) exists. `fit_scale` gives the bytes-counted / swept-bytes
// factor of a sweep's results. "" when no run has a point.
std::string size_chart(const std::vector<Run>& runs, const std::string& title, const std::string& y_label,
                       const std::function<bool(const Result&)>& keep, const std::vector<std::string>& drop,
                       const std::string& metric, const std::function<double(const Result&)>& fit_scale);
// The keys of every result that `keep` holds, in order of first appearance.
std::vector<std::string> keys_of(const std::vector<Run>& runs, const std::function<bool(const Result&)>& keep);

}  // namespace gcb::report
