// The console and CSV renderers of render.hpp: number, time and rate formatting, the row printed as each case ends, the
// per-family summary tables, and CSV with one row per result × metric.
#include "reports/render.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <array>
#include <set>
#include <fmt/ranges.h>

#include "reports/escape.hpp"

namespace gcb {

namespace {

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
  if (a >= 1e15) return fmt::format("{:.3e}", v);  // never hundreds of digits
  if (a >= 1000 || a == 0) return fmt::format("{:.0f}", v);
  if (a >= 100) return fmt::format("{:.1f}", v);
  if (a >= 10) return fmt::format("{:.2f}", v);
  if (a >= 1) return fmt::format("{:.3f}", v);
  return fmt::format("{:.4g}", v);
}

std::string fixed_text(double v, int decimals) {
  if (!std::isfinite(v)) return "n/a";
  if (std::fabs(v) >= 1e15) return fmt::format("{:.3e}", v);
  return fmt::format("{:.{}f}", v, decimals);
}

std::string percent_text(double fraction, int decimals) {
  if (!std::isfinite(fraction)) return "n/a";
  const long double p = static_cast<long double>(fraction) * 100;  // finite for every finite double
  if (std::fabs(p) >= 1e15L) return fmt::format("{:.3e}%", p);
  return fmt::format("{:.{}f}%", p, decimals);
}

std::string format_seconds(double s) {
  if (!std::isfinite(s)) return "n/a";
  if (std::fabs(s) >= 1e15) return fmt::format("{:.3e} s", s);
  if (s < 1e-6) return fmt::format("{:.1f} ns", s * 1e9);
  if (s < 1e-3) return fmt::format("{:.2f} us", s * 1e6);
  if (s < 1) return fmt::format("{:.3f} ms", s * 1e3);
  return fmt::format("{:.3f} s", s);
}

std::pair<double, std::string> readable_rate(double v, const std::string& unit) {
  // Rates with an SI prefix step down while the value is below 1 (0.04196 TFLOP/s = 41.96 GFLOP/s).
  static constexpr std::string_view kPrefixes = "TGMk";
  for (std::string_view base : {"FLOP/s", "B/s"}) {
    if (unit.size() != base.size() + 1 || unit.compare(1, std::string::npos, base) != 0) continue;
    size_t p = kPrefixes.find(unit[0]);
    if (p == std::string_view::npos) break;
    while (std::isfinite(v) && v != 0 && std::fabs(v) < 1 && p + 1 < kPrefixes.size() - 1) {
      v *= 1000;
      ++p;
    }
    return {v, kPrefixes[p] + std::string(base)};
  }
  return {v, unit};
}

std::string cv_text(const Statistics& s, int decimals) {
  return s.count > 1 ? fixed_text(s.cv * 100, decimals) : std::string("-");
}

namespace {

// The headline columns every console table shares: status, value, unit, % of peak, median, CV, n.
struct Headline {
  std::string status, value = "-", unit, peak = "-", median = "-", cv = "-", n = "-";
};

Headline headline(const Result& r) {
  Headline h;
  if (!r.metrics.empty()) {
    const Metric& m = r.metrics.front();
    h.unit = m.unit;
    if (m.value) {
      const auto [v, unit] = readable_rate(*m.value, m.unit);
      h.value = format_value(v);
      // A one-way figure from a round trip (p2p's ping-pongs, model.one_way) beside the median
      // time per launch, which is the round trip (or several): the unit says which is which.
      h.unit = r.model.contains("one_way") ? unit + " 1-way" : unit;
    } else {
      h.value = "null";
    }
    if (const auto p = m.percent_of_peak()) h.peak = fixed_text(*p, 1);
  }
  if (r.stats && r.stats->count > 0) {
    h.median = format_seconds(r.stats->median);
    h.cv = cv_text(*r.stats, 2);
    h.n = fmt::format("{}", r.stats->count);
  }
  h.status = std::string(status_name(r.status));
  if (r.throttled) h.status += "*";
  return h;
}

std::string headline_text(const Headline& h, bool peak = true) {
  return fmt::format("{:<7} {:>12} {:<8}{} {:>11} {:>6} {:>5}", h.status, h.value, h.unit,
                     peak ? fmt::format(" {:>7}", h.peak) : std::string(), h.median, h.cv, h.n);
}

// The headline's header, through the same format as its rows. "median time" is the median
// sample's time, beside a value that may come from the best sample (each family's headline
// statistic is named in the report's notes).
std::string headline_header(bool peak) {
  return headline_text(Headline{"status", "value", "unit", "%peak", "median time", "cv%", "n"}, peak);
}

std::string reason_line(const Result& r) {
  return r.status != Status::pass && !r.reason.empty() ? wrap_lines(fmt::format("    {}\n", r.reason)) : std::string();
}

// A param value in full: strings as they are, numbers as JSON writes them (shortest exact form).
std::string full_text(const nlohmann::json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); }

// A param value for a table cell: in full, except a byte count (a param named `bytes` or
// `…_bytes`), which takes the largest binary unit that divides it exactly: 134217728 is
// "128 MiB", 4096 "4 KiB", 1000 "1000 B" (exact, so nothing is rounded away).
std::string cell_text(const std::string& name, const nlohmann::json& v) {
  const bool bytes = name == "bytes" || (name.size() > 6 && name.compare(name.size() - 6, 6, "_bytes") == 0);
  if (!bytes || !v.is_number_integer() || (!v.is_number_unsigned() && v.get<int64_t>() < 0)) return full_text(v);
  static constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  uint64_t n = v.get<uint64_t>();
  size_t unit = 0;
  while (n != 0 && n % 1024 == 0 && unit + 1 < std::size(kUnits)) {
    n /= 1024;
    ++unit;
  }
  return fmt::format("{} {}", n, kUnits[unit]);
}

// The rows of one family in groups that share their param names: a row joins the first group whose
// names are all among its own (the group's names then the union), else starts one. So the STREAM
// rows (their rounds joining them), the pointer-chase rows, a ratio row and the GPU rows waived
// with fewer params each get a table of the columns they have, where one table of them all was
// mostly "-" and wider than a terminal.
std::vector<std::vector<const Result*>> param_groups(const std::vector<const Result*>& rows) {
  std::vector<std::vector<const Result*>> groups;
  std::vector<std::set<std::string>> names;
  for (const Result* r : rows) {
    std::set<std::string> own;
    for (auto it = r->params.begin(); it != r->params.end(); ++it) own.insert(it.key());
    size_t g = 0;
    for (; g < groups.size(); ++g) {
      if (std::includes(own.begin(), own.end(), names[g].begin(), names[g].end())) break;
    }
    if (g == groups.size()) {
      groups.emplace_back();
      names.emplace_back();
    }
    groups[g].push_back(r);
    names[g].insert(own.begin(), own.end());
  }
  return groups;
}

}  // namespace

