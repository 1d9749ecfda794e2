// CpuBackend ops: matmul against a double-precision reference, every backward against central
// finite differences of L = Σ w·y (w fixed random weights, sums in double), and the whole GPT
// model's parameter gradients against finite differences of its mean loss.
//
// Tolerances. Ops run in fp32 and the FD quotient (L(x+ε) − L(x−ε)) / 2ε with ε = 1e-2 carries
// (a) rounding: fp32 outputs are off by ~1e-7 relative, so L (≈ Σ of a few hundred O(1) terms
// with O(1) weights) is off by ~1e-5, i.e. ~5e-4 in the quotient, and (b) truncation ε²·f'''/6,
// ~1e-4 for these smooth functions. Hence |analytic − fd| ≤ 2e-3 + 1e-2·|fd| per element.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <numbers>
#include <vector>

#include "models/cpu_backend.hpp"
#include "models/gpt.hpp"
#include "models/init_rng.hpp"

namespace gcb::models {
namespace {

std::vector<float> randn(size_t n, uint64_t stream, float std = 1.0f) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = std * counter_normal(99, stream, i);
  return v;
}

double dot(const std::vector<float>& a, const std::vector<float>& b) {
  double s = 0;
  for (size_t i = 0; i < a.size(); ++i) s += static_cast<double>(a[i]) * b[i];
  return s;
}

// Checks analytic dL/dx[i] against central differences for up to 24 spread-out elements of x.
// loss() recomputes L from the current x.
void check_fd(const char* what, std::vector<float>& x, const std::vector<float>& analytic,
              const std::function<double()>& loss, double eps = 1e-2, double atol = 2e-3,
              double rtol = 1e-2) {
  ASSERT_EQ(x.size(), analytic.size());
  const size_t stride = std::max<size_t>(1, x.size() / 24);
  for (size_t i = 0; i < x.size(); i += stride) {
    const float orig = x[i];
    x[i] = orig + static_cast<float>(eps);
    const double up = loss();
    x[i] = orig - static_cast<float>(eps);
    const double down = loss();
    x[i] = orig;
    const double fd = (up - down) / (2 * eps);
    EXPECT_NEAR(analytic[i], fd, atol + rtol * std::abs(fd)) << what << " element " << i;
  }
}

TEST(CpuBackend, GemmMatchesDoubleReferenceForAllTransposes) {
  CpuBackend be;
  const int M = 7, N = 5, K = 9;
  const auto A = randn(M * K, 1), B = randn(K * N, 2), bias = randn(N, 3), C0 = randn(M * N, 4);
  for (int ta = 0; ta < 2; ++ta) {
    for (int tb = 0; tb < 2; ++tb) {
      std::vector<float> C = C0;
      be.gemm({ta == 1, tb == 1, M, N, K, A.data(), B.data(), C.data(), 1.0f, bias.data()});
      for (int i = 0; i < M; ++i) {
        for (int j = 0; j < N; ++j) {
          double s = C0[i * N + j] + static_cast<double>(bias[j]);
          for (int k = 0; k < K; ++k) {
            const double a = ta ? A[k * M + i] : A[i * K + k];
            const double b = tb ? B[j * K + k] : B[k * N + j];
            s += a * b;
          }
          // K = 9 products of O(1) values in fp32: error ≲ 1e-5.
          EXPECT_NEAR(C[i * N + j], s, 1e-5) << "ta " << ta << " tb " << tb;
        }
      }
    }
  }
  EXPECT_TRUE(std::string(cpu_matmul_impl()) == "openblas" || std::string(cpu_matmul_impl()) == "naive");
}

TEST(CpuBackend, LayerNormBackwardMatchesFiniteDifferences) {
  CpuBackend be;
  const int rows = 6, C = 16;
  auto x = randn(rows * C, 10), w = randn(C, 11), b = randn(C, 12);
  const auto wout = randn(rows * C, 13);
  std::vector<float> y(rows * C), mean(rows), rstd(rows);
  auto loss = [&] {
    be.layernorm_forward(y.data(), mean.data(), rstd.data(), x.data(), w.data(), b.data(), rows, C);
    return dot(y, wout);
  };
  loss();
  std::vector<float> dx(rows * C, 0.0f), dw(C, 0.0f), db(C, 0.0f);
  be.layernorm_backward(dx.data(), dw.data(), db.data(), wout.data(), x.data(), w.data(),
                        mean.data(), rstd.data(), rows, C);
  check_fd("ln dx", x, dx, loss);
  check_fd("ln dw", w, dw, loss);
  check_fd("ln db", b, db, loss);
}

TEST(CpuBackend, GeluBackwardMatchesFiniteDifferences) {
  CpuBackend be;
  auto x = randn(64, 20, 2.0f);
  const auto wout = randn(64, 21);
  std::vector<float> y(64), dx(64);
  auto loss = [&] {
    be.gelu_forward(y.data(), x.data(), x.size());
    return dot(y, wout);
  };
  be.gelu_backward(dx.data(), x.data(), wout.data(), x.size());
  check_fd("gelu", x, dx, loss);
}

TEST(CpuBackend, AttentionBackwardMatchesFiniteDifferences) {
  CpuBackend be;
  const int B = 2, T = 5, C = 8, NH = 2;
  auto qkv = randn(B * T * 3 * C, 30);
  const auto wout = randn(B * T * C, 31);
  std::vector<float> out(B * T * C), att(B * NH * T * T), datt(B * NH * T * T), dqkv(qkv.size());
  auto loss = [&] {
    be.attention_forward(out.data(), att.data(), qkv.data(), B, T, C, NH);
    return dot(out, wout);
  };
  loss();
  be.attention_backward(dqkv.data(), datt.data(), wout.data(), qkv.data(), att.data(), B, T, C, NH);
  check_fd("attention dqkv", qkv, dqkv, loss);
  // Causality: the output at t = 0 depends on no later key or value.
  const std::vector<float> out0(out.begin(), out.begin() + C);
  qkv[(1 * 3 * C) + C] += 1.0f;  // key of t = 1, sequence 0
  loss();
  for (int i = 0; i < C; ++i) EXPECT_EQ(out[i], out0[i]);
}

TEST(CpuBackend, CrossEntropyBackwardMatchesFiniteDifferences) {
  CpuBackend be;
  const int rows = 4, V = 11;
  auto logits = randn(rows * V, 40, 2.0f);
  const std::vector<int32_t> targets = {0, 3, 10, 7};
  std::vector<float> losses(rows), probs(rows * V), dlogits(rows * V);
  auto loss = [&] {
    be.cross_entropy_forward(losses.data(), probs.data(), logits.data(), targets.data(), rows, V);
    double s = 0;
    for (float l : losses) s += l;
    return s;
  };
  loss();
  be.cross_entropy_backward(dlogits.data(), probs.data(), targets.data(), rows, V, 1.0f);
  check_fd("cross-entropy", logits, dlogits, loss);
  // In place (probs and dlogits aliasing logits), as GptModel uses it, gives the same values.
  std::vector<float> inplace = logits;
  std::vector<float> losses2(rows);
  be.cross_entropy_forward(losses2.data(), inplace.data(), inplace.data(), targets.data(), rows, V);
  be.cross_entropy_backward(inplace.data(), inplace.data(), targets.data(), rows, V, 1.0f);
  // Aliasing changes how the compiler may schedule the loops, so allow 1e-6 relative.
  for (size_t i = 0; i < inplace.size(); ++i) EXPECT_NEAR(inplace[i], dlogits[i], 1e-6);
  for (int r = 0; r < rows; ++r) EXPECT_NEAR(losses2[r], losses[r], 1e-6 * losses[r]);
}

TEST(CpuBackend, EmbeddingAndBiasBackwardMatchFiniteDifferences) {
  CpuBackend be;
  const int B = 2, T = 3, C = 4, V = 5;
  auto wte = randn(V * C, 50), wpe = randn(T * C, 51);
  const std::vector<int32_t> tokens = {1, 4, 1, 0, 2, 1};
  const auto wout = randn(B * T * C, 52);
  std::vector<float> out(B * T * C), dwte(V * C, 0.0f), dwpe(T * C, 0.0f);
  auto loss = [&] {
    be.embedding_forward(out.data(), tokens.data(), wte.data(), wpe.data(), B, T, C);
    return dot(out, wout);
  };
  be.embedding_backward(dwte.data(), dwpe.data(), wout.data(), tokens.data(), B, T, C);
  check_fd("dwte", wte, dwte, loss);
  check_fd("dwpe", wpe, dwpe, loss);

  std::vector<float> dbias(C, 0.0f);
  be.bias_backward(dbias.data(), wout.data(), B * T, C);
  for (int j = 0; j < C; ++j) {
    double s = 0;
    for (int r = 0; r < B * T; ++r) s += wout[r * C + j];
    EXPECT_NEAR(dbias[j], s, 1e-5);
  }
}

TEST(CpuBackend, AdamWMatchesClosedForm) {
  CpuBackend be;
  std::vector<float> p = {1.0f, -2.0f}, g = {0.5f, -0.25f}, m = {0.0f, 0.0f}, v = {0.0f, 0.0f};
  AdamWArgs a;
  a.lr = 0.1f;
  a.weight_decay = 0.01f;
  a.step = 1;
  be.adamw(p.data(), g.data(), m.data(), v.data(), 2, a);
  // Step 1: m̂ = g, v̂ = g², so the update is lr·(sign(g)·|g|/(|g| + eps) + wd·p).
  EXPECT_NEAR(p[0], 1.0 - 0.1 * (0.5 / (0.5 + 1e-8) + 0.01 * 1.0), 1e-6);
  EXPECT_NEAR(p[1], -2.0 - 0.1 * (-0.25 / (0.25 + 1e-8) + 0.01 * -2.0), 1e-6);
  EXPECT_FLOAT_EQ(m[0], 0.05f);
  EXPECT_FLOAT_EQ(v[1], 0.05f * 0.0625f);
}

TEST(CpuBackend, MemoryAccountingTracksCurrentAndPeak) {
  CpuBackend be;
  {
    Buffer a = be.alloc(MemCategory::grads, 1000);
    Buffer b = be.alloc(MemCategory::grads, 24);
    EXPECT_EQ(be.memory()[MemCategory::grads].current, 1024u);
  }
  EXPECT_EQ(be.memory()[MemCategory::grads].current, 0u);
  EXPECT_EQ(be.memory()[MemCategory::grads].peak, 1024u);
  EXPECT_EQ(be.memory().total.peak, 1024u);
  EXPECT_EQ(be.memory()[MemCategory::params].peak, 0u);
}

TEST(CpuBackend, InitShardEqualsSliceOfFullTensor) {
  CpuBackend be;
  const ParamLayout pl(named_config("tiny"));
  for (int unit : {0, 1}) {
    const size_t n = pl.unit_size(unit);
    std::vector<float> full(n), part(100);
    pl.init_range(be, full.data(), unit, 0, n, 7);
    pl.init_range(be, part.data(), unit, 333, 433, 7);
    for (size_t i = 0; i < 100; ++i) EXPECT_EQ(part[i], full[333 + i]);
  }
}

// The whole model: analytic gradients of the mean loss vs finite differences on parameters of
// every tensor kind. The loss is the double-precision mean of fp32 per-token losses (≈ 4.2 each);
// their rounding (~5e-7) over 2ε = 2e-2 gives ~3e-5 noise against gradients of 1e-4 … 1e-1,
// hence atol 1e-4, rtol 2e-2.
class FlatHooks final : public UnitHooks {
 public:
  FlatHooks(const ParamLayout& pl, std::vector<float>& params, std::vector<float>& grads)
      : params_(params), grads_(grads) {
    size_t o = 0;
    for (int u = 0; u < pl.num_units(); ++u) {
      off_.push_back(o);
      o += pl.unit_size(u);
    }
  }
  const float* params(int u, ParamUse) override { return params_.data() + off_[u]; }
  void release(int, ParamUse) override {}
  float* grads_begin(int u) override { return grads_.data() + off_[u]; }
  void grads_end(int) override {}
  size_t offset(int u) const { return off_[u]; }

