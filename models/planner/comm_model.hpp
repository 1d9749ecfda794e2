// Seconds of one collective of a group on a tier: t = α + n/β over the logical buffer n
// (all-reduce: its buffer; reduce-scatter: its input; all-gather: its output; send/recv: the
// message — nccl-tests' size column and theory.hpp's counting). α and β come, in this order, from
//   1. a `coll/<op>/fit` of the same op, group size and tier (calibration.hpp);
//   2. a fit of the same op and tier at another group size, rescaled as a ring: its latency per
//      step α/steps(n₀) and its bus bandwidth β·factor(n₀) carried to n (nccl-tests PERFORMANCE.md
//      bus factors, NCCL's ring step counts);
//   3. a fit of another op on the same tier, rescaled the same way;
//   4. the cluster's link tier (cluster.hpp: NCCL's latency model, spec or flag bandwidth).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>

#include "models/planner/calibration.hpp"
#include "models/planner/cluster.hpp"

namespace gcb::models::planner {

enum class Collective : uint8_t { all_reduce, reduce_scatter, all_gather, send_recv };
std::string_view collective_name(Collective c);  // coll's --op names: all_reduce, …, sendrecv
std::optional<Collective> parse_collective(std::string_view op);

// Ring steps of NCCL's model (src/graph/tuning.cc): all-reduce 2(n−1), reduce-scatter and
// all-gather n−1, a send/recv 1. Bus factor: nccl-tests' (PERFORMANCE.md), 2(n−1)/n, (n−1)/n, 1,
// from its one definition, collectives/coll_op.hpp busbw_factor, through the matching CollOp.
double ring_steps(Collective c, int ranks);
double bus_factor(Collective c, int ranks);

struct AlphaBeta {
  double alpha_s = 0;
  double bytes_per_s = 0;  // 0: not costed (an unknown link)
  std::string source;
};

class CommModel {
 public:
  CommModel(Cluster cluster, Calibration cal);
  AlphaBeta model(Collective op, int ranks, Tier tier) const;
  double seconds(Collective op, double bytes, int ranks, Tier tier) const;

 private:
  Cluster cluster_;
  Calibration cal_;
  mutable std::map<std::tuple<Collective, int, Tier>, AlphaBeta> cache_;
};

}  // namespace gcb::models::planner
