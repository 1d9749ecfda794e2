// The activation memory of one rank (category activations): per micro-batch in flight a Slot —
// the stage input, the gradient of the stage output and each layer's saved tensors — plus scratch
// shared by every layer and the head's buffers on the last stage. Under recomputation some layer
// tensors are one shared set that the backward refills (train_options.hpp Recompute); full
// recomputation in blocks of K layers shares K sets, one per position in the block.
// Activation tensors are of the precision's activation type; LayerNorm statistics, log-sum-exps,
// losses and cross-entropy statistics are fp32. theory.hpp derives the bytes this allocates.
//
// Under --offload activations (train_options.hpp Offload) a layer's tensors that a slot keeps for
// backward (those not in a shared set, but for the stage output, the last layer's res3, which the
// head reads and the pipeline sends) live in host memory (Backend::alloc_host, category
// activations), one copy per slot and layer. On the device every layer points at one of two
// working sets, alternating over the layers that keep something, so a layer and the one below it
// (whose output is its input) are on the device together: swap_out after a layer's forward copies
// its set to the host, swap_in before backward brings it back.
#pragma once

#include <utility>
#include <vector>

#include "core/size.hpp"
#include "models/backend/backend.hpp"
#include "models/model/rank_shape.hpp"

namespace gcb::models {

// One layer's saved tensors ([rows, width]): Rs rows in the LayerNorm/residual regions, R rows in
// the tp-sharded ones.
struct LayerActs {
  View ln1;                    // [Rs, C]
  float *ln1_mean, *ln1_rstd;  // [Rs]
  View qkv;                    // [R, 3C_l]
  View atty;                   // [R, C_l] attention output
  float* lse;                  // [B, NH_l, T] attention log-sum-exp
  View res2;                   // [Rs, C] residual after attention
  View ln2;                    // [Rs, C]
  float *ln2_mean, *ln2_rstd;  // [Rs]
  View fch, fch_gelu;          // [R, 4C_l]
  View res3;                   // [Rs, C] layer output (kept per slot unless inside a recomputed block)
};

// One tensor of a layer's kept set under --offload activations: its device working-set view and
// its host copy.
struct Swap {
  void* device;
  void* host;
  size_t bytes;
};

struct Slot {
  View x;     // stage input [Rs, C]
  View dout;  // gradient w.r.t. the stage output [Rs, C]; backward works in place
  std::vector<LayerActs> layers;
  std::vector<std::vector<Swap>> swaps;  // per layer: what --offload activations copies (else empty)
};

// Shared by every layer and slot (one layer computes at a time).
struct LayerScratch {
  View partial;             // [R, C] row-parallel output before the tp reduction (tp > 1)
  View dC;                  // [Rs, C] gradient w.r.t. a LayerNorm output
  View dCl;                 // [R, C_l] gradient w.r.t. the attention output
  View d4C;                 // [R, 4C_l]
  View dqkv;                // [R, 3C_l]
  View gathered;            // [R, C] SP: all-gathered activation gradient
  View ln1_full, ln2_full;  // [R, C] SP: the all-gathered LayerNorm outputs (not kept)
};

// The last stage's head: final LayerNorm, logits of the rank's vocabulary shard, loss.
struct HeadActs {
  View lnf;                    // [Rs, C]
  float *lnf_mean, *lnf_rstd;  // [Rs]
  View lnf_full;               // [R, C] SP: all-gathered lnf (else = lnf)
  View logits;                 // [R, V_l]: logits, then probabilities, then their gradient
  float* losses;               // [R]
  float* rowmax;               // [R]
  float* ce_stats;             // [R, 2] {Σexp, target logit}
  View dlnf;                   // [Rs, C]
};

class Activations {
 public:
  Activations(Backend& be, const RankShape& s, Recompute recompute, DType dtype, bool offload = false);
  Slot& slot(int micro_batch) { return slots_[static_cast<size_t>(micro_batch % static_cast<int>(slots_.size()))]; }
  // --offload activations: layer l's kept set of micro-batch j to the host (after its forward) and
  // back to the device working set (before backward reads it); nothing for a layer that keeps
  // nothing on the host. Synchronous (Backend copies). Bytes are counted until take_swapped().
  bool swaps(int l) const { return !slots_.front().swaps.empty() && !slots_.front().swaps[sz(l)].empty(); }
  void swap_out(int micro_batch, int l);
  void swap_in(int micro_batch, int l);
  OffloadBytes take_swapped() { return std::exchange(swapped_, OffloadBytes{}); }
  const LayerScratch& scratch() const { return scratch_; }
  const HeadActs& head() const { return head_; }

 private:
  View tensor(size_t count);
  float* floats(size_t count);

  Backend& be_;
  DType dtype_;
  std::vector<Buffer> owned_;
  std::vector<Slot> slots_;
  LayerScratch scratch_{};
  HeadActs head_{};
  OffloadBytes swapped_;
};

}  // namespace gcb::models