std::string console_row(const Result& r) {
  std::string params;
  for (auto it = r.params.begin(); it != r.params.end(); ++it)
    params += (params.empty() ? "" : " ") + it.key() + "=" + full_text(it.value());
  const Headline h = headline(r);
  const std::string figure = h.value == "-" ? "" : fmt::format(" {} {}", h.value, h.unit);
  const std::string time = h.median == "-" ? "" : fmt::format(" ({} median, n {})", h.median, h.n);
  return fmt::format("{} {}{}{}  {}\n", r.key, h.status, figure, time, params) + reason_line(r);
}

namespace {

// One table: the case and each param that differs between `rows` as columns; the params they share
// once above it; % of peak only where some row has one.
std::string family_table(const std::string& family, const std::vector<const Result*>& rows) {
  std::string out;
  // Axes in order of first appearance; one varies when some row lacks it or holds another value.
  std::vector<std::string> axes;
  for (const Result* r : rows)
    for (auto it = r->params.begin(); it != r->params.end(); ++it)
      if (std::find(axes.begin(), axes.end(), it.key()) == axes.end()) axes.push_back(it.key());
  std::vector<std::string> varying, shared;
  // Column widths from the content: nothing is cut.
  auto cell = [](const Result& r, const std::string& a) {
    return r.params.contains(a) ? cell_text(a, r.params.at(a)) : std::string("-");
  };
  auto case_name = [&](const Result& r) { return r.key.substr(std::min(r.key.size(), family.size() + 1)); };
  for (const std::string& a : axes) {
    const bool all_same = std::all_of(rows.begin(), rows.end(), [&](const Result* r) {
      return r->params.contains(a) && r->params.at(a) == rows.front()->params.at(a);
    });
    // A varying axis that is the case name on every row (gemm/fp32's dtype=fp32) says it twice.
    const bool names_the_case =
        std::all_of(rows.begin(), rows.end(), [&](const Result* r) { return cell(*r, a) == case_name(*r); });
    if (all_same) {
      shared.push_back(a + "=" + cell_text(a, rows.front()->params.at(a)));
    } else if (!names_the_case) {
      varying.push_back(a);
    }
  }
  size_t case_width = 4;
  for (const Result* r : rows) case_width = std::max(case_width, case_name(*r).size());
  std::vector<size_t> widths;
  for (const std::string& a : varying) {
    size_t w = a.size();
    for (const Result* r : rows) w = std::max(w, cell(*r, a).size());
    widths.push_back(w);
  }
  out += fmt::format("\n{}{}\n", family, shared.empty() ? "" : ": " + fmt::format("{}", fmt::join(shared, " ")));
  std::string header = fmt::format("{:<{}}", "case", case_width);
  for (size_t i = 0; i < varying.size(); ++i) header += fmt::format(" {:>{}}", varying[i], widths[i]);
  const bool peak = std::any_of(rows.begin(), rows.end(), [](const Result* r) { return headline(*r).peak != "-"; });
  header += fmt::format(" {}\n", headline_header(peak));
  out += header + std::string(header.size() - 1, '-') + "\n";
  for (const Result* r : rows) {
    std::string line = fmt::format("{:<{}}", case_name(*r), case_width);
    for (size_t i = 0; i < varying.size(); ++i) line += fmt::format(" {:>{}}", cell(*r, varying[i]), widths[i]);
    out += line + " " + headline_text(headline(*r), peak) + "\n" + reason_line(*r);
  }
  return out;
}

}  // namespace

