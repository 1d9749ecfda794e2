// Who meets whom in the inter-node stages of `gcbench scan`: rounds of disjoint node pairs that
// together cover every pair of nodes once (a round-robin tournament, the circle method), the
// bisection of the job (half against half), and the rail-aligned rank pairs of two nodes (GPU i
// with GPU i, as NCCL's rail-optimised rings pair them). Pure functions of counts.
#pragma once

#include <utility>
#include <vector>

namespace gcb::scan {

using NodePair = std::pair<int, int>;  // node indices, first < second
using Round = std::vector<NodePair>;

// Circle method (Kirkman; e.g. Knuth TAOCP 7.2.1.5's "round-robin tournament"): fix node 0,
// rotate the others. n even: n−1 rounds of n/2 pairs; n odd: n rounds of (n−1)/2 pairs, one node
// resting each round. Every unordered pair appears exactly once; no node twice in a round.
std::vector<Round> round_robin_rounds(int nodes);

// Half against half: node i of the first ⌊n/2⌋ with node i + ⌊n/2⌋; the last node rests when n
// is odd. Empty for n < 2.
Round bisection_pairs(int nodes);

// Packs node pairs into as few rounds of disjoint pairs as a greedy first fit gives, in order
// (for re-measuring the links that looked slow).
std::vector<Round> pack_rounds(const std::vector<NodePair>& pairs);

// Rank pairs of one node pair, rail-aligned: the i-th rank of node a with the i-th rank of node
// b, for i below the smaller rank count. `ranks_of_a`/`ranks_of_b` are world ranks in local
// order.
std::vector<std::pair<int, int>> rail_pairs(const std::vector<int>& ranks_of_a, const std::vector<int>& ranks_of_b);

}  // namespace gcb::scan
