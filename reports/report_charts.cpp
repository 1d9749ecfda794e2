// The HTML report's generic chart machinery (report_charts.hpp): legends and titles from the params
// that differ, sweeps of a parameter, bandwidth vs size with α–β fit curves, and the roofline;
// the families' own charts are built from these in their folders (bench/NAME/NAME_report.cpp).
#include "reports/report_charts.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <map>

#include "reports/render.hpp"
#include "reports/specs.hpp"
#include "reports/svg_chart.hpp"

namespace gcb::report {

namespace {

constexpr size_t kSharedChars = 72;

double seconds_per(const std::string& unit) {
  if (unit == "s") return 1;
  if (unit == "ms") return 1e-3;
  if (unit == "us" || unit == "µs") return 1e-6;
  if (unit == "ns") return 1e-9;
  return std::nan("");
}

}  // namespace

double number_at(const nlohmann::json& j, const char* key) {
  if (!j.is_object() || !j.contains(key) || !j.at(key).is_number()) return std::nan("");
  return j.at(key).get<double>();
}

// A legend or category names a series by the params that tell it apart from the others of its
// chart, as name=value ("inplace=true op=all_reduce"); what all of them share is left out (the
// chart's title says it), so legends are not rows of bare values.
std::vector<std::string> differing_keys(const std::vector<nlohmann::json>& params) {
  std::vector<std::string> keys;
  for (const auto& p : params)
    for (auto it = p.begin(); it != p.end(); ++it)
      if (std::find(keys.begin(), keys.end(), it.key()) == keys.end()) keys.push_back(it.key());
  std::vector<std::string> out;
  for (const auto& k : keys) {
    std::optional<nlohmann::json> first;  // a copy: the absent value is a temporary
    bool differ = false;
    for (const auto& p : params) {
      nlohmann::json v = p.contains(k) ? p.at(k) : nlohmann::json();
      if (!first)
        first = std::move(v);
      else if (*first != v)
        differ = true;
    }
    if (differ) out.push_back(k);
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string named(const nlohmann::json& params, const std::vector<std::string>& keys) {
  std::string out;
  for (const auto& k : keys) {
    if (!params.contains(k)) continue;
    if (!out.empty()) out += ' ';
    const auto& v = params.at(k);
    out += k + "=" + (v.is_string() ? v.get<std::string>() : v.dump());
  }
  return out;
}

// What every series of a chart shares (the params that are not among `apart` and have one value
// in all of them), for its title: " (device=gpu:0 engine=ce)"; "" when nothing is shared.
std::string shared_text(const std::vector<nlohmann::json>& params, const std::vector<std::string>& apart) {
  if (params.empty()) return "";
  std::vector<std::string> keys;
  for (auto it = params.front().begin(); it != params.front().end(); ++it)
    if (std::find(apart.begin(), apart.end(), it.key()) == apart.end() &&
        std::all_of(params.begin(), params.end(), [&](const nlohmann::json& p) { return p.contains(it.key()); }))
      keys.push_back(it.key());
  std::string text = named(params.front(), keys);
  // Long lists are cut (the chart cuts its visible title again to its width; svg_chart.cpp).
  if (text.size() > kSharedChars) text = text.substr(0, text.rfind(' ', kSharedChars)) + " …";
  return text.empty() ? "" : " (" + text + ")";
}

std::string with_run(const std::vector<Run>& runs, size_t i, const std::string& name) {
  if (runs.size() < 2) return name.empty() ? "measured" : name;
  return name.empty() ? runs[i].label : runs[i].label + ": " + name;
}

std::optional<double> metric_value(const Result& r, const std::string& name) {
  if (name.empty()) {
    const Metric* m = headline(&r);
    return m ? m->value : std::nullopt;
  }
  const Metric* m = r.metric(name);
  return m ? m->value : std::nullopt;
}

std::string metric_unit(const Result& r, const std::string& name) {
  const Metric* m = name.empty() ? headline(&r) : r.metric(name);
  return m ? m->unit : "";
}

std::vector<Sweep> sweeps(const Run& run, const std::function<bool(const Result&)>& keep, const std::string& x_param,
                          const std::vector<std::string>& drop, const std::string& metric) {
  std::vector<Sweep> out;
  for (const auto& r : run.doc.results) {
    if (r.status != Status::pass || !keep(r)) continue;
    const double x = number_at(r.params, x_param.c_str());
    const auto y = metric_value(r, metric);
    if (!std::isfinite(x) || !y) continue;
    nlohmann::json rest = r.params;
    for (const auto& d : drop) rest.erase(d);
    auto it = std::find_if(out.begin(), out.end(), [&](const Sweep& s) { return s.rest == rest; });
    if (it == out.end()) it = out.insert(out.end(), Sweep{rest, {}, &r});
    it->points.emplace_back(x, *y);
  }
  for (auto& s : out) std::sort(s.points.begin(), s.points.end());
  return out;
}

namespace {

// The α–β fit result `fit_key` of a run whose params are a subset of `rest`: (α s, β B/s).
std::optional<std::pair<double, double>> find_fit(const Run& run, const std::string& fit_key,
                                                  const nlohmann::json& rest) {
  for (const auto& r : run.doc.results) {
    if (r.key != fit_key || r.status != Status::pass) continue;
    bool subset = true;
    for (auto it = r.params.begin(); it != r.params.end() && subset; ++it)
      subset = rest.contains(it.key()) && rest.at(it.key()) == it.value();
    if (!subset) continue;
    const Metric* a = r.metric("alpha");
    const Metric* b = r.metric("beta");
    if (!a || !b || !a->value || !b->value || b->unit != "GB/s") continue;
    const double alpha = *a->value * seconds_per(a->unit);
    if (!std::isfinite(alpha) || *b->value <= 0) continue;
    return std::make_pair(alpha, *b->value * 1e9);
  }
  return std::nullopt;
}

}  // namespace

// A bandwidth-vs-size chart over sweeps of every run, with a dashed α–β curve per sweep whose
// fit exists. `fit_scale` gives the bytes-counted / swept-bytes factor of a sweep's results.
std::string size_chart(const std::vector<Run>& runs, const std::string& title, const std::string& y_label,
                       const std::function<bool(const Result&)>& keep, const std::vector<std::string>& drop,
                       const std::string& metric, const std::function<double(const Result&)>& fit_scale) {
  svg::LineChart c;
  c.title = title;
  c.x = {"size", "B", svg::Scale::log, svg::TickFormat::bytes};
  c.y = {y_label, "", svg::Scale::linear, svg::TickFormat::number};
  std::vector<std::vector<Sweep>> per_run;
  std::vector<nlohmann::json> rests;
  for (const auto& run : runs) {
    per_run.push_back(sweeps(run, keep, "bytes", drop, metric));
    for (const auto& s : per_run.back()) rests.push_back(s.rest);
  }
  const std::vector<std::string> apart = differing_keys(rests);
  c.title += shared_text(rests, apart);
  for (size_t i = 0; i < runs.size(); ++i) {
    for (const auto& s : per_run[i]) {
      const std::string name = with_run(runs, i, named(s.rest, apart));
      c.y.unit = metric_unit(*s.sample, metric);
      c.series.push_back({name, s.points});
      if (const auto fit = find_fit(runs[i], s.sample->key + "/fit", s.rest)) {
        const double scale = fit_scale(*s.sample);
        svg::Series f{
            fmt::format("α–β fit of {}: α={} β={} GB/s", name, format_seconds(fit->first),
                        format_value(fit->second / 1e9)),
            fit_bandwidth_curve(fit->first, fit->second, scale, s.points.front().first, s.points.back().first), true,
            false, true};
        c.series.push_back(std::move(f));
      }
    }
  }
  // Values spanning more than 100x (a latency-bound 8 B and a 1 GiB bandwidth) read on a log axis.
  double lo = INFINITY, hi = 0;
  for (const auto& se : c.series)
    for (const auto& [x, y] : se.points)
      if (y > 0 && std::isfinite(y)) lo = std::min(lo, y), hi = std::max(hi, y);
  if (hi > 100 * lo) c.y.scale = svg::Scale::log;
  return c.series.empty() ? "" : svg::render_line_chart(c);
}

std::vector<std::string> keys_of(const std::vector<Run>& runs, const std::function<bool(const Result&)>& keep) {
  std::vector<std::string> keys;
  for (const auto& run : runs)
    for (const auto& r : run.doc.results)
      if (keep(r) && std::find(keys.begin(), keys.end(), r.key) == keys.end()) keys.push_back(r.key);
  return keys;
}

std::vector<std::pair<double, double>> fit_bandwidth_curve(double alpha_s, double beta_bytes_per_s, double scale,
                                                           double lo, double hi, int points) {
  std::vector<std::pair<double, double>> out;
  if (lo <= 0 || hi < lo || beta_bytes_per_s <= 0 || points < 2) return out;
  for (int k = 0; k < points; ++k) {
    // Log-spaced sizes so the curve looks smooth on the log x axis.
    const double n = lo * std::pow(hi / lo, static_cast<double>(k) / (points - 1));
    const double t = alpha_s + n / beta_bytes_per_s;  // t(n) = α + n/β (core/fit.hpp)
    out.emplace_back(n, scale * n / t / 1e9);
  }
  return out;
}

std::vector<std::string> roofline_charts(const std::vector<Run>& runs) {
  std::vector<std::string> out;
  for (size_t i = 0; i < runs.size(); ++i) {
    const auto& ctx = runs[i].doc.context;
    if (!ctx.contains("gpus") || !ctx.at("gpus").is_array() || ctx.at("gpus").empty()) continue;
    const auto& gpu = ctx.at("gpus").at(0);
    if (!gpu.contains("name") || !gpu.at("name").is_string()) continue;
    const auto spec = find_gpu_spec(gpu.at("name").get<std::string>());
    if (!spec || spec->hbm_gbps <= 0 || (!spec->bf16 && !spec->fp32)) continue;
    std::map<std::string, std::vector<std::pair<double, double>>> by_family;
    double lo = INFINITY, hi = 0;
    for (const auto& r : runs[i].doc.results) {
      const double flops = number_at(r.model, "flops"), bytes = number_at(r.model, "bytes");
      if (r.status != Status::pass || !r.stats || !(flops > 0) || !(bytes > 0) || !(r.stats->median > 0)) continue;
      if (r.params.contains("device") && r.params.at("device") == "cpu") continue;  // the roof is the GPU's
      const double ai = flops / bytes;                                              // arithmetic intensity, FLOP/byte
      by_family[r.family()].emplace_back(ai, flops / r.stats->median);
      lo = std::min(lo, ai);
      hi = std::max(hi, ai);
    }
    if (by_family.empty()) continue;
    svg::LineChart c;
    c.title = fmt::format("Roofline: {} ({})", spec->sku, runs[i].label);
    c.x = {"arithmetic intensity", "FLOP/B", svg::Scale::log, svg::TickFormat::number};
    c.y = {"performance", "FLOP/s", svg::Scale::log, svg::TickFormat::number};
    const double bw = spec->hbm_gbps * 1e9;
    for (const auto& [name, tflops] : {std::make_pair("bf16", spec->bf16), std::make_pair("fp32", spec->fp32)}) {
      if (!tflops) continue;
      const double peak = *tflops * 1e12, ridge = peak / bw;  // roof = min(P, B·AI) (Williams et al. 2009)
      const double x0 = std::min(lo, ridge) / 4, x1 = std::max(hi, ridge) * 4;
      c.series.push_back(
          {fmt::format("roof {} {} TFLOP/s, HBM {} GB/s", name, format_value(*tflops), format_value(spec->hbm_gbps)),
           {{x0, std::min(peak, bw * x0)}, {ridge, peak}, {x1, peak}},
           true,
           false,
           true});
    }
    for (auto& [family, points] : by_family) c.series.push_back({family, std::move(points), false, true, false});
    out.push_back(svg::render_line_chart(c));
  }
  return out;
}

}  // namespace gcb::report
