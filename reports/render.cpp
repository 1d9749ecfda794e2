#include "reports/render.hpp"

#include <cmath>
#include <fmt/format.h>

#include "reports/escape.hpp"

namespace gcb {

namespace {

std::string truncate(std::string s, size_t width) {
  if (s.size() <= width) return s;
  return s.substr(0, width - 1) + "~";
}

std::string scalar_text(const nlohmann::json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number_float()) return format_value(v.get<double>());
  return v.dump();
}

}  // namespace

std::string params_summary(const nlohmann::json& params) {
  std::string out;
  for (auto it = params.begin(); it != params.end(); ++it) {
    if (!out.empty()) out += ' ';
    out += it.key() + "=" + scalar_text(it.value());
  }
  return out;
}

std::string format_value(double v) {
  if (!std::isfinite(v)) return "n/a";
  const double a = std::fabs(v);
  if (a >= 1000 || a == 0) return fmt::format("{:.0f}", v);
  if (a >= 100) return fmt::format("{:.1f}", v);
  if (a >= 10) return fmt::format("{:.2f}", v);
  if (a >= 1) return fmt::format("{:.3f}", v);
  return fmt::format("{:.4g}", v);
}

std::string format_seconds(double s) {
  if (!std::isfinite(s)) return "n/a";
  if (s < 1e-6) return fmt::format("{:.1f} ns", s * 1e9);
  if (s < 1e-3) return fmt::format("{:.2f} us", s * 1e6);
  if (s < 1) return fmt::format("{:.3f} ms", s * 1e3);
  return fmt::format("{:.3f} s", s);
}

std::string console_header() {
  return fmt::format("{:<28} {:<44} {:<7} {:>12} {:<8} {:>7} {:>11} {:>6} {:>5}\n", "case", "params", "status",
                     "value", "unit", "%peak", "median", "cv%", "n") +
         std::string(136, '-') + "\n";
}

std::string console_row(const Result& r) {
  std::string value = "-", unit, peak = "-", median = "-", cv = "-", n = "-";
  if (!r.metrics.empty()) {
    const Metric& m = r.metrics.front();
    value = m.value ? format_value(*m.value) : "null";
    unit = m.unit;
    if (const auto p = m.percent_of_peak()) peak = fmt::format("{:.1f}", *p);
  }
  if (r.stats && r.stats->count > 0) {
    median = format_seconds(r.stats->median);
    cv = fmt::format("{:.2f}", r.stats->cv * 100);
    n = fmt::format("{}", r.stats->count);
  }
  std::string status(status_name(r.status));
  if (r.throttled) status += "*";
  std::string line = fmt::format("{:<28} {:<44} {:<7} {:>12} {:<8} {:>7} {:>11} {:>6} {:>5}\n", truncate(r.key, 28),
                                 truncate(params_summary(r.params), 44), status, value, unit, peak, median, cv, n);
  if (r.status != Status::pass && !r.reason.empty()) line += fmt::format("    {}\n", r.reason);
  return line;
}

std::string render_console(const std::vector<Result>& results) {
  std::string out = console_header();
  for (const auto& r : results) out += console_row(r);
  return out;
}

std::string status_summary(const std::vector<Result>& results) {
  size_t pass = 0, fail = 0, waived = 0, error = 0;
  for (const auto& r : results) {
    switch (r.status) {
      case Status::pass: ++pass; break;
      case Status::fail: ++fail; break;
      case Status::waived: ++waived; break;
      case Status::error: ++error; break;
    }
  }
  return fmt::format("{} passed, {} failed, {} waived, {} errors", pass, fail, waived, error);
}

std::string render_csv(const ResultDocument& doc) {
  std::string out =
      "key,params,status,reason,metric,value,unit,higher_is_better,percent_of_peak,median_s,min_s,p95_s,cv,samples,"
      "throttled\n";
  for (const auto& r : doc.results) {
    auto row = [&](const Metric* m) {
      auto num = [](std::optional<double> v) { return v && std::isfinite(*v) ? fmt::format("{:.9g}", *v) : std::string(); };
      std::optional<double> median, min, p95, cv;
      if (r.stats && r.stats->count) {
        median = r.stats->median;
        min = r.stats->min;
        p95 = r.stats->p95;
        cv = r.stats->cv;
      }
      out += fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n", csv_field(r.key), csv_field(r.params.dump()),
                         status_name(r.status), csv_field(r.reason), m ? csv_field(m->name) : "",
                         m ? num(m->value) : "", m ? csv_field(m->unit) : "",
                         m ? (m->higher_is_better ? "true" : "false") : "", m ? num(m->percent_of_peak()) : "",
                         num(median), num(min), num(p95), num(cv), r.samples.size(), r.throttled ? "true" : "false");
    };
    if (r.metrics.empty()) row(nullptr);
    for (const auto& m : r.metrics) row(&m);
  }
  return out;
}

}  // namespace gcb
