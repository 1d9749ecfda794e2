// Memory per device by category (backend.hpp's MemCategory), per pipeline stage, as the engine
// allocates it: the model states of theory.hpp (ZeRO paper §3.1) exactly; activations of
// theory.hpp (Korthikanti et al. 2022 Table 2 adapted to flash attention), optionally with the
// materialised attention probabilities of an unfused attention and the extra in-flight
// micro-batches of an interleaved schedule; and the transients the engine adds — ZeRO-2/3
// gradient buckets, ZeRO-3's gathered unit, the tied-embedding exchange buffer, and the
// workspace (token ids, targets, the loss; the fp32 unit that initialisation fills once).
#pragma once

#include <array>

#include "models/model/mem_category.hpp"
#include "models/planner/step_work.hpp"
#include "models/model/train_options.hpp"

namespace gcb::models::planner {

struct MemoryOptions {
  AttentionCostModel attention;  // materialised: the probabilities (and dropout's mask and output) are kept
  int virtual_stages = 1;        // interleaved 1F1B model chunks per device
};

struct StageMemory {
  int stage = 0;
  std::array<double, kMemCategories> peak{};  // bytes, per MemCategory
  double workspace_steady = 0;                // workspace between steps (peak: initialisation)
  double host = 0;  // --offload: the rank's model states and saved activations in host memory (theory.hpp)
  // Device bytes held at once during a step: every category's peak, the workspace's steady part.
  // The peaks do not all fall at the same instant, so this bounds the true peak from above.
  double total() const;
  double at(MemCategory c) const { return peak[static_cast<size_t>(c)]; }
};

StageMemory stage_memory(const TrainOptions& o, const ParallelLayout& lay, int stage, const MemoryOptions& m = {});

}  // namespace gcb::models::planner
