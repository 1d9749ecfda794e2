// GptLayers (gpt_layers.hpp): the GPT-2 forward and backward on Backend ops — embed_forward, layer_forward,
// layer_backward, head (final LayerNorm, tied LM head, cross-entropy), embed_backward — after llm.c train_gpt2.c.
#include "models/engine/gpt_layers.hpp"

#include <algorithm>

#include "core/size.hpp"

namespace gcb::models {

GptLayers::GptLayers(Backend& be, TpComm& tp, const RankShape& shape, const RankUnits& units, Recompute recompute,
                     Activations& acts)
    : be_(be), tp_(tp), shape_(shape), units_(units), recompute_(recompute), acts_(acts) {}

void GptLayers::embed_forward(Slot& s, const int32_t* tokens, View params) {
  const LocalEmbed& e = units_.embed();
  const RankShape& d = shape_;
  const View into = reduce_target(s.x);
  be_.embedding_forward(into, tokens, params.at(e.wte), d.v0, d.Vl, d.tp_rank == 0 ? params.at(e.wpe) : View{}, d.B,
                        d.T, d.C);
  tp_.reduce_rows(s.x, into);
}

void GptLayers::layer_forward(Slot& s, int l, View p) {
  const LocalLayer& u = units_.layer();
  const RankShape& d = shape_;
  const LayerScratch& k = acts_.scratch();
  LayerActs& a = s.layers[sz(l)];
  const View x = layer_input(s, l);
  const int R = d.R, C = d.C, Cl = d.Cl;
  const size_t residual = sz(d.Rs) * sz(C);
  const View bias_once = d.tp_rank == 0 ? p : View{};  // row-parallel biases: added by one rank
  // Attention: res2 = x + proj(attention(qkv(ln1(x)))).
  be_.layernorm_forward(a.ln1, a.ln1_mean, a.ln1_rstd, x, p.at(u.ln1w), p.at(u.ln1b), d.Rs, C);
  const View in1 = tp_.gather_rows(k.ln1_full, a.ln1);
  be_.gemm({false, true, R, 3 * Cl, C, in1, p.at(u.qkvw), a.qkv, 0.0f, p.at(u.qkvb)});
  be_.attention_forward(a.atty, a.lse, a.qkv, d.B, d.T, Cl, d.heads);
  View into = reduce_target(a.res2);
  be_.gemm({false, true, R, C, Cl, a.atty, p.at(u.projw), into, 0.0f, bias_once ? bias_once.at(u.projb) : View{}});
  tp_.reduce_rows(a.res2, into);
  be_.add(a.res2, a.res2, x, residual);
  // MLP: res3 = res2 + fcproj(gelu(fc(ln2(res2)))).
  be_.layernorm_forward(a.ln2, a.ln2_mean, a.ln2_rstd, a.res2, p.at(u.ln2w), p.at(u.ln2b), d.Rs, C);
  const View in2 = tp_.gather_rows(k.ln2_full, a.ln2);
  be_.gemm({false, true, R, 4 * Cl, C, in2, p.at(u.fcw), a.fch_gelu, 0.0f, p.at(u.fcb), GemmGelu::forward, a.fch});
  into = reduce_target(a.res3);
  be_.gemm({false, true, R, C, 4 * Cl, a.fch_gelu, p.at(u.fcprojw), into, 0.0f,
            bias_once ? bias_once.at(u.fcprojb) : View{}});
  tp_.reduce_rows(a.res3, into);
  be_.add(a.res3, a.res3, a.res2, residual);
}

// Weight gradients of y = x·Wᵀ with W [out, in]: dW += dyᵀ·x; input gradient dx = dy·W.
void GptLayers::layer_backward(Slot& s, int l, View p, View g) {
  const LocalLayer& u = units_.layer();
  const RankShape& d = shape_;
  const LayerScratch& k = acts_.scratch();
  LayerActs& a = s.layers[sz(l)];
  const View x = layer_input(s, l);
  const View dres = s.dout;
  const int R = d.R, C = d.C, Cl = d.Cl;
  // Recompute what was not kept, from the same inputs with the same ops: bitwise identical. Full
  // recomputation reruns the block's forward before its last layer's backward (engine.cpp).
  if (recompute_ == Recompute::selective) be_.attention_forward(a.atty, a.lse, a.qkv, d.B, d.T, Cl, d.heads);
  // MLP.
  View dr = tp_.gather_rows(k.gathered, dres);
  be_.gemm({false, false, R, 4 * Cl, C, dr, p.at(u.fcprojw), k.d4C, 0.0f, {}, GemmGelu::backward, a.fch});
  const View in2 = tp_.gather_rows(k.ln2_full, a.ln2);  // SP: gathered again, not kept
  be_.gemm({true, false, C, 4 * Cl, R, dr, a.fch_gelu, g.at(u.fcprojw), 1.0f, {}});
  be_.bias_backward(g.at(u.fcprojb), dres, d.Rs, C);
  View into = reduce_target(k.dC);
  be_.gemm({false, false, R, C, 4 * Cl, k.d4C, p.at(u.fcw), into, 0.0f, {}});
  be_.gemm({true, false, 4 * Cl, C, R, k.d4C, in2, g.at(u.fcw), 1.0f, {}});
  be_.bias_backward(g.at(u.fcb), k.d4C, R, 4 * Cl);
  tp_.reduce_rows(k.dC, into);
  be_.layernorm_backward(dres, g.at(u.ln2w), g.at(u.ln2b), k.dC, a.res2, p.at(u.ln2w), a.ln2_mean, a.ln2_rstd, d.Rs, C);
  // Attention.
  dr = tp_.gather_rows(k.gathered, dres);
  be_.gemm({false, false, R, Cl, C, dr, p.at(u.projw), k.dCl, 0.0f, {}});
  be_.gemm({true, false, C, Cl, R, dr, a.atty, g.at(u.projw), 1.0f, {}});
  be_.bias_backward(g.at(u.projb), dres, d.Rs, C);
  be_.attention_backward(k.dqkv, k.dCl, a.qkv, a.atty, a.lse, d.B, d.T, Cl, d.heads);
  const View in1 = tp_.gather_rows(k.ln1_full, a.ln1);
  into = reduce_target(k.dC);
  be_.gemm({false, false, R, C, 3 * Cl, k.dqkv, p.at(u.qkvw), into, 0.0f, {}});
  be_.gemm({true, false, 3 * Cl, C, R, k.dqkv, in1, g.at(u.qkvw), 1.0f, {}});
  be_.bias_backward(g.at(u.qkvb), k.dqkv, R, 3 * Cl);
  tp_.reduce_rows(k.dC, into);
  be_.layernorm_backward(dres, g.at(u.ln1w), g.at(u.ln1b), k.dC, x, p.at(u.ln1w), a.ln1_mean, a.ln1_rstd, d.Rs, C);
}

void GptLayers::head(Slot& s, const int32_t* targets, View p, View g, View loss_sum, bool accumulate, float dloss) {
  const LocalEmbed& e = units_.embed();
  const RankShape& d = shape_;
  const HeadActs& h = acts_.head();
  const View last = layer_input(s, d.stage_layers);
  const int R = d.R, C = d.C, Vl = d.Vl;
  be_.layernorm_forward(h.lnf, h.lnf_mean, h.lnf_rstd, last, p.at(e.lnfw), p.at(e.lnfb), d.Rs, C);
  const View in = tp_.gather_rows(h.lnf_full, h.lnf);
  const View into = reduce_target(h.dlnf);
  // Rows [r0, r0 + n) at a time (all R unless o.logit_rows chunks the head): logits = lnf·wteᵀ
  // (tied), cross-entropy over the vocabulary shards (all-reduced row maxima, then {Σexp, target
  // logit}: NVIDIA/Megatron-LM megatron/core/tensor_parallel/cross_entropy.py), the losses and the
  // logits' gradient in their place (finish and backward in one op: karpathy/llm.c
  // llmc/fused_classifier.cuh), then the chunk's input gradient and its share of wte's gradient,
  // before the next chunk reuses the logits buffer — the row chunks of a fused linear +
  // cross-entropy (linkedin/Liger-Kernel src/liger_kernel/ops/fused_linear_cross_entropy.py). Rows
  // are independent until wte's gradient, which sums them chunk by chunk.
  for (int r0 = 0; r0 < R; r0 += d.Rh) {
    const int n = std::min(d.Rh, R - r0);
    const size_t o = sz(r0);
    float* rowmax = h.rowmax + o;
    float* stats = h.ce_stats + 2 * o;
    const int32_t* tgt = targets + o;
    be_.gemm({false, true, n, Vl, C, in.at(o * sz(C)), p.at(e.wte), h.logits, 0.0f, {}});
    be_.cross_entropy_max(rowmax, h.logits, n, Vl, d.Vreal);
    tp_.all_reduce({rowmax, DType::f32}, sz(n), ReduceOp::max);
    be_.cross_entropy_sums(stats, h.logits, rowmax, tgt, d.v0, n, Vl, d.Vreal);
    tp_.all_reduce({stats, DType::f32}, 2 * sz(n), ReduceOp::sum);
    be_.cross_entropy_finish_backward(h.losses + o, h.logits, h.logits, rowmax, stats, tgt, d.v0, n, Vl, d.Vreal,
                                      dloss);
    be_.gemm({false, false, n, C, Vl, h.logits, p.at(e.wte), into.at(o * sz(C)), 0.0f, {}});
    be_.gemm({true, false, Vl, C, n, h.logits, in.at(o * sz(C)), g.at(e.wte), 1.0f, {}});
  }
  be_.sum(loss_sum, {h.losses, DType::f32}, sz(R), accumulate);
  // dL/d(last) into slot.dout.
  tp_.reduce_rows(h.dlnf, into);
  be_.fill(s.dout, sz(d.Rs) * sz(C), 0.0f);
  be_.layernorm_backward(s.dout, g.at(e.lnfw), g.at(e.lnfb), h.dlnf, last, p.at(e.lnfw), h.lnf_mean, h.lnf_rstd, d.Rs,
                         C);
}

void GptLayers::embed_backward(Slot& s, const int32_t* tokens, View g) {
  const LocalEmbed& e = units_.embed();
  const RankShape& d = shape_;
  const View dr = tp_.gather_rows(acts_.scratch().gathered, s.dout);
  be_.embedding_backward(g.at(e.wte), g.at(e.wpe), dr, tokens, d.v0, d.Vl, d.B, d.T, d.C);
}

}  // namespace gcb::models
