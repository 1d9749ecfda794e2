// How an autotune compares candidates fairly: every candidate is timed in several rounds, the
// order alternating forward and backward (A B C, C B A, A B C, …), and ranked by the mean of its
// per-round times. A device whose speed drifts during tuning (clocks settling, the chip heating)
// then slows every candidate alike: over an even number of rounds each candidate's positions sum
// to the same total, so a linear drift adds the same time to every mean. Timing the candidates
// once each, in order, hands the drift to the later ones. Pure C++; cuBLASLt's autotune uses it.
#pragma once

#include <functional>
#include <vector>

namespace gcb::kernels {

struct RoundRobinTiming {
  std::vector<double> mean_seconds;  // per candidate; NaN once a candidate failed
  int best = -1;                     // index of the smallest mean; -1 when every candidate failed
};

// Calls time_one(candidate) rounds × candidates times in the order above. time_one returns a
// time in seconds, or NaN when the candidate cannot run; a failed candidate is not timed again.
RoundRobinTiming time_round_robin(int candidates, int rounds, const std::function<double(int)>& time_one);

}  // namespace gcb::kernels
