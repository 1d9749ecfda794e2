// One rank's place in a dp × tp × pp layout (docs/design.md "World"): the world communicator split into
// its dp, tp and pp groups in Megatron's rank order (train_options.hpp ParallelLayout).
#pragma once

#include <memory>

#include "collectives/communicator.hpp"
#include "models/model/train_options.hpp"

namespace gcb::models {

struct ParallelGroups {
  ParallelLayout layout;
  int rank = 0;  // in the world
  int dp_rank = 0, tp_rank = 0, pp_rank = 0;
  Communicator* world = nullptr;     // not owned
  std::unique_ptr<Communicator> dp;  // ranks with the same (tp_rank, pp_rank)
  std::unique_ptr<Communicator> tp;  // ranks with the same (dp_rank, pp_rank)
  std::unique_ptr<Communicator> pp;  // ranks with the same (tp_rank, dp_rank)
};

// Collective over `world` (every rank calls it). gcb::UsageError when dp·tp·pp ≠ world size.
ParallelGroups make_parallel_groups(Communicator& world, const ParallelLayout& layout);

}  // namespace gcb::models
