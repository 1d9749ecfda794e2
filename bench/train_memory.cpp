// Host bytes a training layout needs, from the analytic formulas of models/engine.hpp: checked
// against the available memory before anything is allocated (bench/train.hpp).
#include <fmt/format.h>

#include <algorithm>

#include "bench/train.hpp"
#include "collectives/world.hpp"
#include "core/host_memory.hpp"

namespace gcb::bench {

uint64_t train_rank_host_bytes(const models::TrainOptions& t, const models::ParallelLayout& layout) {
  uint64_t most = 0;
  for (int stage = 0; stage < layout.pp; ++stage) {
    // Persistent model states (ZeRO paper §3.1) plus the stage's activations (4-byte floats):
    // a lower bound, since ZeRO-2/3 buckets and gathered units come on top during a step.
    const models::StateBytes s = models::parallel_state_bytes(t, layout, stage);
    const uint64_t bytes = uint64_t{s.params} + s.grads + s.adam_m + s.adam_v +
                           4 * uint64_t{models::parallel_activation_floats(t, layout, stage)};
    most = std::max(most, bytes);
  }
  return most;
}

void check_train_host_memory(uint64_t rank_bytes, int world_ranks, const std::string& layout) {
  const LauncherInfo launcher = detect_launcher();
  // Rank threads share this process; MPI ranks on this host share its memory.
  const int here = !launcher.launched ? world_ranks : std::max(launcher.local_size, 1);
  check_host_memory(here * static_cast<double>(rank_bytes),
                    fmt::format("train {} ({} rank(s) on this host; model states + activations)", layout, here));
}

}  // namespace gcb::bench
