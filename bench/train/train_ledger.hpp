// `gcbench train --explain`: the step ledger of each layout that ran (models/planner/step_ledger.hpp)
// — per kernel family of rank 0's step, launches, FLOPs, bytes and the floor at the run's peak and,
// on a GPU, its spec memory bandwidth — printed after the tables and kept in the results' JSON.
#pragma once

#include <vector>

#include "models/run/training_run.hpp"
#include "reports/result.hpp"

namespace gcb::bench {

// Adds extra.step_ledger (rows) and extra.step_ledger_rates to each result that ran (results[i]
// of request.layouts[i]); returns the console text (empty when nothing ran).
std::string add_step_ledgers(const models::TrainRequest& request, std::vector<Result>& results);

}  // namespace gcb::bench
