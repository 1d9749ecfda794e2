// ScanLayout (layout.hpp): the node, rail and GPU of every rank, built from an all-gather of host names (gather_layout)
// so every rank holds the same layout.
#include "bench/scan/layout.hpp"

#include <algorithm>

#include "bench/scan/exchange.hpp"
#include "core/error.hpp"

namespace gcb::scan {

int ScanLayout::node_of(int rank) const { return index_of(ranks.at(static_cast<size_t>(rank)).node); }

int ScanLayout::index_of(const std::string& node) const {
  const auto it = std::find(nodes.begin(), nodes.end(), node);
  return it == nodes.end() ? -1 : static_cast<int>(it - nodes.begin());
}

ScanLayout ScanLayout::from(const std::vector<std::string>& node_of_rank, const std::vector<int>& gpu_of_rank) {
  GCB_CHECK(node_of_rank.size() == gpu_of_rank.size(), "one GPU entry per rank");
  ScanLayout l;
  for (size_t r = 0; r < node_of_rank.size(); ++r) {
    int n = l.index_of(node_of_rank[r]);
    if (n < 0) {
      n = static_cast<int>(l.nodes.size());
      l.nodes.push_back(node_of_rank[r]);
      l.ranks_of_node.emplace_back();
    }
    auto& mine = l.ranks_of_node[static_cast<size_t>(n)];
    l.ranks.push_back({node_of_rank[r], static_cast<int>(mine.size()), gpu_of_rank[r]});
    mine.push_back(static_cast<int>(r));
  }
  return l;
}

ScanLayout gather_layout(RankContext& ctx, const std::string& node_name, int gpu) {
  const std::vector<std::string> names = all_gather_strings(ctx.host_comm, node_name);
  std::vector<int32_t> gpus(static_cast<size_t>(ctx.size));
  const int32_t mine = gpu;
  ctx.host_comm.all_gather(&mine, gpus.data(), 1, DType::i32);
  return ScanLayout::from(names, std::vector<int>(gpus.begin(), gpus.end()));
}

}  // namespace gcb::scan
