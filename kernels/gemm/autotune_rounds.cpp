// time_round_robin (autotune_rounds.hpp): every autotune candidate timed over rounds in alternating order and ranked by
// its mean per-round time, so a linear drift slows every candidate alike.
#include "kernels/gemm/autotune_rounds.hpp"

#include <cmath>
#include <limits>

#include "core/error.hpp"

namespace gcb::kernels {

RoundRobinTiming time_round_robin(int candidates, int rounds, const std::function<double(int)>& time_one) {
  GCB_CHECK(candidates >= 1 && rounds >= 1, "round-robin timing needs a candidate and a round");
  const auto n = static_cast<size_t>(candidates);
  std::vector<double> sum(n, 0.0);
  std::vector<bool> failed(n, false);
  for (int round = 0; round < rounds; ++round)
    for (int position = 0; position < candidates; ++position) {
      const int c = round % 2 == 0 ? position : candidates - 1 - position;
      const auto i = static_cast<size_t>(c);
      if (failed[i]) continue;
      const double t = time_one(c);
      if (std::isnan(t))
        failed[i] = true;
      else
        sum[i] += t;
    }
  RoundRobinTiming out;
  out.mean_seconds.assign(n, std::numeric_limits<double>::quiet_NaN());
  double best = std::numeric_limits<double>::infinity();
  for (size_t i = 0; i < n; ++i) {
    if (failed[i]) continue;
    out.mean_seconds[i] = sum[i] / rounds;
    if (out.mean_seconds[i] < best) {
      best = out.mean_seconds[i];
      out.best = static_cast<int>(i);
    }
  }
  return out;
}

}  // namespace gcb::kernels
