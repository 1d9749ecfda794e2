// Whether a rank's model states and activations fit in a GPU's memory, and when they do not
// because of the LM head's logits, how many rows of logits to hold at a time so that they do
// (TrainOptions::logit_rows). The bytes are theory.hpp's per rank (the largest pipeline stage's
// persistent states plus activations), a lower bound: ZeRO-2/3 buckets, gathered units, op
// workspaces, the cuBLASLt workspace and the pool's rounding come on top, so only a share of the
// GPU is budgeted for them (kDeviceBudget). Plain C++: tested without a GPU.
#pragma once

#include <cstdint>
#include <optional>

#include "models/model/train_options.hpp"

namespace gcb::models {

// The share of a GPU's memory the theory's bytes may take: the rest is left for what the theory
// does not count (above) and the CUDA context. A policy, not a measurement.
inline constexpr double kDeviceBudget = 0.9;

// Bytes one rank of `lay` holds at least: the largest stage's persistent states + activations.
uint64_t rank_bytes_lower_bound(const TrainOptions& o, const ParallelLayout& lay);

// o.logit_rows as given when it is set (> 0) or the rank fits `budget` bytes with the whole head;
// otherwise the most rows of logits at a time with which it fits; nullopt when it does not fit
// even one row at a time (something other than the logits is too large).
std::optional<int> logit_rows_to_fit(const TrainOptions& o, const ParallelLayout& lay, uint64_t budget);

}  // namespace gcb::models
