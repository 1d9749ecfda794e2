// Which rank lives on which node in a scan: node names in order of their first rank, each rank's
// local index (its rail) and GPU. Built from an all-gather of every rank's host name, so every
// rank holds the same layout.
#pragma once

#include <string>
#include <vector>

#include "collectives/world.hpp"

namespace gcb::scan {

struct ScanRank {
  std::string node;
  int local = 0;  // index among the ranks of its node = its rail
  int gpu = -1;   // CUDA device it measures, -1 = the host (CPU-only node)
};

struct ScanLayout {
  std::vector<std::string> nodes;               // in order of first rank
  std::vector<ScanRank> ranks;                  // by world rank
  std::vector<std::vector<int>> ranks_of_node;  // world ranks of node i, in local order
  int node_of(int rank) const;
  int index_of(const std::string& node) const;  // -1 when unknown
  // Lays out ranks from their node names and GPUs (world order).
  static ScanLayout from(const std::vector<std::string>& node_of_rank, const std::vector<int>& gpu_of_rank);
};

// Collective over ctx.host_comm. `node_name` is this rank's node (its host name, or a test
// name); `gpu` the device this rank measures (-1 for the host).
ScanLayout gather_layout(RankContext& ctx, const std::string& node_name, int gpu);

}  // namespace gcb::scan
