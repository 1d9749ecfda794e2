// CpuBackend ops for tensor parallelism: vocabulary-parallel embedding and cross-entropy
// (Megatron-LM, Shoeybi et al. 2019 §3; ../shared/reference/training.md §2). Same rules as
// cpu_backend.cpp: one thread per output row, reductions over rows serial per column, so results
// do not depend on the thread count.
#include <cmath>
#include <cstddef>

#include "models/cpu_backend.hpp"

namespace gcb::models {
namespace {

constexpr long kParallelMin = 1 << 14;
size_t at(int r, int V) { return static_cast<size_t>(r) * static_cast<size_t>(V); }
bool in_range(int32_t tok, int v0, int V) { return tok >= v0 && tok < v0 + V; }

}  // namespace

void CpuBackend::embedding_forward_vocab(float* out, const int32_t* tokens, const float* wte,
                                         int v0, int V, const float* wpe, int B, int T, int C) {
  for (int b = 0; b < B; ++b) {
    for (int t = 0; t < T; ++t) {
      float* o = out + at(b * T + t, C);
      const int32_t tok = tokens[b * T + t];
      const float* e = in_range(tok, v0, V) ? wte + at(tok - v0, C) : nullptr;
      const float* p = wpe != nullptr ? wpe + at(t, C) : nullptr;
      for (int i = 0; i < C; ++i) {
        o[i] = (e != nullptr ? e[i] : 0.0f) + (p != nullptr ? p[i] : 0.0f);
      }
    }
  }
}

void CpuBackend::embedding_backward_vocab(float* dwte, float* dwpe, const float* dout,
                                          const int32_t* tokens, int v0, int V, int B, int T,
                                          int C) {
  for (int b = 0; b < B; ++b) {
    for (int t = 0; t < T; ++t) {
      const float* d = dout + at(b * T + t, C);
      const int32_t tok = tokens[b * T + t];
      if (in_range(tok, v0, V)) {
        float* de = dwte + at(tok - v0, C);
        for (int i = 0; i < C; ++i) de[i] += d[i];
      }
      if (dwpe != nullptr) {
        float* dp = dwpe + at(t, C);
        for (int i = 0; i < C; ++i) dp[i] += d[i];
      }
    }
  }
}

void CpuBackend::vocab_ce_max(float* rowmax, const float* logits, int rows, int V) {
#pragma omp parallel for if (static_cast<long>(rows) * V > kParallelMin)
  for (int r = 0; r < rows; ++r) {
    const float* l = logits + at(r, V);
    float m = -INFINITY;
    for (int i = 0; i < V; ++i) m = std::fmax(m, l[i]);
    rowmax[r] = m;
  }
}

void CpuBackend::vocab_ce_sumexp(float* stats, const float* logits, const float* rowmax,
                                 const int32_t* targets, int v0, int rows, int V) {
#pragma omp parallel for if (static_cast<long>(rows) * V > kParallelMin)
  for (int r = 0; r < rows; ++r) {
    const float* l = logits + at(r, V);
    float s = 0.0f;
    for (int i = 0; i < V; ++i) s += std::exp(l[i] - rowmax[r]);
    stats[2 * r] = s;
    stats[2 * r + 1] = in_range(targets[r], v0, V) ? l[targets[r] - v0] : 0.0f;
  }
}

void CpuBackend::vocab_ce_finish(float* losses, float* probs, const float* logits,
                                 const float* rowmax, const float* stats, int rows, int V) {
#pragma omp parallel for if (static_cast<long>(rows) * V > kParallelMin)
  for (int r = 0; r < rows; ++r) {
    const float* l = logits + at(r, V);
    float* p = probs + at(r, V);
    const float sum = stats[2 * r], inv = 1.0f / sum;
    losses[r] = std::log(sum) - (stats[2 * r + 1] - rowmax[r]);
    for (int i = 0; i < V; ++i) p[i] = std::exp(l[i] - rowmax[r]) * inv;
  }
}

void CpuBackend::vocab_ce_backward(float* dlogits, const float* probs, const int32_t* targets,
                                   int v0, int rows, int V, float dloss) {
#pragma omp parallel for if (static_cast<long>(rows) * V > kParallelMin)
  for (int r = 0; r < rows; ++r) {
    const float* p = probs + at(r, V);
    float* d = dlogits + at(r, V);
    const int hit = in_range(targets[r], v0, V) ? targets[r] - v0 : -1;
    for (int i = 0; i < V; ++i) d[i] = (p[i] - (i == hit ? 1.0f : 0.0f)) * dloss;
  }
}

}  // namespace gcb::models
