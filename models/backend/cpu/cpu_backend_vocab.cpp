// CpuBackend ops over a vocabulary shard: the embedding and the softmax cross-entropy, which run on
// the whole vocabulary at tp = 1 and on rows [v0, v0 + V) of the tied wte under Megatron's
// vocabulary parallelism (Shoeybi et al. 2019 §3). Same rules as cpu_backend.cpp: one thread per
// output row, reductions over rows serial per column, so results do not depend on the thread count.
#include <cmath>
#include <cstddef>

#include "models/backend/cpu/cpu_backend.hpp"
#include "models/backend/cpu/cpu_fp32_io.hpp"

namespace gcb::models {
namespace {

constexpr long kParallelMin = 1 << 14;
using Mode = Fp32Output::Mode;
size_t at(int r, int V) { return static_cast<size_t>(r) * static_cast<size_t>(V); }
bool in_range(int32_t tok, int v0, int V) { return tok >= v0 && tok < v0 + V; }

}  // namespace

void CpuBackend::embedding_forward(View out, const int32_t* tokens, View wte, int v0, int V, View wpe, int B, int T,
                                   int C) {
  const Fp32Input E(wte, at(V, C)), P(wpe, at(T, C));
  Fp32Output O(out, at(B * T, C), Mode::overwrite);
  for (int b = 0; b < B; ++b) {
    for (int t = 0; t < T; ++t) {
      float* o = O.get() + at(b * T + t, C);
      const int32_t tok = tokens[b * T + t];
      const float* e = in_range(tok, v0, V) ? E.get() + at(tok - v0, C) : nullptr;
      const float* p = P.get() != nullptr ? P.get() + at(t, C) : nullptr;
      for (int i = 0; i < C; ++i) o[i] = (e != nullptr ? e[i] : 0.0f) + (p != nullptr ? p[i] : 0.0f);
    }
  }
  O.commit();
}

void CpuBackend::embedding_backward(View dwte, View dwpe, View dout, const int32_t* tokens, int v0, int V, int B, int T,
                                    int C) {
  const Fp32Input D(dout, at(B * T, C));
  Fp32Output DE(dwte, at(V, C), Mode::accumulate), DP(dwpe, at(T, C), Mode::accumulate);
  for (int b = 0; b < B; ++b) {
    for (int t = 0; t < T; ++t) {
      const float* d = D.get() + at(b * T + t, C);
      const int32_t tok = tokens[b * T + t];
      if (in_range(tok, v0, V)) {
        float* de = DE.get() + at(tok - v0, C);
        for (int i = 0; i < C; ++i) de[i] += d[i];
      }
      if (DP.get() != nullptr) {
        float* dp = DP.get() + at(t, C);
        for (int i = 0; i < C; ++i) dp[i] += d[i];
      }
    }
  }
  DE.commit();
  DP.commit();
}

void CpuBackend::cross_entropy_max(float* rowmax, View logits, int rows, int V, int valid) {
  const Fp32Input L(logits, at(rows, V));
#pragma omp parallel for if (static_cast <long>(rows) * V > kParallelMin)
  for (int r = 0; r < rows; ++r) {
    const float* l = L.get() + at(r, V);
    float m = -INFINITY;
    for (int i = 0; i < valid; ++i) m = std::fmax(m, l[i]);
    rowmax[r] = m;
  }
}

void CpuBackend::cross_entropy_sums(float* stats, View logits, const float* rowmax, const int32_t* targets, int v0,
                                    int rows, int V, int valid) {
  const Fp32Input L(logits, at(rows, V));
#pragma omp parallel for if (static_cast <long>(rows) * V > kParallelMin)
  for (int r = 0; r < rows; ++r) {
    const float* l = L.get() + at(r, V);
    float s = 0.0f;
    for (int i = 0; i < valid; ++i) s += std::exp(l[i] - rowmax[r]);
    stats[2 * r] = s;
    stats[2 * r + 1] = in_range(targets[r], v0, V) ? l[targets[r] - v0] : 0.0f;
  }
}

void CpuBackend::cross_entropy_finish(float* losses, View probs, View logits, const float* rowmax, const float* stats,
                                      int rows, int V, int valid) {
  const Fp32Input L(logits, at(rows, V));
  Fp32Output P(probs, at(rows, V), Mode::overwrite);
#pragma omp parallel for if (static_cast <long>(rows) * V > kParallelMin)
  for (int r = 0; r < rows; ++r) {
    const float* l = L.get() + at(r, V);
    float* p = P.get() + at(r, V);
    const float sum = stats[2 * r], inv = 1.0f / sum;
    // log Σ exp(l − max) − (l_target − max): Σexp ≥ 1 (the maximum contributes exp(0)), so the
    // loss is finite however far the target logit lies below the maximum; −log(p_target) would
    // underflow p to 0 and give +inf beyond ~104 nats.
    losses[r] = std::log(sum) - (stats[2 * r + 1] - rowmax[r]);
    for (int i = 0; i < valid; ++i) p[i] = std::exp(l[i] - rowmax[r]) * inv;
    for (int i = valid; i < V; ++i) p[i] = 0.0f;
  }
  P.commit();
}

void CpuBackend::cross_entropy_backward(View dlogits, View probs, const int32_t* targets, int v0, int rows, int V,
                                        float dloss) {
  const Fp32Input P(probs, at(rows, V));
  Fp32Output D(dlogits, at(rows, V), Mode::overwrite);
#pragma omp parallel for if (static_cast <long>(rows) * V > kParallelMin)
  for (int r = 0; r < rows; ++r) {
    const float* p = P.get() + at(r, V);
    float* d = D.get() + at(r, V);
    const int hit = in_range(targets[r], v0, V) ? targets[r] - v0 : -1;
    for (int i = 0; i < V; ++i) d[i] = (p[i] - (i == hit ? 1.0f : 0.0f)) * dloss;
  }
  D.commit();
}

}  // namespace gcb::models
