// The nccl-tests-style table of `gcbench coll` (coll_table.hpp, after NVIDIA/nccl-tests src/common.cu): header, one row
// per size with #wrong, the footer and our statistics table, from the results alone.
#include "bench/coll/coll_table.hpp"

#include <fmt/format.h>

#include "core/dtype.hpp"
#include "reports/render.hpp"

namespace gcb::bench {

namespace {

// nccl-tests' type names in the table (src/common.cu test_typenames).
std::string table_type_name(const std::string& dtype) {
  const std::optional<DType> t = parse_dtype(dtype);
  if (!t) return dtype;
  switch (*t) {
    case DType::f32: return "float";
    case DType::f64: return "double";
    case DType::f16: return "half";
    case DType::bf16: return "bfloat16";
    case DType::i32: return "int32";
    case DType::i8: return "int8";
    default: return dtype;
  }
}

double metric_value(const Result& r, std::string_view name) {
  const Metric* m = r.metric(name);
  return m && m->value ? *m->value : 0.0;
}

bool checked(const Result& r) { return r.extra.contains("wrong") && !r.extra.at("wrong").is_null(); }
uint64_t wrong(const Result& r) { return checked(r) ? r.extra.at("wrong").get<uint64_t>() : 0; }
double extra_number(const Result& r, const char* key) {
  return r.extra.contains(key) && r.extra.at(key).is_number() ? r.extra.at(key).get<double>() : 0.0;
}

bool is_waived_sweep(const Result& r) { return !r.params.contains("bytes"); }

std::string cell_text(const Result* c) {
  if (!c) return fmt::format(" {:>8} {:>7} {:>7} {:>6}", "N/A", "N/A", "N/A", "N/A");
  const double us = metric_value(*c, "time") * 1e6;
  return fmt::format(" {:>8} {:7.2f} {:7.2f} {:>6}", us < 10000 ? fmt::format("{:.2f}", us) : fmt::format("{:.0f}", us),
                     metric_value(*c, "algbw"), metric_value(*c, "busbw"),
                     checked(*c) ? fmt::to_string(wrong(*c)) : std::string("N/A"));
}

std::string stats_text(const Result& c, bool verbose) {
  if (!c.stats) return fmt::format("{:>9} {:>9} {:>9} {:>9} {:>6} {:>6} {:>8}", "N/A", "", "", "", "", "", "");
  const Statistics& s = *c.stats;
  std::string text = fmt::format("{:9.2f} {:9.2f} {:9.2f} {:9.2f} {:>6} {:6.1f} {:>8}", s.min * 1e6, s.median * 1e6,
                                 s.p95 * 1e6, s.max * 1e6, cv_text(s, 2), extra_number(c, "skew_median") * 100,
                                 fmt::format("{} ({:.0f}%)", static_cast<long long>(extra_number(c, "slowest_rank")),
                                             extra_number(c, "slowest_rank_share") * 100));
  if (verbose)
    text +=
        fmt::format(" {:>7} {:>11} {:9.2f}", c.samples.size(), c.stop_reason, extra_number(c, "wall_seconds") * 1e3);
  return text;
}

std::string param_text(const Result& r, const char* key) {
  if (!r.params.contains(key)) return "";
  const nlohmann::json& v = r.params.at(key);
  return v.is_string() ? v.get<std::string>() : v.dump();
}

// The axes that make a sweep: everything in params except the size and the placement.
nlohmann::json sweep_axes(const Result& r) {
  nlohmann::json axes = r.params;
  for (const char* k : {"bytes", "count", "inplace"}) axes.erase(k);
  return axes;
}

bool in_place(const Result& r) { return r.params.value("inplace", false); }

}  // namespace

std::string coll_sweep_header(const Result& any) {
  std::string out =
      fmt::format("#\n# {}  type {}  redop {}  root {}\n", param_text(any, "op"),
                  table_type_name(param_text(any, "dtype")), param_text(any, "redop"), param_text(any, "root"));
  out += fmt::format("#{:>58}{:>33}\n", "out-of-place", "in-place");
  out +=
      fmt::format("#{:>11} {:>13} {:>9} {:>7} {:>7} {:>8} {:>7} {:>7} {:>6} {:>8} {:>7} {:>7} {:>6}\n", "size", "count",
                  "type", "redop", "root", "time", "algbw", "busbw", "#wrong", "time", "algbw", "busbw", "#wrong");
  out += fmt::format("#{:>11} {:>13} {:>9} {:>7} {:>7} {:>8} {:>7} {:>7} {:>6} {:>8} {:>7} {:>7} {:>6}\n", "(B)",
                     "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)", "(GB/s)", "");
  return out;
}

std::string coll_table_row(const Result& out, const Result* in) {
  return fmt::format(" {:>11} {:>13} {:>9} {:>7} {:>7}{}{}\n", param_text(out, "bytes"), param_text(out, "count"),
                     table_type_name(param_text(out, "dtype")), param_text(out, "redop"), param_text(out, "root"),
                     cell_text(&out), cell_text(in));
}

std::string coll_sweep_footer(std::span<const Result* const> cells, bool verbose) {
  if (cells.size() == 1 && is_waived_sweep(*cells[0]))
    return fmt::format("# graph mode: WAIVED ({})\n", cells[0]->reason);
  uint64_t wrong_total = 0;
  double busbw_sum = 0;
  int busbw_n = 0;
  for (const Result* c : cells) {
    wrong_total += wrong(*c);
    busbw_sum += metric_value(*c, "busbw");
    ++busbw_n;
  }
  std::string out = fmt::format("# Out of bounds values : {} {}\n", wrong_total, wrong_total == 0 ? "OK" : "FAILED");
  // Arithmetic mean over every size and both placements, as nccl-tests (src/common.cu).
  out += fmt::format("# Avg bus bandwidth    : {:.4f} \n#\n", busbw_n ? busbw_sum / busbw_n : 0.0);
  out += fmt::format(
      "# statistics: us per op over the samples ({});\n"
      "#   skew = median over samples of (max-min)/max across ranks; slowest = rank slowest most often\n",
      cells.empty() ? std::string() : param_text(*cells[0], "mode"));
  out += fmt::format("#{:>11} {:>9}  {:>9} {:>9} {:>9} {:>9} {:>6} {:>6} {:>8}{}\n", "size", "placement", "min",
                     "median", "p95", "max", "CV%", "skew%", "slowest",
                     verbose ? fmt::format(" {:>7} {:>11} {:>9}", "samples", "stop", "wall(ms)") : std::string());
  for (const Result* c : cells)
    out += fmt::format(" {:>11} {:>9}  {}\n", param_text(*c, "bytes"), in_place(*c) ? "in" : "out",
                       stats_text(*c, verbose));
  return out;
}

std::vector<CollSweep> coll_sweeps(const std::vector<Result>& results) {
  std::vector<CollSweep> sweeps;
  nlohmann::json last_axes;
  for (const Result& r : results) {
    if (r.family() != "coll" || r.key.ends_with("/fit")) {
      last_axes = nullptr;  // a fit or another family ends the sweep
      continue;
    }
    const nlohmann::json axes = sweep_axes(r);
    if (sweeps.empty() || axes != last_axes || is_waived_sweep(r)) sweeps.emplace_back();
    sweeps.back().cells.push_back(&r);
    last_axes = axes;
  }
  return sweeps;
}

std::string render_coll_sweep(const CollSweep& sweep, bool verbose) {
  if (sweep.cells.empty()) return "";
  std::string out = coll_sweep_header(*sweep.cells[0]);
  const bool waived = sweep.cells.size() == 1 && is_waived_sweep(*sweep.cells[0]);
  for (size_t i = 0; !waived && i < sweep.cells.size(); ++i) {
    const Result& c = *sweep.cells[i];
    if (in_place(c)) continue;  // printed with its out-of-place row
    const Result* in = i + 1 < sweep.cells.size() && in_place(*sweep.cells[i + 1]) ? sweep.cells[i + 1] : nullptr;
    out += coll_table_row(c, in);
  }
  return out + coll_sweep_footer(sweep.cells, verbose);
}

std::string render_coll_table(const std::vector<Result>& results, bool verbose) {
  std::string out;
  for (const CollSweep& s : coll_sweeps(results)) out += render_coll_sweep(s, verbose);
  return out;
}

}  // namespace gcb::bench
