// CommModel (comm_model.hpp): a collective's α and β for a group on a tier — a calibrated fit, a fit rescaled as a
// ring, or the cluster's link — with the collective names, ring steps and bus factors it rescales by.
#include "models/planner/comm_model.hpp"

#include <fmt/format.h>

#include <cmath>
#include <limits>
#include <optional>

#include "collectives/coll_op.hpp"

namespace gcb::models::planner {

std::optional<Collective> parse_collective(std::string_view op) {
  for (Collective c :
       {Collective::all_reduce, Collective::reduce_scatter, Collective::all_gather, Collective::send_recv})
    if (op == collective_name(c)) return c;
  return std::nullopt;
}

namespace {

CollOp coll_op_of(Collective c) {
  switch (c) {
    case Collective::all_reduce: return CollOp::all_reduce;
    case Collective::reduce_scatter: return CollOp::reduce_scatter;
    case Collective::all_gather: return CollOp::all_gather;
    case Collective::send_recv: return CollOp::sendrecv;
  }
  return CollOp::sendrecv;
}

Tier fit_tier(const CollFit& f) { return f.nodes > 1 ? Tier::inter_node : Tier::intra_node; }

// The fit's ring carried from its own group size to `ranks`.
AlphaBeta rescale(const CollFit& f, Collective from, Collective to, int ranks) {
  const double step = f.alpha_s / std::max(1.0, ring_steps(from, f.ranks));
  const double busbw = f.bytes_per_s * bus_factor(from, f.ranks);
  return {step * ring_steps(to, ranks), busbw / bus_factor(to, ranks),
          fmt::format("coll/{}/fit at {} ranks ({}), rescaled as a ring to {} ranks", f.op, f.ranks, f.backend, ranks)};
}

}  // namespace

std::string_view collective_name(Collective c) {
  switch (c) {
    case Collective::all_reduce: return "all_reduce";
    case Collective::reduce_scatter: return "reduce_scatter";
    case Collective::all_gather: return "all_gather";
    case Collective::send_recv: return "sendrecv";
  }
  return "?";
}

double ring_steps(Collective c, int ranks) {
  switch (c) {
    case Collective::all_reduce: return 2.0 * (ranks - 1);
    case Collective::reduce_scatter:
    case Collective::all_gather: return ranks - 1.0;
    case Collective::send_recv: return 1.0;
  }
  return 1.0;
}

double bus_factor(Collective c, int ranks) { return busbw_factor(coll_op_of(c), ranks); }

CommModel::CommModel(Cluster cluster, Calibration cal) : cluster_(std::move(cluster)), cal_(std::move(cal)) {}

AlphaBeta CommModel::model(Collective op, int ranks, Tier tier) const {
  const auto key = std::make_tuple(op, ranks, tier);
  if (const auto it = cache_.find(key); it != cache_.end()) return it->second;
  AlphaBeta ab;
  // 1: the same op, group size and tier (several fits: their mean α and mean time per byte).
  int same = 0;
  double alpha = 0, inv_beta = 0;
  for (const CollFit& f : cal_.coll) {
    if (parse_collective(f.op) == op && f.ranks == ranks && fit_tier(f) == tier) {
      alpha += f.alpha_s;
      inv_beta += 1.0 / f.bytes_per_s;
      ++same;
    }
  }
  if (same > 0) {
    ab = {
        alpha / same, same / inv_beta,
        fmt::format("coll/{}/fit at {} ranks ({} fit{})", collective_name(op), ranks, same, same > 1 ? "s, mean" : "")};
  } else {
    // 2 and 3: the nearest group size (log distance) of the same op, else of any op, on this tier.
    const CollFit* best = nullptr;
    bool best_same_op = false;
    double best_d = std::numeric_limits<double>::max();
    for (const CollFit& f : cal_.coll) {
      const auto c = parse_collective(f.op);
      if (!c || fit_tier(f) != tier || f.ranks < 2) continue;
      const bool same_op = *c == op;
      const double d = std::abs(std::log(static_cast<double>(f.ranks) / ranks));
      if ((same_op && !best_same_op) || (same_op == best_same_op && d < best_d)) {
        best = &f;
        best_same_op = same_op;
        best_d = d;
      }
    }
    if (best) {
      ab = rescale(*best, *parse_collective(best->op), op, ranks);
    } else {
      const LinkTier& l = tier == Tier::intra_node ? cluster_.intra : cluster_.inter;
      ab.alpha_s = l.busbw_bytes_per_s > 0 ? l.base_latency_s + ring_steps(op, ranks) * l.step_latency_s : 0.0;
      ab.bytes_per_s = l.busbw_bytes_per_s > 0 ? l.busbw_bytes_per_s / bus_factor(op, ranks) : 0.0;
      ab.source = l.busbw_bytes_per_s > 0 ? l.source : fmt::format("{} link unknown: not costed", tier_name(tier));
    }
  }
  cache_.emplace(key, ab);
  return ab;
}

double CommModel::seconds(Collective op, double bytes, int ranks, Tier tier) const {
  if (ranks <= 1 && op != Collective::send_recv) return 0.0;
  const AlphaBeta ab = model(op, ranks, tier);
  if (ab.bytes_per_s <= 0) return 0.0;
  return ab.alpha_s + bytes / ab.bytes_per_s;
}

}  // namespace gcb::models::planner