std::string render_console(const std::vector<Result>& results) {
  std::vector<std::string> families;
  for (const Result& r : results)
    if (std::find(families.begin(), families.end(), r.family()) == families.end()) families.push_back(r.family());
  std::string out;
  for (const std::string& family : families) {
    std::vector<const Result*> family_rows;
    for (const Result& r : results)
      if (r.family() == family) family_rows.push_back(&r);
    for (const std::vector<const Result*>& rows : param_groups(family_rows)) out += family_table(family, rows);
  }
  return out;
}

namespace {
// Where a UTF-8 character starts (not a continuation byte): what a terminal column holds.
bool starts_character(char ch) { return (static_cast<unsigned char>(ch) & 0xC0) != 0x80; }
size_t columns(const std::string& s) {
  return static_cast<size_t>(std::count_if(s.begin(), s.end(), starts_character));
}
}  // namespace

std::string fit_columns(const std::string& line, size_t cols) {
  if (cols == 0 || columns(line) <= cols) return line;
  std::string out;
  size_t kept = 0;
  for (const char ch : line) {
    if (starts_character(ch) && ++kept == cols) break;  // the cols-th character becomes the ellipsis
    out += ch;
  }
  return out + "…";
}

std::string wrap_lines(const std::string& text, size_t width) {
  std::string out;
  size_t from = 0;
  while (from < text.size()) {
    size_t eol = text.find('\n', from);
    if (eol == std::string::npos) eol = text.size();
    std::string line = text.substr(from, eol - from);
    // A comment line ("# …", as nccl-tests and scan print them) goes on as one: "#   …".
    const bool comment = line.rfind("# ", 0) == 0;
    const std::string indent =
        comment
            ? std::string("#   ")
            : std::string(line.find_first_not_of(' ') == std::string::npos ? 0 : line.find_first_not_of(' ') + 4, ' ');
    while (columns(line) > width) {
      // The last space with at most `width` characters before it, past the line's own indent.
      const size_t lead = comment ? line.find_first_not_of(' ', 1) : line.find_first_not_of(' ');
      size_t cut = std::string::npos;
      for (size_t i = 0, col = 0; i < line.size() && col <= width; ++i) {
        if (line[i] == ' ' && i > lead) cut = i;  // `col` characters before it
        if (starts_character(line[i])) ++col;
      }
      if (cut == std::string::npos) break;
      out += line.substr(0, cut) + "\n";
      line = indent + line.substr(cut + 1);
    }
    out += line + (eol < text.size() ? "\n" : "");
    from = eol + 1;
  }
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

namespace {

// The fixed columns of render_csv, around the parameter columns.
constexpr std::array<std::string_view, 14> kCsvColumns = {
    "status", "reason", "median_s",         "min_s",           "p95_s", "cv", "samples", "throttled", "metric",
    "value",  "unit",   "higher_is_better", "percent_of_peak", "key"};

std::string csv_param_text(const nlohmann::json& v) {
  if (v.is_null()) return "";
  if (v.is_string()) return csv_field(v.get<std::string>());
  return csv_field(v.dump());  // numbers, booleans; arrays and objects as compact JSON
}

}  // namespace

std::vector<std::string> csv_param_columns(const std::vector<Result>& results) {
  std::set<std::string> names;
  for (const auto& r : results)
    if (r.params.is_object())
      for (const auto& [name, value] : r.params.items()) names.insert(name);
  return {names.begin(), names.end()};
}

std::string render_csv(const ResultDocument& doc, const std::vector<std::string>& param_columns) {
  const std::vector<std::string> params = param_columns.empty() ? csv_param_columns(doc.results) : param_columns;
  std::string out = "key";
  for (const auto& name : params) {
    const bool taken = std::find(kCsvColumns.begin(), kCsvColumns.end(), name) != kCsvColumns.end();
    out += ',';
    out += csv_field(taken ? std::string("param_").append(name) : name);
  }
  out +=
      ",status,reason,metric,value,unit,higher_is_better,percent_of_peak,median_s,min_s,p95_s,cv,samples,throttled\n";
  for (const auto& r : doc.results) {
    std::string head = csv_field(r.key);
    for (const auto& name : params) {
      head += ',';
      if (r.params.is_object() && r.params.contains(name)) head += csv_param_text(r.params.at(name));
    }
    auto row = [&](const Metric* m) {
      auto num = [](std::optional<double> v) {
        return v && std::isfinite(*v) ? fmt::format("{:.9g}", *v) : std::string();
      };
      std::optional<double> median, min, p95, cv;
      if (r.stats && r.stats->count) {
        median = r.stats->median;
        min = r.stats->min;
        p95 = r.stats->p95;
        cv = r.stats->cv;
      }
      out +=
          fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n", head, status_name(r.status), csv_field(r.reason),
                      m ? csv_field(m->name) : "", m ? num(m->value) : "", m ? csv_field(m->unit) : "",
                      m ? (m->higher_is_better ? "true" : "false") : "", m ? num(m->percent_of_peak()) : "",
                      num(median), num(min), num(p95), num(cv), r.samples.size(), r.throttled ? "true" : "false");
    };
    if (r.metrics.empty()) row(nullptr);
    for (const auto& m : r.metrics) row(&m);
  }
  return out;
}

}  // namespace gcb
