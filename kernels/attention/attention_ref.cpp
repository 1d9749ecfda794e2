// CPU attention references: naive FP64 and the FP32 tiled algorithm of the GPU kernels.
#include "kernels/attention/attention_ref.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>

#include "core/error.hpp"

namespace gcb::kernels::attn {

namespace {

constexpr double kLog2e = 1.4426950408889634;
constexpr double kLn2 = 0.6931471805599453;

size_t at(const AttnShape& a, size_t head, int row) {
  return (head * static_cast<size_t>(a.seq) + static_cast<size_t>(row)) * static_cast<size_t>(a.head_dim);
}
size_t heads_total(const AttnShape& a) { return static_cast<size_t>(a.batch) * static_cast<size_t>(a.heads); }
// Keys query i may see: all, or 0..i under the causal mask.
int visible_keys(const AttnShape& a, int i) { return a.causal ? i + 1 : a.seq; }

void check_shape(const AttnShape& a) {
  GCB_CHECK(a.batch > 0 && a.heads > 0 && a.seq > 0 && a.head_dim > 0, "attention shape must be positive");
}

// P row i of one head in FP64, masked entries 0; returns lse (natural log).
double naive_probs(const AttnShape& a, const double* q, const double* k, size_t head, int i, std::vector<double>& p) {
  const int d = a.head_dim, n = visible_keys(a, i);
  double m = -std::numeric_limits<double>::infinity();
  std::fill(p.begin(), p.end(), 0.0);
  for (int j = 0; j < n; ++j) {
    double s = 0;
    for (int x = 0; x < d; ++x)
      s += q[at(a, head, i) + static_cast<size_t>(x)] * k[at(a, head, j) + static_cast<size_t>(x)];
    p[static_cast<size_t>(j)] = s * a.scale();
    m = std::max(m, p[static_cast<size_t>(j)]);
  }
  double l = 0;
  for (int j = 0; j < n; ++j) l += (p[static_cast<size_t>(j)] = std::exp(p[static_cast<size_t>(j)] - m));
  for (int j = 0; j < n; ++j) p[static_cast<size_t>(j)] /= l;
  return m + std::log(l);
}

}  // namespace

void naive_forward(const AttnShape& a, const double* q, const double* k, const double* v, double* o, double* lse) {
  check_shape(a);
  std::vector<double> p(static_cast<size_t>(a.seq));
  const auto d = static_cast<size_t>(a.head_dim);
  for (size_t h = 0; h < heads_total(a); ++h)
    for (int i = 0; i < a.seq; ++i) {
      lse[h * static_cast<size_t>(a.seq) + static_cast<size_t>(i)] = naive_probs(a, q, k, h, i, p);
      double* out = o + at(a, h, i);
      std::fill(out, out + d, 0.0);
      for (int j = 0; j < visible_keys(a, i); ++j)
        for (size_t x = 0; x < d; ++x) out[x] += p[static_cast<size_t>(j)] * v[at(a, h, j) + x];
    }
}

void naive_backward(const AttnShape& a, const double* q, const double* k, const double* v, const double* d_o,
                    double* dq, double* dk, double* dv) {
  check_shape(a);
  const auto d = static_cast<size_t>(a.head_dim);
  std::fill(dq, dq + a.elements(), 0.0);
  std::fill(dk, dk + a.elements(), 0.0);
  std::fill(dv, dv + a.elements(), 0.0);
  std::vector<double> p(static_cast<size_t>(a.seq)), dp(static_cast<size_t>(a.seq));
  for (size_t h = 0; h < heads_total(a); ++h)
    for (int i = 0; i < a.seq; ++i) {
      naive_probs(a, q, k, h, i, p);
      const int n = visible_keys(a, i);
      double row_dot = 0;  // Σ_j P_ij dP_ij (= rowsum(dO∘O))
      for (int j = 0; j < n; ++j) {
        double s = 0;
        for (size_t x = 0; x < d; ++x) s += d_o[at(a, h, i) + x] * v[at(a, h, j) + x];
        dp[static_cast<size_t>(j)] = s;
        row_dot += p[static_cast<size_t>(j)] * s;
      }
      for (int j = 0; j < n; ++j) {
        const double pj = p[static_cast<size_t>(j)];
        const double ds = pj * (dp[static_cast<size_t>(j)] - row_dot) * a.scale();
        for (size_t x = 0; x < d; ++x) {
          dv[at(a, h, j) + x] += pj * d_o[at(a, h, i) + x];
          dq[at(a, h, i) + x] += ds * k[at(a, h, j) + x];
          dk[at(a, h, j) + x] += ds * q[at(a, h, i) + x];
        }
      }
    }
}

void reference_row(const AttnShape& a, const float* q, const float* k, const float* v, const float* d_o, size_t head,
                   int row, double* o, double* lse, double* dq) {
  check_shape(a);
  const auto d = static_cast<size_t>(a.head_dim);
  const int n = visible_keys(a, row);
  std::vector<double> p(static_cast<size_t>(n));
  double m = -std::numeric_limits<double>::infinity();
  for (int j = 0; j < n; ++j) {
    double x = 0;
    for (size_t e = 0; e < d; ++e) x += static_cast<double>(q[at(a, head, row) + e]) * k[at(a, head, j) + e];
    p[static_cast<size_t>(j)] = x * a.scale();
    m = std::max(m, p[static_cast<size_t>(j)]);
  }
  double l = 0;
  for (auto& x : p) l += (x = std::exp(x - m));
  for (auto& x : p) x /= l;
  *lse = m + std::log(l);
  std::fill(o, o + d, 0.0);
  for (int j = 0; j < n; ++j)
    for (size_t e = 0; e < d; ++e) o[e] += p[static_cast<size_t>(j)] * v[at(a, head, j) + e];
  if (!d_o) return;
  std::vector<double> dp(static_cast<size_t>(n));
  double row_dot = 0;
  for (int j = 0; j < n; ++j) {
    double x = 0;
    for (size_t e = 0; e < d; ++e) x += static_cast<double>(d_o[at(a, head, row) + e]) * v[at(a, head, j) + e];
    dp[static_cast<size_t>(j)] = x;
    row_dot += p[static_cast<size_t>(j)] * x;
  }
  std::fill(dq, dq + d, 0.0);
  for (int j = 0; j < n; ++j) {
    const double ds = p[static_cast<size_t>(j)] * (dp[static_cast<size_t>(j)] - row_dot) * a.scale();
    for (size_t e = 0; e < d; ++e) dq[e] += ds * k[at(a, head, j) + e];
  }
}

void reference_key_row(const AttnShape& a, const float* q, const float* k, const float* v, const float* d_o,
                       const float* lse, const double* delta, size_t head, int key, double* dk, double* dv) {
  check_shape(a);
  const auto d = static_cast<size_t>(a.head_dim);
  std::fill(dk, dk + d, 0.0);
  std::fill(dv, dv + d, 0.0);
  const size_t kj = at(a, head, key);
  for (int i = a.causal ? key : 0; i < a.seq; ++i) {  // causal: only rows i ≥ j see key j
    const size_t qi = at(a, head, i);
    double s = 0, dp = 0;
    for (size_t e = 0; e < d; ++e) {
      s += static_cast<double>(q[qi + e]) * k[kj + e];
      dp += static_cast<double>(d_o[qi + e]) * v[kj + e];
    }
    const double p = std::exp(s * a.scale() - lse[static_cast<size_t>(i)]);
    const double ds = p * (dp - delta[static_cast<size_t>(i)]) * a.scale();
    for (size_t e = 0; e < d; ++e) {
      dv[e] += p * d_o[qi + e];
      dk[e] += ds * q[qi + e];
    }
  }
}

void tiled_forward(const AttnShape& a, Tiles t, const float* q, const float* k, const float* v, float* o, float* lse) {
  check_shape(a);
  const int step = t.score_cols > 0 ? t.score_cols : t.cols;
  GCB_CHECK(t.rows > 0 && t.cols > 0 && step > 0 && t.cols % step == 0,
            "tile sizes must be positive, score_cols | cols");
  const auto d = static_cast<size_t>(a.head_dim);
  const auto scale_log2 = static_cast<float>(a.scale() * kLog2e);  // exp(x) = exp2(x·log2 e)
  const float neg_inf = -std::numeric_limits<float>::infinity();
  std::vector<float> s(static_cast<size_t>(step)), acc(d);
  for (size_t h = 0; h < heads_total(a); ++h)
    for (int r0 = 0; r0 < a.seq; r0 += t.rows)                   // one CTA per query block
      for (int i = r0; i < std::min(r0 + t.rows, a.seq); ++i) {  // one row of the block
        float m = neg_inf, l = 0;                                // running max (log2 units) and sum
        std::fill(acc.begin(), acc.end(), 0.0f);
        // Causal: key blocks past the last row of this query block are skipped whole.
        const int n_blocks = ((a.causal ? std::min(a.seq, r0 + t.rows) : a.seq) + t.cols - 1) / t.cols;
        for (int block = n_blocks - 1; block >= 0; --block)  // last key block first
          for (int c0 = block * t.cols; c0 < (block + 1) * t.cols; c0 += step) {
            float block_max = neg_inf;
            for (int j = c0; j < c0 + step; ++j) {
              float x = neg_inf;  // out of range or masked
              if (j < a.seq && !(a.causal && j > i)) {
                x = 0;
                for (size_t e = 0; e < d; ++e) x += q[at(a, h, i) + e] * k[at(a, h, j) + e];
                x *= scale_log2;
              }
              s[static_cast<size_t>(j - c0)] = x;
              block_max = std::max(block_max, x);
            }
            const float m_new = std::max(m, block_max);
            if (m_new == neg_inf) continue;            // every key so far masked: nothing to add
            const float alpha = std::exp2(m - m_new);  // rescales the earlier blocks (0 at the start)
            float block_sum = 0;
            for (auto& x : s) block_sum += (x = std::exp2(x - m_new));
            l = l * alpha + block_sum;
            for (size_t e = 0; e < d; ++e) {
              float pv = 0;
              for (int j = c0; j < std::min(c0 + step, a.seq); ++j)
                pv += s[static_cast<size_t>(j - c0)] * v[at(a, h, j) + e];
              acc[e] = acc[e] * alpha + pv;
            }
            m = m_new;
          }
        for (size_t e = 0; e < d; ++e) o[at(a, h, i) + e] = acc[e] / l;  // normalise once, at the end
        lse[h * static_cast<size_t>(a.seq) + static_cast<size_t>(i)] = static_cast<float>((m + std::log2(l)) * kLn2);
      }
}

void tiled_backward(const AttnShape& a, Tiles t, const float* q, const float* k, const float* v, const float* o,
                    const float* d_o, const float* lse, float* dq, float* dk, float* dv) {
  check_shape(a);
  GCB_CHECK(t.rows > 0 && t.cols > 0, "tile sizes must be positive");
  const auto d = static_cast<size_t>(a.head_dim);
  const auto scale = static_cast<float>(a.scale());
  const auto scale_log2 = static_cast<float>(a.scale() * kLog2e);
  std::fill(dq, dq + a.elements(), 0.0f);  // the FP32 dQ accumulator of the GPU kernel
  std::vector<float> delta(static_cast<size_t>(a.seq));
  for (size_t h = 0; h < heads_total(a); ++h) {
    // Preprocess: D_i = rowsum(dO_i ∘ O_i).
    for (int i = 0; i < a.seq; ++i) {
      float x = 0;
      for (size_t e = 0; e < d; ++e) x += d_o[at(a, h, i) + e] * o[at(a, h, i) + e];
      delta[static_cast<size_t>(i)] = x;
    }
    for (int c0 = 0; c0 < a.seq; c0 += t.cols) {  // one CTA per key block, dK and dV in registers
      const int c1 = std::min(c0 + t.cols, a.seq);
      std::vector<float> dk_acc(static_cast<size_t>(c1 - c0) * d, 0.0f), dv_acc(dk_acc.size(), 0.0f);
      // Causal: query blocks that end before the first key of this block see none of it.
      const int first_row = a.causal ? (c0 / t.rows) * t.rows : 0;
      for (int r0 = first_row; r0 < a.seq; r0 += t.rows)
        for (int i = r0; i < std::min(r0 + t.rows, a.seq); ++i) {
          const float lse_log2 =
              lse[h * static_cast<size_t>(a.seq) + static_cast<size_t>(i)] * static_cast<float>(kLog2e);
          for (int j = c0; j < c1; ++j) {
            if (a.causal && j > i) continue;  // P = 0
            float s = 0, dp = 0;
            for (size_t e = 0; e < d; ++e) {
              s += q[at(a, h, i) + e] * k[at(a, h, j) + e];
              dp += d_o[at(a, h, i) + e] * v[at(a, h, j) + e];
            }
            const float p = std::exp2(s * scale_log2 - lse_log2);  // P recomputed from LSE
            const float ds = p * (dp - delta[static_cast<size_t>(i)]);
            const size_t jj = static_cast<size_t>(j - c0) * d;
            for (size_t e = 0; e < d; ++e) {
              dv_acc[jj + e] += p * d_o[at(a, h, i) + e];
              dk_acc[jj + e] += scale * ds * q[at(a, h, i) + e];
              dq[at(a, h, i) + e] += scale * ds * k[at(a, h, j) + e];
            }
          }
        }
      for (int j = c0; j < c1; ++j)
        for (size_t e = 0; e < d; ++e) {
          dk[at(a, h, j) + e] = dk_acc[static_cast<size_t>(j - c0) * d + e];
          dv[at(a, h, j) + e] = dv_acc[static_cast<size_t>(j - c0) * d + e];
        }
    }
  }
}

namespace {
template <typename T>
ErrorStats compare_impl(const double* want, const T* got, size_t n) {
  ErrorStats e;
  double sum_sq = 0;
  for (size_t i = 0; i < n; ++i) {
    const auto g = static_cast<double>(got[i]);
    if (!std::isfinite(g)) {
      if (e.non_finite++ == 0) e.worst = i;
      continue;
    }
    const double diff = std::abs(g - want[i]);
    sum_sq += diff * diff;
    if (diff > e.max_abs) {
      e.max_abs = diff;
      if (e.non_finite == 0) e.worst = i;
    }
  }
  e.rmse = n ? std::sqrt(sum_sq / static_cast<double>(n)) : 0.0;
  return e;
}
}  // namespace

ErrorStats compare(const double* want, const float* got, size_t n) { return compare_impl(want, got, n); }
ErrorStats compare(const double* want, const double* got, size_t n) { return compare_impl(want, got, n); }

std::vector<float> random_normal(size_t n, unsigned long long seed) {
  std::mt19937_64 gen(seed);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  std::vector<float> x(n);
  for (auto& e : x) e = dist(gen);
  return x;
}

}  // namespace gcb::kernels::attn
