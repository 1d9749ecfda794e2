// Activations (activations.hpp): one rank's activation memory — a Slot per micro-batch in flight, scratch shared by the
// layers and the head's buffers — allocated from the backend in the training dtype.
#include "models/engine/activations.hpp"

#include "core/size.hpp"

namespace gcb::models {

// Unset (AllocInit): every activation, saved tensor and scratch buffer is written by the op that
// produces it before any op reads it; the one accumulation into activation memory, the residual
// gradient's `dx +=` of layernorm_backward, goes into slot.dout, which the head fills with zeros
// or a pipeline receive writes first (gpt_layers.cpp).
View Activations::tensor(size_t count) {
  owned_.push_back(be_.alloc(MemCategory::activations, dtype_, count, AllocInit::unset));
  return owned_.back().view();
}

float* Activations::floats(size_t count) {
  owned_.push_back(be_.alloc(MemCategory::activations, DType::f32, count, AllocInit::unset));
  return owned_.back().f32();
}

Activations::Activations(Backend& be, const RankShape& s, Recompute recompute, DType dtype, bool offload)
    : be_(be), dtype_(dtype) {
  const size_t R = sz(s.R), Rs = sz(s.Rs), C = sz(s.C), Cl = sz(s.Cl);
  const size_t lse = R * sz(s.heads);  // B·NH_l·T
  const bool full = recompute == Recompute::full;
  const bool core_shared = recompute != Recompute::none;
  // A tensor per layer, or one set that recomputation refills, shared by every slot: under full
  // recomputation in blocks of K layers one set per position in the block (K sets), so that a
  // block's rerun forward holds all its layers at once (train_options.hpp Recompute), else one.
  std::vector<LayerActs> shared(sz(full ? s.recompute_block : 1));
  // --offload activations: the two device working sets, and the layer's (see the header).
  LayerActs work[2]{};
  LayerActs* working = nullptr;
  std::vector<Swap>* swaps = nullptr;
  // A tensor a slot keeps: its own on the device, or under offload the working set's with a host
  // copy of this slot and layer to swap through.
  auto host_copy = [&](void* device, DType t, size_t n) {
    owned_.push_back(be_.alloc_host(MemCategory::activations, t, n));
    swaps->push_back({device, owned_.back().data(), n * dtype_size(t)});
  };
  auto view = [&](bool share, LayerActs& set, View LayerActs::*field, size_t n) {
    LayerActs* in = share ? &set : working;
    if (in == nullptr) return tensor(n);
    if (!(in->*field)) in->*field = tensor(n);
    if (!share) host_copy((in->*field).data, dtype_, n);
    return in->*field;
  };
  auto stat = [&](bool share, LayerActs& set, float* LayerActs::*field, size_t n) {
    LayerActs* in = share ? &set : working;
    if (in == nullptr) return floats(n);
    if (in->*field == nullptr) in->*field = floats(n);
    if (!share) host_copy(in->*field, DType::f32, n);
    return in->*field;
  };
  slots_.resize(sz(s.slots));
  for (Slot& slot : slots_) {
    slot.x = tensor(Rs * C);
    slot.dout = tensor(Rs * C);
    slot.layers.resize(sz(s.stage_layers));
    if (offload) slot.swaps.resize(sz(s.stage_layers));
    int swapping = 0;  // layers below that keep something on the host: picks the working set
    for (int l = 0; l < s.stage_layers; ++l) {
      LayerActs& a = slot.layers[sz(l)];
      LayerActs& set = shared[full ? sz(l % s.recompute_block) : 0];
      const bool top = l == s.stage_layers - 1;  // its res3 is the stage output: on the device per slot
      if (offload) {
        working = &work[swapping % 2];
        swaps = &slot.swaps[sz(l)];
      }
      a.ln1 = view(full, set, &LayerActs::ln1, Rs * C);
      a.ln1_mean = stat(full, set, &LayerActs::ln1_mean, Rs);
      a.ln1_rstd = stat(full, set, &LayerActs::ln1_rstd, Rs);
      a.qkv = view(full, set, &LayerActs::qkv, R * 3 * Cl);
      a.atty = view(core_shared, set, &LayerActs::atty, R * Cl);
      a.lse = stat(core_shared, set, &LayerActs::lse, lse);
      a.res2 = view(full, set, &LayerActs::res2, Rs * C);
      a.ln2 = view(full, set, &LayerActs::ln2, Rs * C);
      a.ln2_mean = stat(full, set, &LayerActs::ln2_mean, Rs);
      a.ln2_rstd = stat(full, set, &LayerActs::ln2_rstd, Rs);
      a.fch = view(full, set, &LayerActs::fch, R * 4 * Cl);
      a.fch_gelu = view(full, set, &LayerActs::fch_gelu, R * 4 * Cl);
      // The output: kept per slot where it leaves a block (always without blocks), else in the
      // shared set of its position (inside a block it is only the next layer's input).
      if (top) working = nullptr;
      a.res3 = view(full && !s.block_end(l), set, &LayerActs::res3, Rs * C);
      if (offload && !slot.swaps[sz(l)].empty()) ++swapping;
      working = nullptr;
    }
  }
  LayerScratch& k = scratch_;
  if (s.tp > 1) k.partial = tensor(R * C);
  k.dC = tensor(Rs * C);
  k.dCl = tensor(R * Cl);
  k.d4C = tensor(R * 4 * Cl);
  k.dqkv = tensor(R * 3 * Cl);
  if (s.sp) {
    k.gathered = tensor(R * C);
    k.ln1_full = tensor(R * C);
    k.ln2_full = tensor(R * C);
  }
  if (s.last) {
    HeadActs& h = head_;
    h.lnf = tensor(Rs * C);
    h.lnf_mean = floats(Rs);
    h.lnf_rstd = floats(Rs);
    h.lnf_full = s.sp ? tensor(R * C) : h.lnf;
    h.logits = tensor(sz(s.Rh) * sz(s.Vl));  // one chunk of rows (gpt_layers.hpp head())
    h.losses = floats(R);
    h.rowmax = floats(R);
    h.ce_stats = floats(2 * R);
    h.dlnf = tensor(Rs * C);
  }
}

}  // namespace gcb::models

namespace gcb::models {

void Activations::swap_out(int micro_batch, int l) {
  for (const Swap& w : slot(micro_batch).swaps[sz(l)]) {
    be_.copy_to_host(w.host, w.device, w.bytes);
    swapped_.d2h += w.bytes;
  }
}

void Activations::swap_in(int micro_batch, int l) {
  for (const Swap& w : slot(micro_batch).swaps[sz(l)]) {
    be_.copy_from_host(w.device, w.host, w.bytes);
    swapped_.h2d += w.bytes;
  }
}

}  // namespace gcb::models
