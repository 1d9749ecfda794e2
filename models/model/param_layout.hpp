// The canonical parameter layout of the GPT-2 model: every tensor's place in the model's flat
// parameter vector (the order full_params(), checkpoints and the tests use), grouped in "units",
// the granularity of gradient buckets, ZeRO partitioning and pipeline stages: unit 0 = {wte, wpe,
// lnf.w, lnf.b} (the embedding, whose wte the LM head shares), unit 1 + l = layer l. Linear
// weights are [out, in] (llm.c train_gpt2.c shapes), so y = x·Wᵀ + b.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "models/model/config.hpp"

namespace gcb::models {

// Element offsets of each tensor inside its unit.
struct EmbedUnit {
  size_t wte, wpe, lnfw, lnfb, size;  // wte [V,C], wpe [T,C], lnf [C]
};
struct LayerUnit {
  size_t ln1w, ln1b, qkvw, qkvb, projw, projb, ln2w, ln2b, fcw, fcb, fcprojw, fcprojb, size;
};

class ParamLayout {
 public:
  explicit ParamLayout(const GptConfig& c);
  const GptConfig& config() const { return cfg_; }
  int num_units() const { return cfg_.layers + 1; }
  size_t unit_size(int unit) const { return unit == 0 ? embed_.size : layer_.size; }
  // Offset of unit `unit` in the flat parameter vector (units in order, unpadded).
  size_t unit_offset(int unit) const {
    return unit == 0 ? 0 : embed_.size + static_cast<size_t>(unit - 1) * layer_.size;
  }
  size_t total() const { return unit_offset(num_units()); }
  const EmbedUnit& embed() const { return embed_; }
  const LayerUnit& layer() const { return layer_; }

  // GPT-2's initialization, tensor by tensor (engine/param_init.hpp applies it): N(0, 0.02) for
  // embeddings, QKV and fc weights; N(0, 0.02/√(2L)) for the two residual projections; biases 0;
  // LayerNorm weight 1, bias 0. Spans are element offsets in the unit, in tensor order.
  enum class InitKind : uint8_t { normal, residual_normal, zero, one };
  struct InitSpan {
    size_t offset, size;
    InitKind kind;
  };
  std::vector<InitSpan> init_spans(int unit) const;
  float init_std(InitKind k) const;  // the normal's standard deviation (0 for zero and one)

 private:
  GptConfig cfg_;
  EmbedUnit embed_{};
  LayerUnit layer_{};
};

}  // namespace gcb::models
