// device_fit.hpp: rank_bytes_lower_bound, a rank's device bytes from theory.hpp, and logit_rows_to_fit, how many rows
// of the LM head's logits to hold at a time to fit a memory budget.
#include "models/theory/device_fit.hpp"

#include <algorithm>

#include "models/theory/theory.hpp"

namespace gcb::models {

uint64_t rank_bytes_lower_bound(const TrainOptions& o, const ParallelLayout& lay) {
  uint64_t most = 0;
  for (const StageTheory& s : step_theory(o, lay).stages)
    most = std::max<uint64_t>(most, uint64_t{s.states.total()} + s.activation_bytes);
  return most;
}

std::optional<int> logit_rows_to_fit(const TrainOptions& o, const ParallelLayout& lay, uint64_t budget) {
  if (o.logit_rows > 0) return o.logit_rows;
  const auto fits = [&](int rows) {
    TrainOptions t = o;
    t.logit_rows = rows;
    return rank_bytes_lower_bound(t, lay) <= budget;
  };
  if (fits(0)) return 0;
  if (!fits(1)) return std::nullopt;
  // The bytes grow with the rows held: the largest that fits, by bisection over [1, B·T).
  int lo = 1, hi = o.micro_batch * o.model.seq;  // fits(lo); !fits(hi) (hi rows is the whole head)
  while (hi - lo > 1) {
    const int mid = lo + (hi - lo) / 2;
    (fits(mid) ? lo : hi) = mid;
  }
  return lo;
}

}  // namespace gcb::models
