// CpuBackend attention: FlashAttention-2 on the CPU by running the tiled reference of our GPU
// kernels (kernels/attention/attention_ref.hpp: the same Br × Bc tiles, online softmax in the
// log2 domain, P recomputed from the saved LSE in backward) on each (sequence, head) of the fused
// qkv layout. The per-head copies into the reference's [seq, head_dim] layout are host scratch.
#include <cstddef>
#include <vector>

#include "kernels/attention/attention_ref.hpp"
#include "kernels/attention/flash_attn.hpp"
#include "kernels/attention/flash_tiling.hpp"
#include "models/backend/cpu/cpu_backend.hpp"
#include "models/backend/cpu/cpu_fp32_io.hpp"

namespace gcb::models {
namespace {

namespace attn = gcb::kernels::attn;
using Mode = Fp32Output::Mode;

// Where row t of head h of sequence b starts in a [B, T, width] tensor (width = 3C for qkv).
size_t row(int b, int t, int T, int width) {
  return (static_cast<size_t>(b) * static_cast<size_t>(T) + static_cast<size_t>(t)) * static_cast<size_t>(width);
}

// Copies head h of sequence b, columns [col, col + hs) of a [B,T,width] tensor, to [T, hs].
void gather_head(float* dst, const float* src, int b, int T, int width, size_t col, int hs) {
  for (int t = 0; t < T; ++t)
    for (int e = 0; e < hs; ++e)
      dst[static_cast<size_t>(t) * static_cast<size_t>(hs) + static_cast<size_t>(e)] =
          src[row(b, t, T, width) + col + static_cast<size_t>(e)];
}
void scatter_head(float* dst, const float* src, int b, int T, int width, size_t col, int hs) {
  for (int t = 0; t < T; ++t)
    for (int e = 0; e < hs; ++e)
      dst[row(b, t, T, width) + col + static_cast<size_t>(e)] =
          src[static_cast<size_t>(t) * static_cast<size_t>(hs) + static_cast<size_t>(e)];
}

attn::AttnShape head_shape(int T, int hs) {
  attn::AttnShape a;
  a.batch = 1;
  a.heads = 1;
  a.seq = T;
  a.head_dim = hs;
  a.causal = true;
  return a;
}

}  // namespace

void CpuBackend::attention_forward(View out, float* lse, View qkv, int B, int T, int C, int NH) {
  const int hs = C / NH;
  const size_t C3 = 3 * static_cast<size_t>(C);
  const Fp32Input X(qkv, row(B, 0, T, 3 * C));
  Fp32Output O(out, row(B, 0, T, C), Mode::overwrite);
  const attn::AttnShape shape = head_shape(T, hs);
  const size_t n = static_cast<size_t>(T) * static_cast<size_t>(hs);
  // One (sequence, head) per thread: disjoint columns of out, disjoint rows of lse.
#pragma omp parallel for collapse(2) if (static_cast <long>(B) * NH * T * T > (1L << 14))
  for (int b = 0; b < B; ++b) {
    for (int h = 0; h < NH; ++h) {
      std::vector<float> q(n), k(n), v(n), o(n);
      const size_t col = static_cast<size_t>(h) * static_cast<size_t>(hs);
      gather_head(q.data(), X.get(), b, T, static_cast<int>(C3), col, hs);
      gather_head(k.data(), X.get(), b, T, static_cast<int>(C3), col + static_cast<size_t>(C), hs);
      gather_head(v.data(), X.get(), b, T, static_cast<int>(C3), col + 2 * static_cast<size_t>(C), hs);
      float* l =
          lse + (static_cast<size_t>(b) * static_cast<size_t>(NH) + static_cast<size_t>(h)) * static_cast<size_t>(T);
      attn::tiled_forward(shape, attn::forward_tiles(hs), q.data(), k.data(), v.data(), o.data(), l);
      scatter_head(O.get(), o.data(), b, T, C, col, hs);
    }
  }
  O.commit();
}

void CpuBackend::attention_backward(View dqkv, View dout, View qkv, View out, const float* lse, int B, int T, int C,
                                    int NH) {
  const int hs = C / NH;
  const int C3 = 3 * C;
  const Fp32Input X(qkv, row(B, 0, T, C3)), Y(out, row(B, 0, T, C)), DY(dout, row(B, 0, T, C));
  Fp32Output DX(dqkv, row(B, 0, T, C3), Mode::overwrite);
  const attn::AttnShape shape = head_shape(T, hs);
  const size_t n = static_cast<size_t>(T) * static_cast<size_t>(hs);
#pragma omp parallel for collapse(2) if (static_cast <long>(B) * NH * T * T > (1L << 14))
  for (int b = 0; b < B; ++b) {
    for (int h = 0; h < NH; ++h) {
      std::vector<float> q(n), k(n), v(n), o(n), d_o(n), dq(n), dk(n), dv(n);
      const size_t col = static_cast<size_t>(h) * static_cast<size_t>(hs);
      gather_head(q.data(), X.get(), b, T, C3, col, hs);
      gather_head(k.data(), X.get(), b, T, C3, col + static_cast<size_t>(C), hs);
      gather_head(v.data(), X.get(), b, T, C3, col + 2 * static_cast<size_t>(C), hs);
      gather_head(o.data(), Y.get(), b, T, C, col, hs);
      gather_head(d_o.data(), DY.get(), b, T, C, col, hs);
      const float* l =
          lse + (static_cast<size_t>(b) * static_cast<size_t>(NH) + static_cast<size_t>(h)) * static_cast<size_t>(T);
      attn::tiled_backward(shape, attn::backward_tiles(hs), q.data(), k.data(), v.data(), o.data(), d_o.data(), l,
                           dq.data(), dk.data(), dv.data());
      scatter_head(DX.get(), dq.data(), b, T, C3, col, hs);
      scatter_head(DX.get(), dk.data(), b, T, C3, col + static_cast<size_t>(C), hs);
      scatter_head(DX.get(), dv.data(), b, T, C3, col + 2 * static_cast<size_t>(C), hs);
    }
  }
  DX.commit();
}

}  // namespace gcb::models
