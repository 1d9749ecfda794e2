// One `--attn auto` decision for the whole run: every rank times the usable attention implementations
// on its own problem (Backend::measure_attention), the times are all-gathered over the world and
// combined (attention_choice.hpp agreed_attention_times: the slowest rank's time per registry
// row), and every rank adopts the same times (Backend::adopt_attention), so that no two
// ranks run different kernels and the choice recorded by rank 0 is the one every rank used.
// Called by the engine before the first step, on every rank (inside a step the pipeline's stages
// reach their first attention at different times, so a collective there could wait forever).
#pragma once

#include <optional>
#include <vector>

#include "collectives/communicator.hpp"
#include "models/backend/backend.hpp"

namespace gcb::models {

struct AttentionAgreement {
  std::vector<std::optional<AttentionTimes>> ranks;  // what each world rank measured
  std::optional<AttentionTimes> agreed;              // what every rank adopted (nullopt: nothing measured)
};

// Collective over `world`: the gather runs on the backend's memory, ordered against its compute.
AttentionAgreement agree_on_attention(Backend& be, Communicator& world, DType t, int B, int T, int C, int NH);

}  // namespace gcb::models
