// layout_space.hpp: every dp·tp·pp split of the GPUs crossed with ZeRO stage, SP, recomputation, micro-batch, schedule,
// overlap and offload, and candidate_error, why a candidate cannot run.
#include "models/planner/layout_space.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "models/model/train_options.hpp"

namespace gcb::models::planner {
namespace {

std::vector<int> divisors(int n) {
  std::vector<int> d;
  for (int i = 1; i <= n; ++i)
    if (n % i == 0) d.push_back(i);
  return d;
}

}  // namespace

std::string layout_error(const GptConfig& model, const Cluster& cluster, int global_batch, int dp, int tp, int pp,
                         bool tp_across_nodes) {
  if (!tp_across_nodes && tp > cluster.gpus_per_node) {
    return fmt::format("tp {} > {} GPUs per node (tp all-reduces in every layer need the intra-node links)", tp,
                       cluster.gpus_per_node);
  }
  if (!tp_across_nodes && cluster.gpus_per_node % tp != 0) {
    return fmt::format("tp {} does not divide the {} GPUs of a node", tp, cluster.gpus_per_node);
  }
  if (model.heads % tp != 0) return fmt::format("tp {} does not divide {} heads", tp, model.heads);
  if (model.hidden % tp != 0) return fmt::format("tp {} does not divide hidden {}", tp, model.hidden);
  if (pp > model.layers) return fmt::format("pp {} > {} layers", pp, model.layers);
  if (global_batch % dp != 0) return fmt::format("global batch {} not divisible by dp {}", global_batch, dp);
  return "";
}

std::string candidate_error(const PlanModel& pm, const Candidate& c, bool tp_across_nodes) {
  const LayoutSpec& l = c.layout;
  if (l.dp * l.tp * l.pp != pm.cluster.gpus) {
    return fmt::format("dp {} × tp {} × pp {} = {} ≠ {} GPUs", l.dp, l.tp, l.pp, l.dp * l.tp * l.pp, pm.cluster.gpus);
  }
  if (std::string e = layout_error(pm.model, pm.cluster, pm.global_batch, l.dp, l.tp, l.pp, tp_across_nodes);
      !e.empty())
    return e;
  if (c.micro_batch < 1 || pm.global_batch % (l.dp * c.micro_batch) != 0) {
    return fmt::format("global batch {} not divisible by dp {} × micro-batch {}", pm.global_batch, l.dp, c.micro_batch);
  }
  const int m = pm.global_batch / (l.dp * c.micro_batch);
  if (c.virtual_stages > 1) {
    if (l.pp < 2) return "interleaving needs pp ≥ 2";
    if (l.schedule != PipeSchedule::one_f_one_b) return "interleaving is a 1F1B schedule";
    if (pm.model.layers % (l.pp * c.virtual_stages) != 0) {
      return fmt::format("{} layers not divisible by pp {} × {} model chunks", pm.model.layers, l.pp, c.virtual_stages);
    }
    if (m % l.pp != 0) return fmt::format("interleaving needs micro-batches ({}) divisible by pp {}", m, l.pp);
  }
  const TrainOptions o = candidate_options(pm, c);
  if (std::string e = models::layout_error(o, l.layout()); !e.empty()) return e;
  return "";
}

std::vector<Candidate> enumerate_candidates(const PlanModel& pm, const SearchSpace& space,
                                            std::vector<Rejection>& rejected) {
  std::vector<Candidate> out;
  const int gpus = pm.cluster.gpus;
  for (int tp : divisors(gpus)) {
    for (int pp : divisors(gpus / tp)) {
      const int dp = gpus / (tp * pp);
      const std::string shape = fmt::format("dp{}-tp{}-pp{}", dp, tp, pp);
      if (std::string e = layout_error(pm.model, pm.cluster, pm.global_batch, dp, tp, pp, space.tp_across_nodes);
          !e.empty()) {
        rejected.push_back({shape, e, 1});
        continue;
      }
      for (ZeroStage z : space.zero) {
        if (dp == 1 && z != ZeroStage::none) continue;
        for (bool sp : space.sp) {
          if (tp == 1 && sp) continue;
          for (bool overlap : space.overlap) {
            if (dp == 1 && overlap) continue;
            for (PipeSchedule sched : space.schedules) {
              if (pp == 1 && sched != space.schedules.front()) continue;
              for (int v : space.virtual_stages) {
                if (v > 1 && (pp == 1 || sched != PipeSchedule::one_f_one_b)) continue;
                for (int mb : space.micro_batches) {
                  for (Recompute rc : space.recompute) {
                    for (Offload off : space.offload) {
                      if (off != Offload::none && pm.cluster.is_cpu()) continue;
                      Candidate c = make_candidate({.name = {},
                                                    .dp = dp,
                                                    .tp = tp,
                                                    .pp = pp,
                                                    .sp = sp,
                                                    .zero = z,
                                                    .schedule = sched,
                                                    .overlap = overlap},
                                                   mb, rc, v, off);
                      if (rc == Recompute::full) c.recompute_every = std::max(1, space.recompute_every);
                      if (std::string e = candidate_error(pm, c, space.tp_across_nodes); !e.empty()) {
                        rejected.push_back({c.name(), e, 1});
                      } else {
                        out.push_back(c);
                      }
                    }
                  }
                }
              }
            }
          }
        }
      }
    }
  }
  return out;
}

}  // namespace gcb::models::planner
