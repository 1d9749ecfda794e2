// Who meets whom in scan's inter-node stages (plan.hpp): round_robin_rounds (circle method), bisection_pairs,
// pack_rounds of disjoint pairs and rail_pairs. Pure functions of counts.
#include "bench/scan/plan.hpp"

#include <algorithm>

namespace gcb::scan {

std::vector<Round> round_robin_rounds(int nodes) {
  std::vector<Round> rounds;
  if (nodes < 2) return rounds;
  // With an odd count a phantom node (index n) joins; whoever meets it rests that round.
  const int n = nodes % 2 == 0 ? nodes : nodes + 1;
  std::vector<int> circle(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) circle[static_cast<size_t>(i)] = i;
  for (int r = 0; r < n - 1; ++r) {
    Round round;
    for (int i = 0; i < n / 2; ++i) {
      const int a = circle[static_cast<size_t>(i)], b = circle[static_cast<size_t>(n - 1 - i)];
      if (a < nodes && b < nodes) round.emplace_back(std::min(a, b), std::max(a, b));
    }
    std::sort(round.begin(), round.end());
    rounds.push_back(std::move(round));
    // Keep position 0 fixed, rotate the rest by one.
    std::rotate(circle.begin() + 1, circle.end() - 1, circle.end());
  }
  return rounds;
}

Round bisection_pairs(int nodes) {
  Round r;
  const int half = nodes / 2;
  for (int i = 0; i < half; ++i) r.emplace_back(i, i + half);
  return r;
}

std::vector<Round> pack_rounds(const std::vector<NodePair>& pairs) {
  std::vector<Round> rounds;
  for (const auto& p : pairs) {
    auto fits = [&](const Round& r) {
      return std::none_of(r.begin(), r.end(), [&](const NodePair& q) {
        return q.first == p.first || q.first == p.second || q.second == p.first || q.second == p.second;
      });
    };
    auto it = std::find_if(rounds.begin(), rounds.end(), fits);
    if (it == rounds.end())
      rounds.push_back({p});
    else
      it->push_back(p);
  }
  return rounds;
}

std::vector<std::pair<int, int>> rail_pairs(const std::vector<int>& ranks_of_a, const std::vector<int>& ranks_of_b) {
  std::vector<std::pair<int, int>> out;
  const size_t n = std::min(ranks_of_a.size(), ranks_of_b.size());
  for (size_t i = 0; i < n; ++i) out.emplace_back(ranks_of_a[i], ranks_of_b[i]);
  return out;
}

}  // namespace gcb::scan
