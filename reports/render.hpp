// Renderers that are pure functions of results: the console rows (printed one by one as cases
// end), the console summary (one table per family) and CSV (one row per result × metric).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "reports/result.hpp"

namespace gcb {

// Compact "k=v k=v" of a result's params, in key order.
std::string params_summary(const nlohmann::json& params);
// Value with an SI-style precision that keeps 4 significant digits ("1234", "12.35", "0.01234").
// Numbers for people: never "nan"/"inf" ("n/a" instead) and never hundreds of digits (scientific
// notation from 1e15 on, three significant digits).
std::string format_value(double v);
// `v` with `decimals` digits after the point, under the same two rules.
std::string fixed_text(double v, int decimals);
// 100 × `fraction` with `decimals` digits and a '%': "12.34%", "1.000e+310%" (the product is
// taken in long double, so no finite fraction prints as inf), "n/a" when not finite.
std::string percent_text(double fraction, int decimals = 2);
std::string format_seconds(double s);  // "12.3 us", "4.56 ms"
// A rate in the unit that reads best on a console: a value below 1 in an SI-prefixed FLOP/s or
// B/s unit steps down a prefix at a time, to MFLOP/s or MB/s at most ({0.04196, "TFLOP/s"} gives
// {41.96, "GFLOP/s"}); any other unit, and values of 1 and above, as they are. Results keep
// their recorded unit: this is for people.
std::pair<double, std::string> readable_rate(double v, const std::string& unit);
// The coefficient of variation in percent with `decimals` digits, "-" for fewer than two
// samples, where it is undefined (a one-sample row once read "0.00").
std::string cv_text(const Statistics& s, int decimals);

// One line per case as it ends (the runner's progress line, bench/common/runner.hpp), single-spaced
// so that a line cut at a terminal's width keeps as much as it can: key, status, the headline
// metric, the median time and sample count, then every param in full, then the reason of a row
// that did not pass on a line of its own. The table at the end aligns them (render_console).
std::string console_row(const Result& r);
// The summary of a run: per family (in order of first appearance) one table per kind of row (rows
// whose param names hold or are held by another's share a table; mem's STREAM, pointer-chase and
// ratio rows get one each) whose columns are the case and each param that differs between its
// rows, in full, byte counts (`bytes`, `…_bytes`) in the largest binary unit that divides them
// exactly; params the rows share are printed once above it; % of peak only where some row has a
// peak. Reasons of non-passing rows follow their row.
std::string render_console(const std::vector<Result>& results);
// Every line of `text` wider than `width` characters (UTF-8, not bytes) broken at its last space
// within the width, the rest indented 4 more than the line (a "# " comment line goes on as
// "#   "); a line without such a space stays whole.
std::string wrap_lines(const std::string& text, size_t width = 100);
// `line` cut to `cols` characters (UTF-8, not bytes), its last one "…" where anything was cut.
std::string fit_columns(const std::string& line, size_t cols);
// Counts per status, e.g. "12 passed, 0 failed, 3 waived, 0 errors".
std::string status_summary(const std::vector<Result>& results);

// CSV, one row per result × metric: `key`, then one column per parameter (the union of the
// results' param names, sorted; a name that is also a fixed column gets a `param_` prefix; empty
// where a result lacks it; strings as they are, numbers and booleans as JSON, arrays and objects
// as compact JSON), then status, reason, metric, value, unit, higher_is_better, percent_of_peak,
// median_s, min_s, p95_s, cv, samples, throttled. `param_columns`: these columns instead of the
// document's own union (one header over several documents).
std::vector<std::string> csv_param_columns(const std::vector<Result>& results);
std::string render_csv(const ResultDocument& doc, const std::vector<std::string>& param_columns = {});

}  // namespace gcb
