// Stage 6 of `gcbench scan` (optional): a few training steps of a small GPT on every rank, alone
// (a world of one), so each rank's step time measures its own compute. The one place scan calls
// the training library: re-point run_reference_steps when models/ changes its entry point.
#pragma once

#include <string>
#include <vector>

#include "collectives/communicator.hpp"
#include "models/model/config.hpp"

namespace gcb::scan {

struct ReferenceOptions {
  std::string model = "tiny";  // a named config, or a JSON config file (models/model/config.hpp), as train --model
  int steps = 3;               // timed steps after one warm-up step
  uint64_t seed = 1234;
};

// Seconds of each timed step on `solo` (a communicator of size 1), through the harness.
std::vector<double> run_reference_steps(Communicator& solo, const ReferenceOptions& o);
// The config `model` names: a file when it ends in .json, else a named config; gcb::UsageError when
// neither (checked before any stage runs).
models::GptConfig reference_config(const std::string& model);
// "cpu" today: the training library has a CPU backend only.
std::string reference_backend_name();

}  // namespace gcb::scan
