// make_parallel_groups (parallel_groups.hpp): the world communicator split into a rank's dp, tp and pp groups in
// Megatron's rank order.
#include "models/engine/parallel_groups.hpp"

#include <fmt/format.h>

#include "core/error.hpp"

namespace gcb::models {

ParallelGroups make_parallel_groups(Communicator& world, const ParallelLayout& layout) {
  if (layout.dp < 1 || layout.tp < 1 || layout.pp < 1 || layout.world() != world.size()) {
    throw UsageError(fmt::format("layout dp {} × tp {} × pp {} does not match {} ranks", layout.dp, layout.tp,
                                 layout.pp, world.size()));
  }
  ParallelGroups ctx;
  ctx.layout = layout;
  ctx.world = &world;
  ctx.rank = world.rank();
  // Megatron order: rank = tp_rank + tp·(dp_rank + dp·pp_rank).
  ctx.tp_rank = ctx.rank % layout.tp;
  ctx.dp_rank = (ctx.rank / layout.tp) % layout.dp;
  ctx.pp_rank = ctx.rank / (layout.tp * layout.dp);
  ctx.dp = world.split(ctx.pp_rank * layout.tp + ctx.tp_rank, ctx.dp_rank);
  ctx.tp = world.split(ctx.pp_rank * layout.dp + ctx.dp_rank, ctx.tp_rank);
  ctx.pp = world.split(ctx.dp_rank * layout.tp + ctx.tp_rank, ctx.pp_rank);
  return ctx;
}

}  // namespace gcb::models
