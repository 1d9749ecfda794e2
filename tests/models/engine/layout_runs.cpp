#include "tests/models/engine/layout_runs.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "collectives/thread_communicator.hpp"
#include "models/backend/cpu/cpu_backend.hpp"

namespace gcb::models::test {
namespace {

// Tensor kinds of the canonical layout: a layer's tensors (each summed over layers), then the
// embedding unit.
const std::vector<const char*>& kind_names() {
  static const std::vector<const char*> names = {"ln1",  "qkvw.q", "qkvw.k", "qkvw.v", "qkvb",
                                                 "proj", "ln2",    "fc",     "fcproj", "embedding"};
  return names;
}

size_t tensor_kind(const GptConfig& c, size_t i) {
  const size_t C = static_cast<size_t>(c.hidden);
  const auto emb = static_cast<size_t>(embedding_param_count(c));
  const auto layer = static_cast<size_t>(layer_param_count(c));
  if (i < emb) return kind_names().size() - 1;
  const size_t ends[] = {2 * C,
                         2 * C + C * C,
                         2 * C + 2 * C * C,
                         2 * C + 3 * C * C,
                         5 * C + 3 * C * C,
                         6 * C + 4 * C * C,
                         8 * C + 4 * C * C,
                         12 * C + 8 * C * C,
                         13 * C + 12 * C * C};
  const size_t w = (i - emb) % layer;
  size_t k = 0;
  while (w >= ends[k]) ++k;
  return k;
}

}  // namespace

TrainOptions tiny_options(int layers, int micro_batch, int grad_accum, Precision precision) {
  TrainOptions o;
  ConfigOverrides c;
  c.layers = layers;
  o.model = apply_overrides(named_config("tiny"), c);
  o.micro_batch = micro_batch;
  o.grad_accum = grad_accum;
  o.precision = precision;
  o.optim.adam.lr = 1e-2f;
  o.optim.adam.weight_decay = 0.1f;
  o.optim.adam.eps = 1e-4f;
  o.optim.grad_clip = kTinyGradClip;
  return o;
}

TrainOptions case_options(const LayoutCase& k, Precision precision) {
  TrainOptions o = tiny_options(k.layers, k.micro_batch, k.grad_accum, precision);
  o.sp = k.sp;
  o.zero = k.zero;
  o.schedule = k.schedule;
  o.recompute = k.recompute;
  o.recompute_every = k.recompute_every;
  return o;
}

std::vector<RankOutcome> run_layout(const ParallelLayout& lay, const TrainOptions& o, int steps, bool keep_grads) {
  std::vector<RankOutcome> out(static_cast<size_t>(lay.world()));
  run_ranks(lay.world(), [&](Communicator& world) {
    ParallelGroups ctx = make_parallel_groups(world, lay);
    CpuBackend be;
    PhaseTimer phases;
    RankOutcome r;
    r.dp_rank = ctx.dp_rank;
    r.tp_rank = ctx.tp_rank;
    r.pp_rank = ctx.pp_rank;
    {
      auto engine = make_training_step(be, ctx, o);
      r.initial_params = engine->full_params();
      engine->set_phase_timer(&phases);
      for (int s = 0; s < steps; ++s) {
        r.losses.push_back(engine->step());
        r.grad_norms.push_back(engine->last_grad_norm());
      }
      engine->set_phase_timer(nullptr);
      r.comm = engine->last_step_comm();
      r.padded = engine->padded_params();
      r.mem = be.memory();
      r.host_mem = be.host_memory();
      r.offload = engine->last_step_offload();
      r.params = engine->full_params();
      if (keep_grads) r.grads = engine->full_grads();
    }
    const auto lane = phases.spans().find("comm_lane");
    r.lane_busy = lane == phases.spans().end() ? 0.0 : lane->second;
    const auto wait = phases.exclusive().find("comm:bucket_wait");
    r.bucket_wait = wait == phases.exclusive().end() ? 0.0 : wait->second;
    out[static_cast<size_t>(world.rank())] = std::move(r);
  });
  return out;
}

RankOutcome single_rank_reference(const ParallelLayout& lay, const TrainOptions& o, int steps, bool keep_grads) {
  TrainOptions one = o;
  one.grad_accum = o.grad_accum * lay.dp;
  one.sp = false;
  one.zero = ZeroStage::none;
  one.overlap_comm = false;
  return run_layout(ParallelLayout{}, one, steps, keep_grads)[0];
}

bool is_key_bias(const GptConfig& c, size_t i) {
  const auto emb = static_cast<size_t>(embedding_param_count(c));
  const auto layer = static_cast<size_t>(layer_param_count(c));
  if (i < emb) return false;
  const size_t C = static_cast<size_t>(c.hidden), within = (i - emb) % layer;
  const size_t qkvb = 2 * C + 3 * C * C;  // after ln1.w, ln1.b, qkv.w
  return within >= qkvb + C && within < qkvb + 2 * C;
}

void expect_close(const RankOutcome& got, const RankOutcome& want, const GptConfig& c, const Tolerance& tol,
                  const std::string& what) {
  ASSERT_EQ(got.losses.size(), want.losses.size()) << what;
  for (size_t i = 0; i < got.losses.size(); ++i) {
    EXPECT_NEAR(got.losses[i], want.losses[i], tol.rtol * std::abs(want.losses[i])) << what << " step " << i;
  }
  ASSERT_EQ(got.params.size(), want.params.size()) << what;
  size_t bad = 0;
  for (size_t i = 0; i < got.params.size(); ++i) {
    const double g = got.params[i], w = want.params[i];
    const bool ok = is_key_bias(c, i) ? std::abs(g) <= tol.key_bias_bound && std::abs(w) <= tol.key_bias_bound
                                      : std::abs(g - w) <= tol.rtol * std::max(std::abs(w), tol.floor);
    if (!ok && bad++ < 5) ADD_FAILURE() << what << ": param " << i << " got " << g << " want " << w;
  }
  EXPECT_EQ(bad, 0u) << what;
  if (bad == 0) return;
  // Where the differences are: max |got − want| per tensor kind.
  std::vector<double> mx(kind_names().size(), 0.0);
  for (size_t i = 0; i < got.params.size(); ++i) {
    const size_t k = tensor_kind(c, i);
    mx[k] = std::max(mx[k], std::abs(static_cast<double>(got.params[i]) - want.params[i]));
  }
  for (size_t k = 0; k < mx.size(); ++k) ADD_FAILURE() << what << " max diff " << kind_names()[k] << " " << mx[k];
}

std::vector<TensorError> relative_update_errors(const RankOutcome& got, const RankOutcome& want, const GptConfig& c) {
  std::vector<double> diff(kind_names().size(), 0.0), moved(kind_names().size(), 0.0);
  for (size_t i = 0; i < want.params.size(); ++i) {
    if (is_key_bias(c, i)) continue;
    const size_t k = tensor_kind(c, i);
    const double d = static_cast<double>(got.params[i]) - want.params[i];
    const double u = static_cast<double>(want.params[i]) - want.initial_params[i];
    diff[k] += d * d;
    moved[k] += u * u;
  }
  std::vector<TensorError> out;
  for (size_t k = 0; k < diff.size(); ++k) out.push_back({kind_names()[k], std::sqrt(diff[k] / moved[k])});
  return out;
}

}  // namespace gcb::models::test
