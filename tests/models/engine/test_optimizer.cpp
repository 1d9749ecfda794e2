// The optimizer as practitioners configure it (models/model/train_options.hpp OptimizerOptions): the
// learning-rate schedule against nanoGPT's get_lr, torch's clip coefficient, the parameter groups
// (rank_units.hpp decay_segments, also on ZeRO shards that cross tensor boundaries; LayerNorm and
// biases untouched by weight decay) and global gradient-norm clipping (the norm the engine
// computes over shards and ranks equals the host's norm of the full gradient; every layout gives
// the same norm; clipping changes the step).
#include <gtest/gtest.h>

#include <cmath>
#include <numbers>
#include <string>
#include <vector>

#include "kernels/train/adamw_math.hpp"
#include "models/backend/cpu/cpu_backend.hpp"
#include "models/model/param_layout.hpp"
#include "models/model/rank_units.hpp"
#include "models/model/train_options.hpp"
#include "tests/models/engine/layout_runs.hpp"

namespace gcb::models {
namespace {

using test::RankOutcome;
using test::run_layout;

// nanoGPT's get_lr (karpathy/nanoGPT train.py), transcribed: it is 0-based.
double nanogpt_get_lr(int it, double learning_rate, int warmup_iters, int lr_decay_iters, double min_lr) {
  if (it < warmup_iters) return learning_rate * (it + 1) / (warmup_iters + 1);
  if (it > lr_decay_iters) return min_lr;
  const double decay_ratio = static_cast<double>(it - warmup_iters) / (lr_decay_iters - warmup_iters);
  const double coeff = 0.5 * (1.0 + std::cos(std::numbers::pi * decay_ratio));
  return min_lr + coeff * (learning_rate - min_lr);
}

TEST(Optimizer, CosineScheduleIsNanoGptsGetLr) {
  OptimizerOptions o;
  o.adam.lr = 6e-4f;
  o.schedule = LrSchedule::cosine;
  o.warmup_steps = 10;
  o.decay_steps = 100;
  o.min_lr = 6e-5f;
  const double lr = o.adam.lr, min_lr = o.min_lr;
  // Known points: the first warm-up step, the last, the peak, half-way down, the floor and past it.
  EXPECT_DOUBLE_EQ(scheduled_lr(o, 1), lr / 11);
  EXPECT_DOUBLE_EQ(scheduled_lr(o, 10), lr * 10 / 11);
  EXPECT_DOUBLE_EQ(scheduled_lr(o, 11), lr);
  EXPECT_NEAR(scheduled_lr(o, 56), min_lr + 0.5 * (lr - min_lr), 1e-18);
  EXPECT_NEAR(scheduled_lr(o, 101), min_lr, 1e-18);
  EXPECT_DOUBLE_EQ(scheduled_lr(o, 150), min_lr);
  for (int step = 1; step <= 120; ++step)
    EXPECT_DOUBLE_EQ(scheduled_lr(o, step), nanogpt_get_lr(step - 1, lr, 10, 100, min_lr)) << step;
}

TEST(Optimizer, ConstantScheduleWarmsUpThenHolds) {
  OptimizerOptions o;
  o.adam.lr = 1e-3f;
  EXPECT_DOUBLE_EQ(scheduled_lr(o, 1), o.adam.lr);
  EXPECT_DOUBLE_EQ(scheduled_lr(o, 1000), o.adam.lr);
  o.warmup_steps = 3;
  EXPECT_DOUBLE_EQ(scheduled_lr(o, 1), o.adam.lr * 0.25);
  EXPECT_DOUBLE_EQ(scheduled_lr(o, 3), o.adam.lr * 0.75);
  EXPECT_DOUBLE_EQ(scheduled_lr(o, 4), o.adam.lr);
  EXPECT_DOUBLE_EQ(scheduled_lr(o, 500), o.adam.lr);
}

TEST(Optimizer, ClipCoefficientIsTorchs) {
  EXPECT_EQ(clip_coefficient(4.0, 1.0), 1.0f / (4.0f + 1e-6f));
  EXPECT_EQ(clip_coefficient(0.5, 1.0), 1.0f);  // clamped: never scales up
  EXPECT_EQ(clip_coefficient(1.0, 1.0), 1.0f / (1.0f + 1e-6f));
}

TEST(Optimizer, BadSettingsAreNamed) {
  const auto error = [](auto change) {
    OptimizerOptions o;
    o.decay_steps = 10;
    change(o);
    return optimizer_error(o);
  };
  EXPECT_EQ(error([](OptimizerOptions&) {}), "");
  EXPECT_NE(error([](OptimizerOptions& o) { o.adam.lr = -1; }).find("--lr"), std::string::npos);
  EXPECT_NE(error([](OptimizerOptions& o) { o.adam.beta1 = 1; }).find("--beta1"), std::string::npos);
  EXPECT_NE(error([](OptimizerOptions& o) { o.adam.beta2 = -0.1f; }).find("--beta2"), std::string::npos);
  EXPECT_NE(error([](OptimizerOptions& o) { o.adam.eps = 0; }).find("--eps"), std::string::npos);
  EXPECT_NE(error([](OptimizerOptions& o) { o.adam.weight_decay = -1; }).find("--weight-decay"), std::string::npos);
  EXPECT_NE(error([](OptimizerOptions& o) { o.grad_clip = -1; }).find("--grad-clip"), std::string::npos);
  EXPECT_NE(error([](OptimizerOptions& o) { o.grad_clip = NAN; }).find("--grad-clip"), std::string::npos);
  EXPECT_NE(error([](OptimizerOptions& o) { o.warmup_steps = -1; }).find("--lr-warmup-steps"), std::string::npos);
  EXPECT_NE(error([](OptimizerOptions& o) {
              o.schedule = LrSchedule::cosine;
              o.warmup_steps = 10;
            }).find("--lr-decay-steps"),
            std::string::npos);
}

// The backend side: adamw_multi gives the tensors outside the decay group weight decay 0 and
// scales every gradient by grad_scale first (the fp32 product clip_grad_norm_ writes); sum_squares
// is Σx² in double.
TEST(Optimizer, BackendHonoursDecayGroupsAndGradScale) {
  CpuBackend be;
  std::vector<float> p = {1.0f, -0.5f}, g = {0.3f, 2e-3f}, m(2, 0.0f), v(2, 0.0f);
  AdamWArgs a;
  a.lr = 1e-2f;
  a.weight_decay = 0.1f;
  a.grad_scale = 0.25f;
  const View P{p.data(), DType::f32}, G{g.data(), DType::f32};
  be.adamw_multi(
      {{P, G, m.data(), v.data(), nullptr, 1, true}, {P.at(1), G.at(1), m.data() + 1, v.data() + 1, nullptr, 1, false}},
      a);
  namespace kt = kernels::train;
  float w0 = 1.0f, w1 = -0.5f, m0 = 0, v0 = 0, m1 = 0, v1 = 0;
  kt::adamw_element(0.3f * 0.25f, m0, v0, w0, kt::adamw_step(a.lr, a.beta1, a.beta2, a.eps, 0.1f, 1));
  kt::adamw_element(2e-3f * 0.25f, m1, v1, w1, kt::adamw_step(a.lr, a.beta1, a.beta2, a.eps, 0.0f, 1));
  EXPECT_EQ(p[0], w0);
  EXPECT_EQ(p[1], w1);
  EXPECT_EQ(m[1], m1);
  std::vector<float> x = {3.0f, -4.0f, 1e-3f};
  double out = 7.0;
  be.sum_squares(View{&out, DType::f64}, View{x.data(), DType::f32}, 3, true);
  const double d = 1e-3f;
  EXPECT_EQ(out, 7.0 + 9.0 + 16.0 + d * d);
  be.sum_squares(View{&out, DType::f64}, View{x.data(), DType::f32}, 2, false);
  EXPECT_EQ(out, 25.0);
}

// Whether canonical element `i` (full_params order) decays: wte, wpe and the four linear weights.
bool decays(const ParamLayout& p, size_t i) {
  const EmbedUnit& e = p.embed();
  if (i < p.unit_offset(1)) return i < e.lnfw;  // wte, wpe first in the embedding unit
  const LayerUnit& l = p.layer();
  const size_t w = (i - p.unit_offset(1)) % l.size;
  for (const auto& [b, n] : {std::pair{l.qkvw, l.qkvb - l.qkvw}, std::pair{l.projw, l.projb - l.projw},
                             std::pair{l.fcw, l.fcb - l.fcw}, std::pair{l.fcprojw, l.fcprojb - l.fcprojw}}) {
    if (w >= b && w < b + n) return true;
  }
  return false;
}

// Every element of every local unit of several layouts: the runs of all dp shards tile the padded
// unit, and each element's flag is its canonical tensor's (pieces map local to canonical).
TEST(Optimizer, DecaySegmentsOfZeroShardsFollowTheTensors) {
  const GptConfig c = named_config("tiny");
  const ParamLayout canon(c);
  for (const ParallelLayout lay : {ParallelLayout{3, 1, 1}, ParallelLayout{2, 2, 1}, ParallelLayout{5, 2, 2}}) {
    for (int t = 0; t < lay.tp; ++t) {
      for (int s = 0; s < lay.pp; ++s) {
        const RankUnits units(c, lay, t, s);
        for (const LocalUnit& u : units.units()) {
          std::vector<int> flag(u.spec.padded, -1);  // -1: padding (no canonical element)
          for (const Piece& pc : u.pieces) {
            for (size_t k = 0; k < pc.len; ++k)
              flag[pc.local + k] = decays(canon, canon.unit_offset(u.unit) + pc.canonical + k) ? 1 : 0;
          }
          size_t next = 0, crossing = 0;
          for (int r = 0; r < lay.dp; ++r) {
            const auto segs = units.decay_segments(u, u.spec.begin(r), u.spec.end(r), true);
            ASSERT_FALSE(segs.empty());
            crossing += segs.size() > 1 ? 1 : 0;
            for (size_t k = 0; k < segs.size(); ++k) {
              const DecaySegment& g = segs[k];
              EXPECT_EQ(g.begin, next) << "runs tile the shards in order";
              if (k > 0) {
                EXPECT_NE(g.decay, segs[k - 1].decay) << "adjacent runs are merged";
              }
              for (size_t e = g.begin; e < g.begin + g.len; ++e) {
                if (flag[e] >= 0) {
                  ASSERT_EQ(flag[e] == 1, g.decay) << "unit " << u.unit << " element " << e;
                }
              }
              next = g.begin + g.len;
            }
          }
          EXPECT_EQ(next, u.spec.padded);
          if (lay.dp > 1) {
            EXPECT_GT(crossing, 0u) << "some shard crosses a decay boundary";
          }
          // Without groups: one decaying run per range.
          const auto all = units.decay_segments(u, 0, u.spec.padded, false);
          ASSERT_EQ(all.size(), 1u);
          EXPECT_TRUE(all[0].decay);
          EXPECT_EQ(all[0].len, u.spec.padded);
        }
      }
    }
  }
  // A hand-made case: layer shards of dp 3 (tiny: C = 32). The first shard holds qkv.w (decays),
  // qkv.b (not), then proj.w and fc.w (decay).
  const RankUnits units(c, ParallelLayout{3, 1, 1}, 0, 0);
  const LocalUnit& layer = units.units()[1];
  const LocalLayer& l = units.layer();
  const auto segs = units.decay_segments(layer, 0, layer.spec.shard, true);
  ASSERT_GE(segs.size(), 3u);
  EXPECT_EQ(segs[0], (DecaySegment{0, l.qkvb, true}));
  EXPECT_EQ(segs[1], (DecaySegment{l.qkvb, l.projw - l.qkvb, false}));
  EXPECT_EQ(segs[2].begin, l.projw);
  EXPECT_TRUE(segs[2].decay);
}

TrainOptions one_step_options() {
  TrainOptions o = test::tiny_options(2, 2, 1);
  o.optim.grad_clip = 0;  // the groups alone
  return o;
}

// One step from the same weights: with groups, LayerNorm parameters and biases take the update
// of weight decay 0, bit for bit, and the matrices that of --decay-all; the reverse differs.
TEST(Optimizer, GroupsLeaveLayerNormAndBiasesUndecayed) {
  const GptConfig c = test::tiny_options(2, 2, 1).model;
  const ParamLayout canon(c);
  for (const ParallelLayout lay : {ParallelLayout{1, 1, 1}, ParallelLayout{2, 1, 1}}) {
    TrainOptions groups = one_step_options(), none = groups, all = groups;
    none.optim.adam.weight_decay = 0.0f;
    all.optim.decay_groups = false;
    for (TrainOptions* o : {&groups, &none, &all}) o->zero = lay.dp > 1 ? ZeroStage::two : ZeroStage::none;
    const RankOutcome g = run_layout(lay, groups, 1)[0], n = run_layout(lay, none, 1)[0],
                      a = run_layout(lay, all, 1)[0];
    ASSERT_EQ(g.params.size(), canon.total());
    size_t undecayed_differ = 0, decayed_differ = 0, ln_weights = 0;
    for (size_t i = 0; i < g.params.size(); ++i) {
      if (decays(canon, i)) {
        ASSERT_EQ(g.params[i], a.params[i]) << "matrix " << i << " as --decay-all";
        decayed_differ += g.params[i] != n.params[i] ? 1 : 0;
      } else {
        ASSERT_EQ(g.params[i], n.params[i]) << "bias / LayerNorm " << i << " without decay";
        undecayed_differ += g.params[i] != a.params[i] ? 1 : 0;
        ln_weights += g.initial_params[i] == 1.0f ? 1 : 0;
      }
    }
    // LayerNorm weights start at 1, so decay would move them: the groups must have made a difference.
    EXPECT_GT(ln_weights, 0u);
    EXPECT_GE(undecayed_differ, ln_weights) << "dp" << lay.dp;
    EXPECT_GT(decayed_differ, g.params.size() / 2) << "dp" << lay.dp;
  }
}

double host_norm(const std::vector<float>& g) {
  double s = 0;
  for (float x : g) s += static_cast<double>(x) * x;
  return std::sqrt(s);
}

// The norm the engine clips with is the host's norm of the full reduced gradient (full_grads, the
// unclipped gradients the step read), on every rank of every layout, and every layout's norm is the
// single rank's within summation-order noise. Clipping is on (kTinyGradClip) and scales.
TEST(Optimizer, GradNormIsTheGlobalNormOnEveryLayout) {
  struct Case {
    const char* name;
    ParallelLayout lay;
    bool sp;
    ZeroStage zero;
  };
  const Case cases[] = {{"dp2", {2, 1, 1}, false, ZeroStage::none},
                        {"dp2-zero1", {2, 1, 1}, false, ZeroStage::one},
                        {"dp2-zero3", {2, 1, 1}, false, ZeroStage::three},
                        {"tp2", {1, 2, 1}, false, ZeroStage::none},
                        {"tp2-sp", {1, 2, 1}, true, ZeroStage::none},
                        {"pp2", {1, 1, 2}, false, ZeroStage::none},
                        {"dp2-tp2-pp2-zero2", {2, 2, 2}, true, ZeroStage::two}};
  const int steps = 2;
  TrainOptions base = test::tiny_options(2, 2, 1);
  for (const Case& k : cases) {
    TrainOptions o = base;
    o.sp = k.sp;
    o.zero = k.zero;
    const RankOutcome one = test::single_rank_reference(k.lay, o, steps, true);
    ASSERT_EQ(one.grad_norms.size(), static_cast<size_t>(steps));
    EXPECT_NEAR(one.grad_norms.back(), host_norm(one.grads), 1e-12 * host_norm(one.grads)) << k.name;
    for (double n : one.grad_norms) EXPECT_GT(n, test::kTinyGradClip) << k.name << ": the clip must scale";
    const std::vector<RankOutcome> ranks = run_layout(k.lay, o, steps, true);
    for (const RankOutcome& r : ranks) {
      ASSERT_EQ(r.grad_norms.size(), static_cast<size_t>(steps));
      EXPECT_EQ(r.grad_norms, ranks[0].grad_norms) << k.name << ": every rank clips with the same norm";
      EXPECT_NEAR(r.grad_norms.back(), host_norm(r.grads), 1e-12 * host_norm(r.grads)) << k.name;
      for (int s = 0; s < steps; ++s)
        EXPECT_NEAR(r.grad_norms[s], one.grad_norms[s], 1e-5 * one.grad_norms[s]) << k.name << " step " << s;
    }
  }
}

// Clipping changes the step (the layout tests would not notice a clip that never applies), and
// --grad-clip 0 computes no norm.
TEST(Optimizer, ClippingChangesTheStepAndZeroTurnsItOff) {
  TrainOptions clipped = test::tiny_options(2, 2, 1), off = clipped;
  off.optim.grad_clip = 0;
  const RankOutcome a = run_layout(ParallelLayout{}, clipped, 2)[0], b = run_layout(ParallelLayout{}, off, 2)[0];
  EXPECT_NE(a.params, b.params);
  for (double n : b.grad_norms) EXPECT_TRUE(std::isnan(n));
  for (double n : a.grad_norms) EXPECT_TRUE(std::isfinite(n));
}

}  // namespace
}  // namespace gcb::models
