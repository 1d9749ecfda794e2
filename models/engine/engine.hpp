// The training engine: one optimizer step of the GPT model under any layout — data parallelism
// with ZeRO 0–3 (model_states.hpp), Megatron tensor and sequence parallelism (gpt_layers.hpp),
// pipeline parallelism with GPipe or 1F1B (pipeline_schedule.hpp), activation recomputation,
// overlapped gradient reduction and mixed precision — on any compute Backend. Data parallelism
// alone is tp = pp = 1; one rank is the single-device model.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "models/backend/backend.hpp"
#include "models/model/comm_stats.hpp"
#include "models/engine/parallel_groups.hpp"
#include "models/model/train_options.hpp"

namespace gcb::models {

class TrainingStep {
 public:
  virtual ~TrainingStep() = default;
  virtual std::string name() const = 0;
  // Runs one optimizer step on the next global batch (dp · grad_accum · micro_batch sequences)
  // and returns its mean per-token loss (before the update), the only value read back inside a
  // step. Collective over the rank context.
  virtual double step() = 0;
  // All weights in canonical order (param_layout.hpp; the fp32 master copy under mixed precision),
  // read to the host. Collective (sharded states are gathered); never inside a step.
  virtual std::vector<float> full_params() = 0;
  // The gradients the last step() applied (reduced over dp: the gradient of its mean loss), in
  // canonical order. Collective.
  virtual std::vector<float> full_grads() = 0;
  // Replaces every weight with `canonical` (full_params() order, e.g. a checkpoint). Collective.
  virtual void load_params(const std::vector<float>& canonical) = 0;
  // Communication of the most recent step().
  virtual const CommStats& last_step_comm() const = 0;
  // Bytes the most recent step() copied between device and host memory (--offload optimizer).
  virtual const OffloadBytes& last_step_offload() const = 0;
  // The most recent step()'s global gradient norm (before clipping; every rank the same value) and
  // learning rate; the norm is NaN when clipping is off (--grad-clip 0: no norm is computed).
  virtual double last_grad_norm() const = 0;
  virtual double last_lr() const = 0;
  // Ψ of this rank: its units' sizes, each rounded up to a multiple of dp.
  virtual size_t padded_params() const = 0;
  // Per-token losses of this rank's last micro-batch (last pipeline stage; backend memory).
  virtual const float* token_losses() const = 0;
  // Phase split of later steps (forward, backward, optimizer, comm:<kind>); null turns it off.
  virtual void set_phase_timer(PhaseTimer* t) = 0;
};

// One line saying why --overlap cannot run with `dp` (the rank's dp communicator; null: not yet
// known) in `layout`, or "". A host communicator runs overlapped collectives on a second thread:
// it must allow that (serialized), and concurrently with the tp and pp groups when they exist.
std::string overlap_error(const TrainOptions& o, const ParallelLayout& layout, const Communicator* dp = nullptr);

// gcb::UsageError (one line, before any allocation) for invalid combinations, and for
// communicators that move another kind of memory than the backend computes in.
std::unique_ptr<TrainingStep> make_training_step(Backend& be, ParallelGroups& ctx, const TrainOptions& o);

}  // namespace gcb::models
