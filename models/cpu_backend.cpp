// CpuBackend ops. Each output element is computed by one thread in a fixed order, and every
// reduction over rows runs serially per column, so results are bitwise independent of the thread
// count — the property the "layout run twice is bitwise identical" tests rely on.
// Forward/backward formulas follow llm.c train_gpt2.c (../shared/reference/training.md §1.1).
#include "models/cpu_backend.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "core/error.hpp"
#include "models/init_rng.hpp"

namespace gcb::models {
namespace {

constexpr float kLayerNormEps = 1e-5f;
constexpr float kGeluScale = 0.7978845608028654f;  // sqrt(2/π)
// Below this many elements a parallel region costs more than it saves.
constexpr long kParallelMin = 1 << 14;

}  // namespace

void* CpuBackend::raw_alloc(size_t bytes) {
  // 64-byte alignment for vector loads; zeroed, as Backend::alloc promises.
  const size_t rounded = std::max<size_t>(64, (bytes + 63) / 64 * 64);
  void* p = std::aligned_alloc(64, rounded);
  GCB_CHECK(p != nullptr, "CpuBackend: out of host memory");
  std::memset(p, 0, rounded);
  return p;
}

void CpuBackend::raw_free(void* p) { std::free(p); }

void CpuBackend::copy_to_host(void* host_dst, const void* src, size_t bytes) {
  std::memcpy(host_dst, src, bytes);
}
void CpuBackend::copy_from_host(void* dst, const void* host_src, size_t bytes) {
  std::memcpy(dst, host_src, bytes);
}

void CpuBackend::fill(float* x, size_t n, float value) { std::fill(x, x + n, value); }
void CpuBackend::copy(float* dst, const float* src, size_t n) { std::memmove(dst, src, n * sizeof(float)); }
void CpuBackend::add(float* out, const float* a, const float* b, size_t n) {
#pragma omp parallel for if (static_cast<long>(n) > kParallelMin)
  for (size_t i = 0; i < n; ++i) out[i] = a[i] + b[i];
}
void CpuBackend::scale(float* x, float s, size_t n) {
  for (size_t i = 0; i < n; ++i) x[i] *= s;
}

void CpuBackend::cast(void* dst, DType dst_type, const void* src, DType src_type, size_t n) {
  auto ok = [](DType t) { return t == DType::f32 || t == DType::f16 || t == DType::bf16; };
  GCB_CHECK(ok(dst_type) && ok(src_type), "CpuBackend::cast supports fp32, fp16 and bf16");
  for (size_t i = 0; i < n; ++i) store_as(dst_type, dst, i, load_as(src_type, src, i));
}

void CpuBackend::init_normal(float* x, size_t n, uint64_t seed, uint64_t stream,
                             uint64_t first_index, float std) {
#pragma omp parallel for if (static_cast<long>(n) > kParallelMin)
  for (size_t i = 0; i < n; ++i) x[i] = std * counter_normal(seed, stream, first_index + i);
}

void CpuBackend::sum(float* out, const float* in, size_t n, bool accumulate) {
  float s = accumulate ? out[0] : 0.0f;
  for (size_t i = 0; i < n; ++i) s += in[i];
  out[0] = s;
}

void CpuBackend::gemm(const GemmArgs& a) {
  const SpanScope span(phase_timer(), "matmul");
  cpu_sgemm(a.trans_a, a.trans_b, a.M, a.N, a.K, a.A, a.B, a.C, a.beta);
  if (a.bias != nullptr) {
#pragma omp parallel for if (static_cast<long>(a.M) * a.N > kParallelMin)
    for (int i = 0; i < a.M; ++i) {
      float* row = a.C + static_cast<size_t>(i) * a.N;
      for (int j = 0; j < a.N; ++j) row[j] += a.bias[j];
    }
  }
}

void CpuBackend::bias_backward(float* dbias, const float* dout, int M, int N) {
#pragma omp parallel for if (static_cast<long>(M) * N > kParallelMin)
  for (int j = 0; j < N; ++j) {
    float s = 0.0f;
    for (int i = 0; i < M; ++i) s += dout[static_cast<size_t>(i) * N + j];
    dbias[j] += s;
  }
}

void CpuBackend::layernorm_forward(float* out, float* mean, float* rstd, const float* x,
                                   const float* w, const float* b, int rows, int C) {
#pragma omp parallel for if (static_cast<long>(rows) * C > kParallelMin)
  for (int r = 0; r < rows; ++r) {
    const float* xr = x + static_cast<size_t>(r) * C;
    float m = 0.0f;
    for (int i = 0; i < C; ++i) m += xr[i];
    m /= static_cast<float>(C);
    float var = 0.0f;
    for (int i = 0; i < C; ++i) var += (xr[i] - m) * (xr[i] - m);
    var /= static_cast<float>(C);
    const float s = 1.0f / std::sqrt(var + kLayerNormEps);
    float* o = out + static_cast<size_t>(r) * C;
    for (int i = 0; i < C; ++i) o[i] = (xr[i] - m) * s * w[i] + b[i];
    mean[r] = m;
    rstd[r] = s;
  }
}

void CpuBackend::layernorm_backward(float* dx, float* dw, float* db, const float* dout,
                                    const float* x, const float* w, const float* mean,
                                    const float* rstd, int rows, int C) {
  // dx: rows are independent.
#pragma omp parallel for if (static_cast<long>(rows) * C > kParallelMin)
  for (int r = 0; r < rows; ++r) {
    const float* xr = x + static_cast<size_t>(r) * C;
    const float* dr = dout + static_cast<size_t>(r) * C;
    float* dxr = dx + static_cast<size_t>(r) * C;
    float dnorm_mean = 0.0f, dnorm_norm_mean = 0.0f;
    for (int i = 0; i < C; ++i) {
      const float norm = (xr[i] - mean[r]) * rstd[r];
      const float dnorm = w[i] * dr[i];
      dnorm_mean += dnorm;
      dnorm_norm_mean += dnorm * norm;
    }
    dnorm_mean /= static_cast<float>(C);
    dnorm_norm_mean /= static_cast<float>(C);
    for (int i = 0; i < C; ++i) {
      const float norm = (xr[i] - mean[r]) * rstd[r];
      const float dnorm = w[i] * dr[i];
      dxr[i] += (dnorm - dnorm_mean - norm * dnorm_norm_mean) * rstd[r];
    }
  }
  // dw, db: reductions over rows, one column per thread, rows in order.
#pragma omp parallel for if (static_cast<long>(rows) * C > kParallelMin)
  for (int i = 0; i < C; ++i) {
    float sw = 0.0f, sb = 0.0f;
    for (int r = 0; r < rows; ++r) {
      const size_t k = static_cast<size_t>(r) * C + i;
      sw += (x[k] - mean[r]) * rstd[r] * dout[k];
      sb += dout[k];
    }
    dw[i] += sw;
    db[i] += sb;
  }
}

void CpuBackend::gelu_forward(float* out, const float* x, size_t n) {
#pragma omp parallel for if (static_cast<long>(n) > kParallelMin)
  for (size_t i = 0; i < n; ++i) {
    const float v = x[i];
    out[i] = 0.5f * v * (1.0f + std::tanh(kGeluScale * (v + 0.044715f * v * v * v)));
  }
}

void CpuBackend::gelu_backward(float* dx, const float* x, const float* dout, size_t n) {
#pragma omp parallel for if (static_cast<long>(n) > kParallelMin)
  for (size_t i = 0; i < n; ++i) {
    const float v = x[i];
    const float u = kGeluScale * (v + 0.044715f * v * v * v);
    const float t = std::tanh(u);
    const float sech2 = 1.0f - t * t;
    const float grad = 0.5f * (1.0f + t) + 0.5f * v * sech2 * kGeluScale * (1.0f + 3.0f * 0.044715f * v * v);
    dx[i] = grad * dout[i];
  }
}

void CpuBackend::attention_forward(float* out, float* att, const float* qkv, int B, int T, int C,
                                   int NH) {
  const int hs = C / NH;
  const float scale = 1.0f / std::sqrt(static_cast<float>(hs));
  const size_t C3 = static_cast<size_t>(3) * C;
#pragma omp parallel for collapse(2) if (static_cast<long>(B) * NH * T * T > kParallelMin)
  for (int b = 0; b < B; ++b) {
    for (int h = 0; h < NH; ++h) {
      for (int t = 0; t < T; ++t) {
        const float* q = qkv + (static_cast<size_t>(b) * T + t) * C3 + h * hs;
        float* a = att + ((static_cast<size_t>(b) * NH + h) * T + t) * T;
        float maxv = -INFINITY;
        for (int t2 = 0; t2 <= t; ++t2) {
          const float* k = qkv + (static_cast<size_t>(b) * T + t2) * C3 + C + h * hs;
          float s = 0.0f;
          for (int i = 0; i < hs; ++i) s += q[i] * k[i];
          s *= scale;
          a[t2] = s;
          maxv = std::max(maxv, s);
        }
        float denom = 0.0f;
        for (int t2 = 0; t2 <= t; ++t2) {
          a[t2] = std::exp(a[t2] - maxv);
          denom += a[t2];
        }
        const float inv = 1.0f / denom;
        for (int t2 = 0; t2 < T; ++t2) a[t2] = t2 <= t ? a[t2] * inv : 0.0f;
        float* o = out + (static_cast<size_t>(b) * T + t) * C + h * hs;
        for (int i = 0; i < hs; ++i) o[i] = 0.0f;
        for (int t2 = 0; t2 <= t; ++t2) {
          const float* v = qkv + (static_cast<size_t>(b) * T + t2) * C3 + 2 * C + h * hs;
          for (int i = 0; i < hs; ++i) o[i] += a[t2] * v[i];
        }
      }
    }
  }
}

void CpuBackend::attention_backward(float* dqkv, float* datt, const float* dout, const float* qkv,
                                    const float* att, int B, int T, int C, int NH) {
  const int hs = C / NH;
  const float scale = 1.0f / std::sqrt(static_cast<float>(hs));
  const size_t C3 = static_cast<size_t>(3) * C;
  std::fill(dqkv, dqkv + static_cast<size_t>(B) * T * C3, 0.0f);
  // One (b, h) pair per thread: it owns the q, k and v columns of head h in sequence b.
#pragma omp parallel for collapse(2) if (static_cast<long>(B) * NH * T * T > kParallelMin)
  for (int b = 0; b < B; ++b) {
    for (int h = 0; h < NH; ++h) {
      for (int t = 0; t < T; ++t) {
        const float* a = att + ((static_cast<size_t>(b) * NH + h) * T + t) * T;
        float* da = datt + ((static_cast<size_t>(b) * NH + h) * T + t) * T;
        const float* q = qkv + (static_cast<size_t>(b) * T + t) * C3 + h * hs;
        float* dq = dqkv + (static_cast<size_t>(b) * T + t) * C3 + h * hs;
        const float* d_o = dout + (static_cast<size_t>(b) * T + t) * C + h * hs;
        // out = Σ a·v  →  da = d_o·v, dv += a·d_o
        for (int t2 = 0; t2 <= t; ++t2) {
          const float* v = qkv + (static_cast<size_t>(b) * T + t2) * C3 + 2 * C + h * hs;
          float* dv = dqkv + (static_cast<size_t>(b) * T + t2) * C3 + 2 * C + h * hs;
          float s = 0.0f;
          for (int i = 0; i < hs; ++i) {
            s += d_o[i] * v[i];
            dv[i] += a[t2] * d_o[i];
          }
          da[t2] = s;
        }
        // softmax backward: dpre = a·(da − Σ a·da)
        float dot = 0.0f;
        for (int t2 = 0; t2 <= t; ++t2) dot += a[t2] * da[t2];
        for (int t2 = 0; t2 <= t; ++t2) {
          const float dpre = a[t2] * (da[t2] - dot) * scale;
          const float* k = qkv + (static_cast<size_t>(b) * T + t2) * C3 + C + h * hs;
          float* dk = dqkv + (static_cast<size_t>(b) * T + t2) * C3 + C + h * hs;
          for (int i = 0; i < hs; ++i) {
            dq[i] += dpre * k[i];
            dk[i] += dpre * q[i];
          }
        }
      }
    }
  }
}

void CpuBackend::cross_entropy_forward(float* losses, float* probs, const float* logits,
                                       const int32_t* targets, int rows, int V) {
#pragma omp parallel for if (static_cast<long>(rows) * V > kParallelMin)
  for (int r = 0; r < rows; ++r) {
    const float* l = logits + static_cast<size_t>(r) * V;
    float* p = probs + static_cast<size_t>(r) * V;
    float maxv = -INFINITY;
    for (int i = 0; i < V; ++i) maxv = std::max(maxv, l[i]);
    float denom = 0.0f;
    for (int i = 0; i < V; ++i) {
      p[i] = std::exp(l[i] - maxv);
      denom += p[i];
    }
    const float inv = 1.0f / denom;
    for (int i = 0; i < V; ++i) p[i] *= inv;
    losses[r] = -std::log(p[targets[r]]);
  }
}

void CpuBackend::cross_entropy_backward(float* dlogits, const float* probs,
                                        const int32_t* targets, int rows, int V, float dloss) {
#pragma omp parallel for if (static_cast<long>(rows) * V > kParallelMin)
  for (int r = 0; r < rows; ++r) {
    const float* p = probs + static_cast<size_t>(r) * V;
    float* d = dlogits + static_cast<size_t>(r) * V;
    for (int i = 0; i < V; ++i) d[i] = (p[i] - (i == targets[r] ? 1.0f : 0.0f)) * dloss;
  }
}

void CpuBackend::embedding_forward(float* out, const int32_t* tokens, const float* wte,
                                   const float* wpe, int B, int T, int C) {
  for (int b = 0; b < B; ++b) {
    for (int t = 0; t < T; ++t) {
      float* o = out + (static_cast<size_t>(b) * T + t) * C;
      const float* e = wte + static_cast<size_t>(tokens[b * T + t]) * C;
      const float* p = wpe + static_cast<size_t>(t) * C;
      for (int i = 0; i < C; ++i) o[i] = e[i] + p[i];
    }
  }
}

void CpuBackend::embedding_backward(float* dwte, float* dwpe, const float* dout,
                                    const int32_t* tokens, int B, int T, int C) {
  for (int b = 0; b < B; ++b) {
    for (int t = 0; t < T; ++t) {
      const float* d = dout + (static_cast<size_t>(b) * T + t) * C;
      float* de = dwte + static_cast<size_t>(tokens[b * T + t]) * C;
      float* dp = dwpe + static_cast<size_t>(t) * C;
      for (int i = 0; i < C; ++i) {
        de[i] += d[i];
        dp[i] += d[i];
      }
    }
  }
}

void CpuBackend::adamw(float* params, const float* grads, float* m, float* v, size_t n,
                       const AdamWArgs& a) {
  const float c1 = 1.0f - std::pow(a.beta1, static_cast<float>(a.step));
  const float c2 = 1.0f - std::pow(a.beta2, static_cast<float>(a.step));
#pragma omp parallel for if (static_cast<long>(n) > kParallelMin)
  for (size_t i = 0; i < n; ++i) {
    const float g = grads[i];
    m[i] = a.beta1 * m[i] + (1.0f - a.beta1) * g;
    v[i] = a.beta2 * v[i] + (1.0f - a.beta2) * g * g;
    const float mhat = m[i] / c1;
    const float vhat = v[i] / c2;
    params[i] -= a.lr * (mhat / (std::sqrt(vhat) + a.eps) + a.weight_decay * params[i]);
  }
}

}  // namespace gcb::models
