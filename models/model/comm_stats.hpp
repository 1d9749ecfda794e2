// Communication of one training step per kind, as the engine counts it and the theory predicts
// it: calls and bytes of the logical buffer of each call — all_reduce: its buffer,
// reduce_scatter: its input (group size × shard), all_gather: its output (group size × shard).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace gcb::models {

// The first four are the dp group (loss_all_reduce: the step's loss over dp and pp); the tp_*
// kinds are Megatron's activation collectives (plus, under SP, the per-step all-reduce of the
// sequence-parallel LayerNorm/bias gradients, counted as tp_all_reduce); pp_send / pp_recv are
// pipeline activations and activation gradients (counted by the sender and the receiver);
// pp_embed is the per-step exchange of the tied embedding gradient between the first and the
// last stage (sent bytes); grad_norm_all_reduce is gradient clipping's fp64 squared norm, one
// all-reduce per group of more than one rank (dp, tp, pp; Megatron-LM clip_grads.py).
enum class CommKind : uint8_t {
  all_reduce,
  reduce_scatter,
  all_gather,
  loss_all_reduce,
  tp_all_reduce,
  tp_all_gather,
  tp_reduce_scatter,
  pp_send,
  pp_recv,
  pp_embed,
  grad_norm_all_reduce
};
inline constexpr size_t kCommKinds = 11;
std::string_view comm_kind_name(CommKind k);

struct CommCounter {
  int64_t calls = 0;
  int64_t bytes = 0;
};
struct CommStats {
  std::array<CommCounter, kCommKinds> by_kind{};
  const CommCounter& operator[](CommKind k) const { return by_kind[static_cast<size_t>(k)]; }
  // One call moving `bytes` (the logical buffer) under kind k.
  void record(CommKind k, size_t bytes) {
    auto& c = by_kind[static_cast<size_t>(k)];
    c.calls += 1;
    c.bytes += static_cast<int64_t>(bytes);
  }
};

}  // namespace gcb::models