 private:
  std::vector<float>& params_;
  std::vector<float>& grads_;
  std::vector<size_t> off_;
};

// An independent double-precision forward of the GPT-2 equations, written from the definition
// (Radford et al. 2019; nanoGPT model.py) rather than from the Backend ops: guards the wiring
// (residuals, LayerNorm placement, tied head) that finite differences cannot see.
std::vector<double> reference_losses(const ParamLayout& pl, const std::vector<float>& params,
                                     const std::vector<int32_t>& tokens,
                                     const std::vector<int32_t>& targets) {
  const GptConfig& c = pl.config();
  const int T = c.seq, C = c.hidden, NH = c.heads, hs = C / NH, V = c.vocab;
  const float* E = params.data();
  const EmbedUnit& e = pl.embed();
  const LayerUnit& u = pl.layer();
  using Vec = std::vector<double>;
  auto layernorm = [&](const Vec& x, const float* w, const float* b) {
    double m = 0, var = 0;
    for (double v : x) m += v;
    m /= C;
    for (double v : x) var += (v - m) * (v - m);
    var /= C;
    Vec y(x.size());
    for (int i = 0; i < C; ++i) y[i] = (x[i] - m) / std::sqrt(var + 1e-5) * w[i] + b[i];
    return y;
  };
  auto linear = [&](const Vec& x, const float* W, const float* b, int out) {  // W [out, in]
    Vec y(out);
    const int in = static_cast<int>(x.size());
    for (int o = 0; o < out; ++o) {
      double s = b ? b[o] : 0.0;
      for (int i = 0; i < in; ++i) s += W[o * in + i] * x[i];
      y[o] = s;
    }
    return y;
  };
  std::vector<Vec> x(T, Vec(C));
  for (int t = 0; t < T; ++t) {
    for (int i = 0; i < C; ++i) x[t][i] = double(E[e.wte + tokens[t] * C + i]) + E[e.wpe + t * C + i];
  }
  for (int l = 0; l < c.layers; ++l) {
    const float* P = params.data() + pl.unit_size(0) + static_cast<size_t>(l) * pl.unit_size(1);
    std::vector<Vec> qkv(T);
    for (int t = 0; t < T; ++t) qkv[t] = linear(layernorm(x[t], P + u.ln1w, P + u.ln1b), P + u.qkvw, P + u.qkvb, 3 * C);
    for (int t = 0; t < T; ++t) {
      Vec y(C, 0.0);
      for (int h = 0; h < NH; ++h) {
        Vec p(t + 1);
        double mx = -1e300, z = 0;
        for (int t2 = 0; t2 <= t; ++t2) {
          double s = 0;
          for (int i = 0; i < hs; ++i) s += qkv[t][h * hs + i] * qkv[t2][C + h * hs + i];
          p[t2] = s / std::sqrt(double(hs));
          mx = std::max(mx, p[t2]);
        }
        for (auto& v : p) z += (v = std::exp(v - mx));
        for (int t2 = 0; t2 <= t; ++t2) {
          for (int i = 0; i < hs; ++i) y[h * hs + i] += p[t2] / z * qkv[t2][2 * C + h * hs + i];
        }
      }
      const Vec o = linear(y, P + u.projw, P + u.projb, C);
      for (int i = 0; i < C; ++i) x[t][i] += o[i];
    }
    for (int t = 0; t < T; ++t) {
      Vec f = linear(layernorm(x[t], P + u.ln2w, P + u.ln2b), P + u.fcw, P + u.fcb, 4 * C);
      for (auto& v : f) v = 0.5 * v * (1 + std::tanh(std::sqrt(2 / std::numbers::pi) * (v + 0.044715 * v * v * v)));
      const Vec o = linear(f, P + u.fcprojw, P + u.fcprojb, C);
      for (int i = 0; i < C; ++i) x[t][i] += o[i];
    }
  }
  std::vector<double> losses(T);
  for (int t = 0; t < T; ++t) {
    const Vec logits = linear(layernorm(x[t], E + e.lnfw, E + e.lnfb), E + e.wte, nullptr, V);
    double mx = -1e300, z = 0;
    for (double v : logits) mx = std::max(mx, v);
    for (double v : logits) z += std::exp(v - mx);
    losses[t] = std::log(z) + mx - logits[targets[t]];
  }
  return losses;
}

TEST(GptModel, ForwardMatchesIndependentDoubleReference) {
  CpuBackend be;
  const GptConfig cfg = named_config("tiny");
  GptModel model(be, cfg, 1);
  const ParamLayout& pl = model.layout();
  std::vector<float> params;
  for (int u = 0; u < pl.num_units(); ++u) {
    std::vector<float> unit(pl.unit_size(u));
    pl.init_range(be, unit.data(), u, 0, unit.size(), 8);
    params.insert(params.end(), unit.begin(), unit.end());
  }
  // Perturb every parameter (std 0.1) so LayerNorm affine terms and biases matter too.
  for (size_t i = 0; i < params.size(); ++i) params[i] += 0.1f * counter_normal(9, 0, i);
  std::vector<float> grads(params.size(), 0.0f);
  FlatHooks hooks(pl, params, grads);
  std::vector<int32_t> tokens, targets;
  synthetic_batch(4, cfg.vocab, cfg.seq, 3, 1, tokens, targets);
  float sum = 0.0f;
  model.forward_backward(tokens.data(), targets.data(), hooks, 1.0f, &sum, false);
  const auto want = reference_losses(pl, params, tokens, targets);
  for (int t = 0; t < cfg.seq; ++t) {
    // fp32 through 2 layers of O(1) activations: ~1e-6 relative; 1e-4 leaves margin, while any
    // wiring error moves a loss of ≈ 4 by far more.
    EXPECT_NEAR(model.token_losses()[t], want[t], 1e-4 * want[t]) << "token " << t;
  }
}

TEST(GptModel, ParameterGradientsMatchFiniteDifferences) {
  CpuBackend be;
  const GptConfig cfg = named_config("tiny");
  const int B = 2, T = cfg.seq;
  GptModel model(be, cfg, B);
  const ParamLayout& pl = model.layout();
  std::vector<float> params, grads;
  for (int u = 0; u < pl.num_units(); ++u) {
    std::vector<float> unit(pl.unit_size(u));
    // Larger-than-GPT-2 init (std 0.2 via a second pass) so every path carries signal.
    pl.init_range(be, unit.data(), u, 0, unit.size(), 3);
    params.insert(params.end(), unit.begin(), unit.end());
  }
  for (size_t i = 0; i < params.size(); ++i) params[i] += 0.1f * counter_normal(5, 0, i);
  grads.assign(params.size(), 0.0f);
  FlatHooks hooks(pl, params, grads);
  std::vector<int32_t> tokens, targets;
  synthetic_batch(11, cfg.vocab, T, 0, B, tokens, targets);
  const float dloss = 1.0f / static_cast<float>(B * T);
  float loss_sum = 0.0f;
  auto mean_loss = [&] {
    std::vector<float> scratch(grads.size(), 0.0f);
    FlatHooks h(pl, params, scratch);
    float s = 0.0f;
    model.forward_backward(tokens.data(), targets.data(), h, dloss, &s, false);
    double sum = 0;
    for (int i = 0; i < B * T; ++i) sum += model.token_losses()[i];
    return sum / (B * T);
  };
  model.forward_backward(tokens.data(), targets.data(), hooks, dloss, &loss_sum, false);
  EXPECT_NEAR(loss_sum * dloss, mean_loss(), 1e-5);

  const EmbedUnit& e = pl.embed();
  const LayerUnit& l = pl.layer();
  const size_t L1 = hooks.offset(2);  // second layer
  const std::pair<const char*, size_t> probes[] = {
      {"wte", e.wte + 5},         {"wte", e.wte + 32 * 17 + 3}, {"wpe", e.wpe + 40},
      {"lnf.w", e.lnfw + 7},      {"lnf.b", e.lnfb + 2},         {"ln1.w", L1 + l.ln1w + 1},
      {"ln1.b", L1 + l.ln1b + 9}, {"qkv.w q", L1 + l.qkvw + 10}, {"qkv.w k", L1 + l.qkvw + 32 * 32 + 77},
      {"qkv.w v", L1 + l.qkvw + 2 * 32 * 32 + 5}, {"qkv.b", L1 + l.qkvb + 70},
      {"proj.w", L1 + l.projw + 100}, {"proj.b", L1 + l.projb + 4}, {"ln2.w", L1 + l.ln2w + 3},
      {"fc.w", L1 + l.fcw + 500},  {"fc.b", L1 + l.fcb + 12},     {"fcproj.w", L1 + l.fcprojw + 900},
      {"fcproj.b", L1 + l.fcprojb + 31}, {"layer0 qkv.w", hooks.offset(1) + l.qkvw + 2000},
      {"layer0 fc.w", hooks.offset(1) + l.fcw + 1234}};
  const double eps = 1e-2;
  for (const auto& [name, i] : probes) {
    const float orig = params[i];
    params[i] = orig + static_cast<float>(eps);
    const double up = mean_loss();
    params[i] = orig - static_cast<float>(eps);
    const double down = mean_loss();
    params[i] = orig;
    const double fd = (up - down) / (2 * eps);
    EXPECT_NEAR(grads[i], fd, 1e-4 + 2e-2 * std::abs(fd)) << name << " index " << i;
  }
}

}  // namespace
}  // namespace gcb::models
