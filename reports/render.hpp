// Renderers that are pure functions of results: the console table (printed row by row as
// cases end) and CSV (one row per result × metric).
#pragma once

#include <string>
#include <vector>

#include "reports/result.hpp"

namespace gcb {

// Compact "k=v k=v" of a result's params, in key order.
std::string params_summary(const nlohmann::json& params);
// Value with an SI-style precision that keeps 4 significant digits ("1234", "12.35", "0.01234").
std::string format_value(double v);
std::string format_seconds(double s);  // "12.3 us", "4.56 ms"

std::string console_header();
std::string console_row(const Result& r);
std::string render_console(const std::vector<Result>& results);
// Counts per status, e.g. "12 passed, 0 failed, 3 waived, 0 errors".
std::string status_summary(const std::vector<Result>& results);

std::string render_csv(const ResultDocument& doc);

}  // namespace gcb
