// `gcbench topo` and the topology facts other subcommands record in their run context.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>

#include "reports/topology/topology.hpp"

namespace gcb::bench {

// A saved topology: NCCL XML (starts with '<'), gcbench JSON ('{') or `nvidia-smi topo -m` text.
topo::Topology load_topology(const std::string& path);
// {fingerprint, source, gpus, nics, numa_nodes}: stored in every result document's context so
// `compare` never pairs runs from different topologies silently.
nlohmann::json topology_context(const topo::Topology& t);
std::string render_topology(const topo::Topology& t, const std::string& format);

void add_topo_command(CLI::App& root, std::function<int()>& run);

}  // namespace gcb::bench
