// `gcbench topo`: the command line over topology (discovery, loading, renderers).
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>

#include "topology/topology.hpp"

namespace gcb::bench {

void add_topo_command(CLI::App& root, std::function<int()>& run);

}  // namespace gcb::bench
