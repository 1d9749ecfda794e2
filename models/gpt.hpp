// GPT-2-style decoder with forward and backward written by hand per layer (no autograd), on the
// Backend interface only. Parameters are grouped in "units", the granularity of gradient buckets
// and of ZeRO-3 gathering: unit 0 = {wte, wpe, lnf.w, lnf.b}, unit 1+l = layer l. The engine
// supplies each unit's parameters and gradient buffer through UnitHooks, so the same model code
// runs replicated, sharded (ZeRO) and, later, split across tp/pp ranks.
#pragma once

#include <cstdint>
#include <vector>

#include "models/backend.hpp"
#include "models/config.hpp"

namespace gcb::models {

// Element offsets of each tensor inside its unit (llm.c train_gpt2.c shapes: Linear weights are
// [out, in]).
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
  const EmbedUnit& embed() const { return embed_; }
  const LayerUnit& layer() const { return layer_; }

  // Writes elements [begin, end) of unit `unit`'s initial values into dst (end − begin floats);
  // indices past unit_size() are padding and get 0. Every value is a function of (seed, tensor,
  // element) only (models/init_rng.hpp), so any shard equals the same slice of the full tensor.
  // GPT-2 init: N(0, 0.02) for embeddings, QKV and fc weights; N(0, 0.02/√(2L)) for the two
  // residual projections; biases 0; LayerNorm weight 1, bias 0.
  void init_range(Backend& be, float* dst, int unit, size_t begin, size_t end, uint64_t seed) const;

 private:
  GptConfig cfg_;
  EmbedUnit embed_{};
  LayerUnit layer_{};
};

enum class ParamUse : uint8_t { embed_forward, layer_forward, head, layer_backward };

// The engine side of one micro-batch. Called in this order:
// params(0, embed_forward), release(0); for each layer: params(1+l, layer_forward), release;
// params(0, head) … grads_begin(0) … release(0) [head backward done];
// for each layer backwards: params(1+l, layer_backward), grads_begin(1+l), grads_end(1+l),
// release(1+l); embedding backward; grads_end(0).
class UnitHooks {
 public:
  virtual ~UnitHooks() = default;
  virtual const float* params(int unit, ParamUse use) = 0;
  virtual void release(int unit, ParamUse use) = 0;
  // Buffer of unit_size(unit) floats the backward pass accumulates into (+=).
  virtual float* grads_begin(int unit) = 0;
  virtual void grads_end(int unit) = 0;
};

// Activations for one micro-batch of B sequences of length T (allocated once, category
// activations; reused by every micro-batch). Recomputation (Korthikanti et al. 2022) trades
// memory for a second forward: selective keeps one shared buffer for the attention core (softmax
// probabilities and attention output) and recomputes it from the saved qkv before each layer's
// backward; full keeps only each layer's output (the next layer's input) and reruns the whole
// layer forward into one shared set of buffers. Results are bitwise identical in every mode.
class GptModel {
 public:
  GptModel(Backend& be, const GptConfig& c, int micro_batch, Recompute recompute = Recompute::none);
  // Activation floats this model allocates, by the derivation in docs/readme-train.md: per token,
  // each stored layer holds 16C + 4 + NH·T (none), 15C + 4 (selective) or C (full); shared
  // layer buffers add C + NH·T (selective) or 15C + 4 + NH·T (full); the rest (embedding output,
  // final LayerNorm, logits, losses, backward scratch) is 12C + 3 + V + NH·T.
  static size_t activation_floats(const GptConfig& c, int micro_batch, Recompute recompute);
  const ParamLayout& layout() const { return layout_; }
  int micro_batch() const { return B_; }
  // Per-token losses [B·T] of the last forward_backward (backend memory; for tests).
  const float* token_losses() const { return losses_.f32(); }

  // One micro-batch: forward, loss, backward. tokens/targets: backend int32 [B,T]. `dloss` scales
  // the loss gradient (1 / tokens in the global batch, so gradients are global means).
  // loss_sum[0] (+)= Σ per-token losses of this micro-batch (accumulate = not the first).
  void forward_backward(const int32_t* tokens, const int32_t* targets, UnitHooks& hooks,
                        float dloss, float* loss_sum, bool accumulate);

 private:
  // Pointers into owned_ buffers; layers may share some of them (recomputation).
  struct LayerActs {
    float *ln1, *ln1_mean, *ln1_rstd, *qkv, *atty, *att, *res2, *ln2, *ln2_mean, *ln2_rstd, *fch,
        *fch_gelu, *res3;
  };
  float* new_act(size_t floats);
  void layer_forward(int l, const float* p, const float* x);
  void layer_backward(int l, const float* p, float* g, const float* x, float* dres);

  Backend& be_;
  ParamLayout layout_;
  int B_, T_, C_, NH_, V_;
  Recompute recompute_;
  std::vector<Buffer> owned_;
  Buffer encoded_, lnf_, lnf_mean_, lnf_rstd_, logits_, losses_;
  std::vector<LayerActs> acts_;
  Buffer dres_, dC_, d4C_, dqkv_, datt_, dlnf_;
};

// Seeded synthetic token data: sequence s is a noisy affine chain next = (5·tok + 3) mod V with a
// random start and a random token 1 time in 8, so a model can learn it and the loss falls.
// tokens/targets receive `count` sequences starting at global sequence index `first`, each T
// inputs and the T next tokens as targets.
void synthetic_batch(uint64_t seed, int vocab, int T, int64_t first, int count,
                     std::vector<int32_t>& tokens, std::vector<int32_t>& targets);

}  // namespace gcb::models
