// The shape of one attention problem and its FLOP counts. Plain header (no fmt, no CUDA), shared
// by the CPU references, the CUDA launchers and the benchmark. Layout of Q, K, V, O and their
// gradients: [batch, heads, seq, head_dim], contiguous; LSE and D: [batch, heads, seq] FP32.
#pragma once

#include <cmath>
#include <cstddef>

namespace gcb::kernels::attn {

struct AttnShape {
  int batch = 1, heads = 1, seq = 1, head_dim = 64;
  bool causal = false;  // top-left aligned (s_q = s_k): query i sees keys 0..i

  size_t rows() const { return static_cast<size_t>(batch) * static_cast<size_t>(heads) * static_cast<size_t>(seq); }
  size_t elements() const { return rows() * static_cast<size_t>(head_dim); }
  // Softmax scale 1/sqrt(d) (Vaswani et al.; the default of every SDPA implementation).
  double scale() const { return 1.0 / std::sqrt(static_cast<double>(head_dim)); }
  // Score entries per (batch, head) that the mask leaves: s² or s(s+1)/2.
  double unmasked_per_head() const {
    const auto s = static_cast<double>(seq);
    return causal ? s * (s + 1.0) / 2.0 : s * s;
  }
};

// FlashAttention convention (Dao-AILab/flash-attention benchmarks/benchmark_flash_attention.py):
// forward 4·b·h·s²·d, halved for causal; backward 2.5 × forward; fwd+bwd 3.5 × forward.
inline double fa_forward_flops(const AttnShape& a) {
  const double f = 4.0 * a.batch * a.heads * static_cast<double>(a.seq) * a.seq * a.head_dim;
  return a.causal ? f / 2.0 : f;
}
inline double fa_backward_flops(const AttnShape& a) { return 2.5 * fa_forward_flops(a); }

// Exact counts over the unmasked entries (NVIDIA/cudnn-frontend benchmark_single_sdpa.py):
// forward 2·b·h·N·(d_qk + d_vo) (two GEMMs), backward 2·b·h·N·(3·d_qk + 2·d_vo) (five GEMMs).
inline double exact_forward_flops(const AttnShape& a) {
  return 2.0 * a.batch * a.heads * a.unmasked_per_head() * (2.0 * a.head_dim);
}
inline double exact_backward_flops(const AttnShape& a) {
  return 2.0 * a.batch * a.heads * a.unmasked_per_head() * (5.0 * a.head_dim);
}

// HBM bytes, IO models as in FlashAttention (Dao et al. 2022, arXiv:2205.14135 §3.2); e = element bytes.
// Fused forward, compulsory traffic: Q, K, V read once, O written once, LSE (FP32) written.
inline double fused_forward_bytes(const AttnShape& a, double e) {
  return 4.0 * static_cast<double>(a.elements()) * e + 4.0 * static_cast<double>(a.rows());
}
// Fused backward (FA2): reads Q,K,V,O,dO, LSE, D; writes dQ,dK,dV; preprocess reads O,dO and
// writes D; dQ accumulates in FP32 once per column block (mostly L2) and is converted at the end.
inline double fused_backward_bytes(const AttnShape& a, double e, int block_cols) {
  const auto n = static_cast<double>(a.elements()), r = static_cast<double>(a.rows());
  const double col_blocks = std::ceil(static_cast<double>(a.seq) / block_cols);
  return 8.0 * n * e + 2.0 * 4.0 * r + (2.0 * n * e + 4.0 * r) + 4.0 * n * col_blocks + (4.0 * n + 2.0 * n * e);
}
// Unfused forward: e·(4sd + 4s²) per (b,h): S written, softmax reads and writes it, PV reads P.
inline double unfused_forward_bytes(const AttnShape& a, double e) {
  const double bh = static_cast<double>(a.batch) * a.heads, s = a.seq, d = a.head_dim;
  return bh * e * (4.0 * s * d + 4.0 * s * s);
}
// The b·h·s×s score matrix the unfused path holds in HBM (one buffer, reused for P in place).
inline double unfused_score_bytes(const AttnShape& a, double e) {
  return static_cast<double>(a.batch) * a.heads * static_cast<double>(a.seq) * a.seq * e;
}

}  // namespace gcb::kernels::attn
