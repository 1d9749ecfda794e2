// The whole model, on one rank of the engine: its losses against an independent double-precision
// forward of the GPT-2 equations, and its parameter gradients (full_grads) against finite
// differences of its mean loss, for every tensor kind.
#include <gtest/gtest.h>

#include <cmath>
#include <numbers>
#include <vector>

#include "collectives/thread_communicator.hpp"
#include "models/backend/cpu/cpu_backend.hpp"
#include "models/engine/param_init.hpp"
#include "models/engine/engine.hpp"
#include "models/model/init_rng.hpp"
#include "models/model/param_layout.hpp"
#include "models/io/token_data.hpp"

namespace gcb::models {
namespace {

// lr = 0: the optimizer leaves the weights as loaded, so a step is a forward and a backward.
TrainOptions frozen(int micro_batch) {
  TrainOptions o;
  o.model = named_config("tiny");
  o.micro_batch = micro_batch;
  o.optim.adam.lr = 0.0f;
  return o;
}

struct Evaluation {
  double loss = 0;
  std::vector<float> grads, token_losses;
};

// A fresh single-rank engine (so the first step always reads sequence 0 …) on `params`.
Evaluation evaluate(const TrainOptions& o, const std::vector<float>& params) {
  Evaluation e;
  run_ranks(1, [&](Communicator& world) {
    ParallelGroups ctx = make_parallel_groups(world, ParallelLayout{});
    CpuBackend be;
    auto engine = make_training_step(be, ctx, o);
    engine->load_params(params);
    e.loss = engine->step();
    e.grads = engine->full_grads();
    const int rows = o.micro_batch * o.model.seq;
    e.token_losses.assign(engine->token_losses(), engine->token_losses() + rows);
  });
  return e;
}

// The GPT-2 initialisation plus a perturbation of every parameter (std 0.1), so LayerNorm affine
// terms and biases matter too.
std::vector<float> perturbed_params(const ParamLayout& pl, uint64_t seed) {
  CpuBackend be;
  std::vector<float> params(pl.total());
  for (int u = 0; u < pl.num_units(); ++u) {
    init_range(pl, be, {params.data() + pl.unit_offset(u), DType::f32}, u, 0, pl.unit_size(u), seed);
  }
  for (size_t i = 0; i < params.size(); ++i) params[i] += 0.1f * counter_normal(seed + 1, 0, i);
  return params;
}

// An independent double-precision forward of the GPT-2 equations, written from the definition
// (Radford et al. 2019; nanoGPT model.py) rather than from the Backend ops: guards the wiring
// (residuals, LayerNorm placement, tied head) that finite differences cannot see.
std::vector<double> reference_losses(const ParamLayout& pl, const std::vector<float>& params,
                                     const std::vector<int32_t>& tokens, const std::vector<int32_t>& targets) {
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
    const float* P = params.data() + pl.unit_offset(1 + l);
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
  const TrainOptions o = frozen(1);
  const ParamLayout pl(o.model);
  const std::vector<float> params = perturbed_params(pl, 8);
  const Evaluation got = evaluate(o, params);
  std::vector<int32_t> tokens, targets;
  synthetic_tokens(o.data_seed, o.model.vocab)->read(0, 1, o.model.seq, tokens, targets);
  const auto want = reference_losses(pl, params, tokens, targets);
  double mean = 0;
  for (int t = 0; t < o.model.seq; ++t) {
    // fp32 through 2 layers of O(1) activations: ~1e-6 relative; 1e-4 leaves margin, while any
    // wiring error moves a loss of ≈ 4 by far more.
    EXPECT_NEAR(got.token_losses[t], want[t], 1e-4 * want[t]) << "token " << t;
    mean += want[t] / o.model.seq;
  }
  EXPECT_NEAR(got.loss, mean, 1e-4 * mean);
}

// Analytic gradients of the mean loss vs finite differences on parameters of every tensor kind.
// The loss is the mean of fp32 per-token losses (≈ 4.2 each, summed in double); their rounding
// (~5e-7) over 2ε = 2e-2 gives ~3e-5 noise against gradients of 1e-4 … 1e-1, hence atol 1e-4,
// rtol 2e-2.
TEST(GptModel, ParameterGradientsMatchFiniteDifferences) {
  const TrainOptions o = frozen(2);
  const ParamLayout pl(o.model);
  std::vector<float> params = perturbed_params(pl, 3);
  const Evaluation base = evaluate(o, params);
  const EmbedUnit& e = pl.embed();
  const LayerUnit& l = pl.layer();
  const size_t L0 = pl.unit_offset(1), L1 = pl.unit_offset(2);
  const std::pair<const char*, size_t> probes[] = {{"wte", e.wte + 5},
                                                   {"wte", e.wte + 32 * 17 + 3},
                                                   {"wpe", e.wpe + 40},
                                                   {"lnf.w", e.lnfw + 7},
                                                   {"lnf.b", e.lnfb + 2},
                                                   {"ln1.w", L1 + l.ln1w + 1},
                                                   {"ln1.b", L1 + l.ln1b + 9},
                                                   {"qkv.w q", L1 + l.qkvw + 10},
                                                   {"qkv.w k", L1 + l.qkvw + 32 * 32 + 77},
                                                   {"qkv.w v", L1 + l.qkvw + 2 * 32 * 32 + 5},
                                                   {"qkv.b", L1 + l.qkvb + 70},
                                                   {"proj.w", L1 + l.projw + 100},
                                                   {"proj.b", L1 + l.projb + 4},
                                                   {"ln2.w", L1 + l.ln2w + 3},
                                                   {"fc.w", L1 + l.fcw + 500},
                                                   {"fc.b", L1 + l.fcb + 12},
                                                   {"fcproj.w", L1 + l.fcprojw + 900},
                                                   {"fcproj.b", L1 + l.fcprojb + 31},
                                                   {"layer0 qkv.w", L0 + l.qkvw + 2000},
                                                   {"layer0 fc.w", L0 + l.fcw + 1234}};
  const double eps = 1e-2;
  for (const auto& [name, i] : probes) {
    const float orig = params[i];
    params[i] = orig + static_cast<float>(eps);
    const double up = evaluate(o, params).loss;
    params[i] = orig - static_cast<float>(eps);
    const double down = evaluate(o, params).loss;
    params[i] = orig;
    const double fd = (up - down) / (2 * eps);
    EXPECT_NEAR(base.grads[i], fd, 1e-4 + 2e-2 * std::abs(fd)) << name << " index " << i;
  }
}

}  // namespace
}  // namespace gcb::models
