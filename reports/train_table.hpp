// The console tables of `gcbench train`, as pure functions of its results: throughput and time
// split per layout, memory per category (rank 0) next to its formula, and the rows against torch.
#pragma once

#include <string>
#include <vector>

#include "reports/result.hpp"

namespace gcb::report {

// The MFU denominator of a result that ran (extra.peak_source) and, when it was measured, how
// steady its probe was (extra.peak_probe), after `separator` (a line break and an indent where
// the console would otherwise run past 100 columns).
std::string train_peak_line(const Result& r, const std::string& separator = ", ");

// `title`, then one row per layout that ran (step time, tokens/s, MFU, exposed communication,
// bubble against theory, loss) and the memory per category of rank 0 (model states between steps,
// activations at their peak): one figure where the measured bytes equal the formula's, else
// measured / formula (device: requested / on the device / formula), in columns as wide as their
// cells; layouts that did not run say why.
std::string render_train_tables(const std::vector<Result>& results, const std::string& title);

// The vs_torch rows of --peer-torch, one line each.
std::string render_torch_ratios(const std::vector<Result>& ratios);

}  // namespace gcb::report
