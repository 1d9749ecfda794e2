// GPT-2 forward and backward per layer on the Backend ops (llm.c train_gpt2.c structure:
// ../shared/reference/training.md §1.1). Residual adds are folded into the projections
// (copy the residual, then GEMM with beta = 1), so no separate add op is needed.
#include "models/gpt.hpp"

#include <algorithm>
#include <cmath>

#include "models/init_rng.hpp"

namespace gcb::models {
namespace {

size_t sz(int v) { return static_cast<size_t>(v); }

// Init kinds per tensor.
enum class Init : uint8_t { normal, residual_normal, zero, one };

struct TensorSpan {
  size_t offset, size;
  Init init;
};

}  // namespace

ParamLayout::ParamLayout(const GptConfig& c) : cfg_(c) {
  validate(c);
  const size_t C = sz(c.hidden);
  size_t o = 0;
  auto take = [&o](size_t n) { return std::exchange(o, o + n); };
  embed_.wte = take(sz(c.vocab) * C);
  embed_.wpe = take(sz(c.seq) * C);
  embed_.lnfw = take(C);
  embed_.lnfb = take(C);
  embed_.size = o;
  o = 0;
  layer_.ln1w = take(C);
  layer_.ln1b = take(C);
  layer_.qkvw = take(3 * C * C);
  layer_.qkvb = take(3 * C);
  layer_.projw = take(C * C);
  layer_.projb = take(C);
  layer_.ln2w = take(C);
  layer_.ln2b = take(C);
  layer_.fcw = take(4 * C * C);
  layer_.fcb = take(4 * C);
  layer_.fcprojw = take(4 * C * C);
  layer_.fcprojb = take(C);
  layer_.size = o;
}

void ParamLayout::init_range(Backend& be, float* dst, int unit, size_t begin, size_t end,
                             uint64_t seed) const {
  const size_t C = sz(cfg_.hidden);
  std::vector<TensorSpan> spans;
  if (unit == 0) {
    const auto& e = embed_;
    spans = {{e.wte, sz(cfg_.vocab) * C, Init::normal},
             {e.wpe, sz(cfg_.seq) * C, Init::normal},
             {e.lnfw, C, Init::one},
             {e.lnfb, C, Init::zero}};
  } else {
    const auto& l = layer_;
    spans = {{l.ln1w, C, Init::one},           {l.ln1b, C, Init::zero},
             {l.qkvw, 3 * C * C, Init::normal}, {l.qkvb, 3 * C, Init::zero},
             {l.projw, C * C, Init::residual_normal}, {l.projb, C, Init::zero},
             {l.ln2w, C, Init::one},           {l.ln2b, C, Init::zero},
             {l.fcw, 4 * C * C, Init::normal}, {l.fcb, 4 * C, Init::zero},
             {l.fcprojw, 4 * C * C, Init::residual_normal}, {l.fcprojb, C, Init::zero}};
  }
  // GPT-2 scales residual-path projections by 1/√(2L) (Radford et al. 2019 §2.3; nanoGPT).
  const float std_normal = 0.02f;
  const float std_residual = 0.02f / std::sqrt(2.0f * static_cast<float>(cfg_.layers));
  be.fill(dst, end - begin, 0.0f);
  for (size_t t = 0; t < spans.size(); ++t) {
    const TensorSpan& s = spans[t];
    const size_t lo = std::max(begin, s.offset);
    const size_t hi = std::min(end, s.offset + s.size);
    if (lo >= hi) continue;
    float* out = dst + (lo - begin);
    const uint64_t stream = static_cast<uint64_t>(unit) * 64 + t;  // tensor id
    switch (s.init) {
      case Init::normal:
        be.init_normal(out, hi - lo, seed, stream, lo - s.offset, std_normal);
        break;
      case Init::residual_normal:
        be.init_normal(out, hi - lo, seed, stream, lo - s.offset, std_residual);
        break;
      case Init::one: be.fill(out, hi - lo, 1.0f); break;
      case Init::zero: break;
    }
  }
}

GptModel::GptModel(Backend& be, const GptConfig& c, int micro_batch, Recompute recompute)
    : be_(be), layout_(c), B_(micro_batch), T_(c.seq), C_(c.hidden), NH_(c.heads), V_(c.vocab),
      recompute_(recompute) {
  const auto A = MemCategory::activations;
  const size_t BT = sz(B_) * sz(T_), C = sz(C_), att = BT * sz(NH_) * sz(T_);
  encoded_ = be.alloc_floats(A, BT * C);
  // Layer buffers: per layer, or one shared set that recomputation refills.
  const bool full = recompute == Recompute::full;
  const bool core_shared = recompute != Recompute::none;
  LayerActs shared{};
  auto one = [&](bool share, float* LayerActs::*field, size_t n) {
    if (!share) return new_act(n);
    if (shared.*field == nullptr) shared.*field = new_act(n);
    return shared.*field;
  };
  acts_.resize(sz(c.layers));
  for (auto& a : acts_) {
    a.ln1 = one(full, &LayerActs::ln1, BT * C);
    a.ln1_mean = one(full, &LayerActs::ln1_mean, BT);
    a.ln1_rstd = one(full, &LayerActs::ln1_rstd, BT);
    a.qkv = one(full, &LayerActs::qkv, BT * 3 * C);
    a.atty = one(core_shared, &LayerActs::atty, BT * C);
    a.att = one(core_shared, &LayerActs::att, att);
    a.res2 = one(full, &LayerActs::res2, BT * C);
    a.ln2 = one(full, &LayerActs::ln2, BT * C);
    a.ln2_mean = one(full, &LayerActs::ln2_mean, BT);
    a.ln2_rstd = one(full, &LayerActs::ln2_rstd, BT);
    a.fch = one(full, &LayerActs::fch, BT * 4 * C);
    a.fch_gelu = one(full, &LayerActs::fch_gelu, BT * 4 * C);
    a.res3 = new_act(BT * C);  // always kept: the next layer's input
  }
  lnf_ = be.alloc_floats(A, BT * C);
  lnf_mean_ = be.alloc_floats(A, BT);
  lnf_rstd_ = be.alloc_floats(A, BT);
  logits_ = be.alloc_floats(A, BT * sz(V_));  // logits, then probs, then dlogits (in place)
  losses_ = be.alloc_floats(A, BT);
  dres_ = be.alloc_floats(A, BT * C);
  dC_ = be.alloc_floats(A, BT * C);
  d4C_ = be.alloc_floats(A, BT * 4 * C);
  dqkv_ = be.alloc_floats(A, BT * 3 * C);
  datt_ = be.alloc_floats(A, att);
  dlnf_ = be.alloc_floats(A, BT * C);
}

float* GptModel::new_act(size_t floats) {
  owned_.push_back(be_.alloc_floats(MemCategory::activations, floats));
  return owned_.back().f32();
}

size_t GptModel::activation_floats(const GptConfig& c, int micro_batch, Recompute recompute) {
  const size_t BT = sz(micro_batch) * sz(c.seq), C = sz(c.hidden), L = sz(c.layers);
  const size_t att = sz(c.heads) * sz(c.seq);  // per token
  const size_t layer_all = 16 * C + 4 + att;
  size_t per_token = 12 * C + 3 + sz(c.vocab) + att;
  switch (recompute) {
    case Recompute::none: per_token += L * layer_all; break;
    case Recompute::selective: per_token += L * (15 * C + 4) + (C + att); break;
    case Recompute::full: per_token += L * C + (layer_all - C); break;
  }
  return BT * per_token;
}

void GptModel::layer_forward(int l, const float* p, const float* x) {
  const LayerUnit& u = layout_.layer();
  LayerActs& a = acts_[sz(l)];
  const int BT = B_ * T_, C = C_;
  be_.layernorm_forward(a.ln1, a.ln1_mean, a.ln1_rstd, x, p + u.ln1w,
                        p + u.ln1b, BT, C);
  be_.gemm({false, true, BT, 3 * C, C, a.ln1, p + u.qkvw, a.qkv, 0.0f, p + u.qkvb});
  be_.attention_forward(a.atty, a.att, a.qkv, B_, T_, C, NH_);
  be_.copy(a.res2, x, sz(BT) * sz(C));  // res2 = x + proj(atty)
  be_.gemm({false, true, BT, C, C, a.atty, p + u.projw, a.res2, 1.0f, p + u.projb});
  be_.layernorm_forward(a.ln2, a.ln2_mean, a.ln2_rstd, a.res2,
                        p + u.ln2w, p + u.ln2b, BT, C);
  be_.gemm({false, true, BT, 4 * C, C, a.ln2, p + u.fcw, a.fch, 0.0f, p + u.fcb});
  be_.gelu_forward(a.fch_gelu, a.fch, sz(BT) * 4 * sz(C));
  be_.copy(a.res3, a.res2, sz(BT) * sz(C));  // res3 = res2 + fcproj(gelu)
  be_.gemm({false, true, BT, C, 4 * C, a.fch_gelu, p + u.fcprojw, a.res3, 1.0f,
            p + u.fcprojb});
}

// dres: on entry dL/d(res3), on exit dL/dx (the layer input). Weight gradients accumulate in g.
void GptModel::layer_backward(int l, const float* p, float* g, const float* x, float* dres) {
  const LayerUnit& u = layout_.layer();
  LayerActs& a = acts_[sz(l)];
  const int BT = B_ * T_, C = C_;
  // Recompute what was not kept, from the same inputs with the same ops: bitwise identical.
  if (recompute_ == Recompute::full) layer_forward(l, p, x);
  if (recompute_ == Recompute::selective) be_.attention_forward(a.atty, a.att, a.qkv, B_, T_, C, NH_);
  float* dC = dC_.f32();
  float* d4C = d4C_.f32();
  float* dqkv = dqkv_.f32();
  // MLP: res3 = res2 + gelu(ln2·fcwᵀ + fcb)·fcprojwᵀ + fcprojb
  be_.gemm({false, false, BT, 4 * C, C, dres, p + u.fcprojw, d4C, 0.0f, nullptr});
  // Weight gradients: y = x·Wᵀ with W [out, in]  →  dW += dyᵀ·x, dx = dy·W.
  be_.gemm({true, false, C, 4 * C, BT, dres, a.fch_gelu, g + u.fcprojw, 1.0f, nullptr});
  be_.bias_backward(g + u.fcprojb, dres, BT, C);
  be_.gelu_backward(d4C, a.fch, d4C, sz(BT) * 4 * sz(C));
  be_.gemm({false, false, BT, C, 4 * C, d4C, p + u.fcw, dC, 0.0f, nullptr});
  be_.gemm({true, false, 4 * C, C, BT, d4C, a.ln2, g + u.fcw, 1.0f, nullptr});
  be_.bias_backward(g + u.fcb, d4C, BT, 4 * C);
  be_.layernorm_backward(dres, g + u.ln2w, g + u.ln2b, dC, a.res2, p + u.ln2w,
                         a.ln2_mean, a.ln2_rstd, BT, C);
  // Attention: res2 = x + atty·projwᵀ + projb
  be_.gemm({false, false, BT, C, C, dres, p + u.projw, dC, 0.0f, nullptr});
  be_.gemm({true, false, C, C, BT, dres, a.atty, g + u.projw, 1.0f, nullptr});
  be_.bias_backward(g + u.projb, dres, BT, C);
  be_.attention_backward(dqkv, datt_.f32(), dC, a.qkv, a.att, B_, T_, C, NH_);
  be_.gemm({false, false, BT, C, 3 * C, dqkv, p + u.qkvw, dC, 0.0f, nullptr});
  be_.gemm({true, false, 3 * C, C, BT, dqkv, a.ln1, g + u.qkvw, 1.0f, nullptr});
  be_.bias_backward(g + u.qkvb, dqkv, BT, 3 * C);
  be_.layernorm_backward(dres, g + u.ln1w, g + u.ln1b, dC, x, p + u.ln1w, a.ln1_mean,
                         a.ln1_rstd, BT, C);
}

void GptModel::forward_backward(const int32_t* tokens, const int32_t* targets, UnitHooks& hooks,
                                float dloss, float* loss_sum, bool accumulate) {
  const EmbedUnit& e = layout_.embed();
  const int BT = B_ * T_, C = C_, L = static_cast<int>(acts_.size());
  auto layer_input = [&](int l) { return l == 0 ? encoded_.f32() : acts_[sz(l - 1)].res3; };

  const float* pe = hooks.params(0, ParamUse::embed_forward);
  be_.embedding_forward(encoded_.f32(), tokens, pe + e.wte, pe + e.wpe, B_, T_, C);
  hooks.release(0, ParamUse::embed_forward);
  for (int l = 0; l < L; ++l) {
    layer_forward(l, hooks.params(1 + l, ParamUse::layer_forward), layer_input(l));
    hooks.release(1 + l, ParamUse::layer_forward);
  }

  // Head: final LayerNorm, logits = lnf·wteᵀ (tied), cross-entropy; then its backward.
  const float* ph = hooks.params(0, ParamUse::head);
  const float* last = layer_input(L);
  be_.layernorm_forward(lnf_.f32(), lnf_mean_.f32(), lnf_rstd_.f32(), last, ph + e.lnfw,
                        ph + e.lnfb, BT, C);
  be_.gemm({false, true, BT, V_, C, lnf_.f32(), ph + e.wte, logits_.f32(), 0.0f, nullptr});
  be_.cross_entropy_forward(losses_.f32(), logits_.f32(), logits_.f32(), targets, BT, V_);
  be_.sum(loss_sum, losses_.f32(), sz(BT), accumulate);

  float* ge = hooks.grads_begin(0);
  be_.cross_entropy_backward(logits_.f32(), logits_.f32(), targets, BT, V_, dloss);
  be_.gemm({false, false, BT, C, V_, logits_.f32(), ph + e.wte, dlnf_.f32(), 0.0f, nullptr});
  be_.gemm({true, false, V_, C, BT, logits_.f32(), lnf_.f32(), ge + e.wte, 1.0f, nullptr});
  be_.fill(dres_.f32(), sz(BT) * sz(C), 0.0f);
  be_.layernorm_backward(dres_.f32(), ge + e.lnfw, ge + e.lnfb, dlnf_.f32(), last, ph + e.lnfw,
                         lnf_mean_.f32(), lnf_rstd_.f32(), BT, C);
  hooks.release(0, ParamUse::head);

  for (int l = L - 1; l >= 0; --l) {
    const float* p = hooks.params(1 + l, ParamUse::layer_backward);
    float* g = hooks.grads_begin(1 + l);
    layer_backward(l, p, g, layer_input(l), dres_.f32());
    hooks.grads_end(1 + l);
    hooks.release(1 + l, ParamUse::layer_backward);
  }
  be_.embedding_backward(ge + e.wte, ge + e.wpe, dres_.f32(), tokens, B_, T_, C);
  hooks.grads_end(0);
}

void synthetic_batch(uint64_t seed, int vocab, int T, int64_t first, int count,
                     std::vector<int32_t>& tokens, std::vector<int32_t>& targets) {
  tokens.resize(sz(count) * sz(T));
  targets.resize(sz(count) * sz(T));
  const uint64_t V = static_cast<uint64_t>(vocab);
  for (int s = 0; s < count; ++s) {
    const uint64_t seq = static_cast<uint64_t>(first + s);
    uint64_t tok = counter_hash(seed, seq, 0) % V;
    for (int t = 0; t <= T; ++t) {
      if (t > 0) {
        const uint64_t h = counter_hash(seed, seq, static_cast<uint64_t>(t));
        tok = (h & 7) == 0 ? (h >> 8) % V : (5 * tok + 3) % V;
      }
      const size_t i = sz(s) * sz(T) + sz(t);
      if (t < T) tokens[i] = static_cast<int32_t>(tok);
      if (t > 0) targets[i - 1] = static_cast<int32_t>(tok);
    }
  }
}

}  // namespace gcb::models
