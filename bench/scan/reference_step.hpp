// Stage 6 of `gcbench scan` (optional): a few training steps of a small GPT on every rank, alone
// (a world of one), so each rank's step time measures its own compute. The one place scan calls
// the training library: re-point run_reference_steps when models/ changes its entry point.
#pragma once

#include <string>
#include <vector>

#include "collectives/communicator.hpp"

namespace gcb::scan {

struct ReferenceOptions {
  std::string model = "tiny";  // a named config (models/config.hpp)
  int steps = 3;               // timed steps after one warm-up step
  uint64_t seed = 1234;
};

// Seconds of each timed step on `solo` (a communicator of size 1), through the harness.
std::vector<double> run_reference_steps(Communicator& solo, const ReferenceOptions& o);
// "cpu" today: the training library has a CPU backend only.
std::string reference_backend_name();

}  // namespace gcb::scan
