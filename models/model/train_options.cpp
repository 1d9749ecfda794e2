// Precision, offload and schedule names and policies of a training run (train_options.hpp): precision_name,
// offload_name, lr_schedule_name, scheduled_lr and precision_policy, the dtypes a bf16 or fp32 run keeps each
// model state in. The command line reads the names back through train_option_names.hpp's tables.
#include "models/model/train_options.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numbers>

namespace gcb::models {

std::string_view precision_name(Precision p) { return p == Precision::bf16 ? "bf16" : "fp32"; }

std::string_view offload_name(Offload o) {
  switch (o) {
    case Offload::none: return "none";
    case Offload::optimizer: return "optimizer";
    case Offload::activations: return "activations";
    case Offload::optimizer_activations: return "optimizer+activations";
  }
  return "none";
}

PrecisionPolicy precision_policy(Precision p) {
  if (p == Precision::bf16) return {DType::bf16, DType::bf16, DType::bf16, true};
  return {};
}

std::string_view lr_schedule_name(LrSchedule s) { return s == LrSchedule::cosine ? "cosine" : "constant"; }

double scheduled_lr(const OptimizerOptions& o, int64_t step) {
  const double lr = o.adam.lr, it = static_cast<double>(step - 1), warmup = o.warmup_steps;
  if (it < warmup) return lr * (it + 1.0) / (warmup + 1.0);
  if (o.schedule == LrSchedule::constant) return lr;
  const double min_lr = o.min_lr, decay = o.decay_steps;
  if (it > decay) return min_lr;
  const double ratio = (it - warmup) / (decay - warmup);
  const double coeff = 0.5 * (1.0 + std::cos(std::numbers::pi * ratio));
  return min_lr + coeff * (lr - min_lr);
}

float clip_coefficient(double norm, double max_norm) {
  const float coef = static_cast<float>(max_norm) / (static_cast<float>(norm) + 1e-6f);
  return std::min(coef, 1.0f);
}

std::string optimizer_error(const OptimizerOptions& o) {
  const AdamWArgs& a = o.adam;
  if (!(a.lr >= 0.0f) || !std::isfinite(a.lr)) return fmt::format("--lr {}: expected a finite value ≥ 0", a.lr);
  if (!(a.weight_decay >= 0.0f) || !std::isfinite(a.weight_decay))
    return fmt::format("--weight-decay {}: expected a finite value ≥ 0", a.weight_decay);
  if (!(a.beta1 >= 0.0f && a.beta1 < 1.0f)) return fmt::format("--beta1 {}: expected 0 ≤ beta1 < 1", a.beta1);
  if (!(a.beta2 >= 0.0f && a.beta2 < 1.0f)) return fmt::format("--beta2 {}: expected 0 ≤ beta2 < 1", a.beta2);
  if (!(a.eps > 0.0f) || !std::isfinite(a.eps)) return fmt::format("--eps {}: expected a finite value > 0", a.eps);
  if (!(o.grad_clip >= 0.0) || !std::isfinite(o.grad_clip))
    return fmt::format("--grad-clip {}: expected a finite value ≥ 0 (0: no clipping)", o.grad_clip);
  if (o.warmup_steps < 0) return fmt::format("--lr-warmup-steps {}: expected ≥ 0", o.warmup_steps);
  if (o.schedule == LrSchedule::cosine) {
    if (o.decay_steps <= o.warmup_steps) {
      return fmt::format("--lr-decay-steps {} must exceed --lr-warmup-steps {} for the cosine schedule", o.decay_steps,
                         o.warmup_steps);
    }
    if (!(o.min_lr >= 0.0f && o.min_lr <= a.lr))
      return fmt::format("--min-lr {}: expected 0 ≤ min-lr ≤ --lr {}", o.min_lr, a.lr);
  }
  return "";
}

std::string layout_error(const TrainOptions& o, const ParallelLayout& lay) {
  const GptConfig& c = o.model;
  if (lay.dp < 1 || lay.tp < 1 || lay.pp < 1) return "dp, tp and pp must be ≥ 1";
  if (o.micro_batch < 1 || o.grad_accum < 1) {
    return fmt::format("micro-batch ({}) and gradient accumulation ({}) must be ≥ 1", o.micro_batch, o.grad_accum);
  }
  if (c.heads % lay.tp != 0) return fmt::format("tp {} does not divide heads {}", lay.tp, c.heads);
  if (c.hidden % lay.tp != 0) return fmt::format("tp {} does not divide hidden {}", lay.tp, c.hidden);
  if (lay.pp > c.layers) return fmt::format("pp {} > layers {}", lay.pp, c.layers);
  if (o.sp && (o.micro_batch * c.seq) % lay.tp != 0) {
    return fmt::format("sp: micro-batch × seq = {} is not divisible by tp {}", o.micro_batch * c.seq, lay.tp);
  }
  if (o.recompute_every < 1) return fmt::format("--recompute-every {}: expected ≥ 1 layers", o.recompute_every);
  if (o.recompute_every > 1 && o.recompute != Recompute::full) {
    return fmt::format("--recompute-every {} recomputes blocks of layers: it needs --recompute full",
                       o.recompute_every);
  }
  if (o.recompute_every > c.layers / lay.pp) {  // the smallest stage (rank_units.hpp stage_layers)
    return fmt::format("--recompute-every {} > {} layers of the smallest pipeline stage", o.recompute_every,
                       c.layers / lay.pp);
  }
  return "";
}

}  // namespace gcb::models
