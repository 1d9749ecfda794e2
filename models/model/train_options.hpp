// What one training run is: the model, the parallel layout and every choice the engine makes
// (ZeRO stage, micro-batching, recomputation, sequence parallelism, pipeline schedule, overlap,
// precision, optimizer, data). The engine (engine.hpp) runs it; the theory (theory.hpp) predicts
// it from the same struct without running anything.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/dtype.hpp"
#include "models/model/adamw_args.hpp"
#include "models/model/config.hpp"

namespace gcb::models {

// dp × tp × pp ranks in Megatron's order: tp varies fastest, then dp, then pp
// (rank = tp_rank + tp·(dp_rank + dp·pp_rank)).
struct ParallelLayout {
  int dp = 1, tp = 1, pp = 1;
  int world() const { return dp * tp * pp; }
};

enum class ZeroStage : uint8_t { none = 0, one = 1, two = 2, three = 3 };

// Pipeline schedules: GPipe (all forwards, then all backwards; Huang et al. 2019) and 1F1B
// (PipeDream-Flush, Narayanan et al. 2021): p − s − 1 warm-up forwards, then one forward / one
// backward. Both run backwards in micro-batch order 0…m−1, so they give bitwise equal results.
// Without a pipeline (pp = 1) every micro-batch runs forward then backward.
enum class PipeSchedule : uint8_t { gpipe, one_f_one_b };

// Activation recomputation (Korthikanti et al. 2022): selective recomputes the attention core
// (its output and log-sum-exp) from the saved qkv before each layer's backward; full keeps only
// each layer's output and reruns the whole layer forward. Results are bitwise identical.
// Full recomputation in blocks of K layers (TrainOptions::recompute_every; Chen et al. 2016,
// "Training Deep Nets with Sublinear Memory Cost" §3–4): a stage's layers form blocks of K
// consecutive layers (the last block holds the remainder), only each block's output (the next
// block's input) is kept per micro-batch, and before the block's backward its whole forward runs
// again from its input, holding its K layers' tensors in one set shared by every block and
// micro-batch: O(L/K + K) layers of activations, still one extra forward of every layer. K = 1
// is plain full recomputation.
enum class Recompute : uint8_t { none, selective, full };

// fp32: every tensor fp32, the parameters are the weights. bf16: parameters, gradients and
// activations in bf16 with fp32 master weights and fp32 Adam moments (mixed precision,
// Micikevicius et al. 2018; 2 + 2 + 4 + 4 + 4 = 16 bytes per parameter, the ZeRO paper's K = 12).
enum class Precision : uint8_t { fp32, bf16 };
std::string_view precision_name(Precision p);

// The element types a precision stores each kind of tensor in.
struct PrecisionPolicy {
  DType params = DType::f32;
  DType grads = DType::f32;
  DType activations = DType::f32;
  bool master_weights = false;  // fp32 master copy beside lower-precision parameters
};
PrecisionPolicy precision_policy(Precision p);

// CPU offload (Ren et al. 2021, "ZeRO-Offload", USENIX ATC '21 §4). optimizer: the fp32 master
// weights (in fp32 training a host copy of the parameters) and Adam's m and v of the elements this
// rank updates live in host memory; each step the reduced gradients this rank updates are copied to
// the host, AdamW runs there (host_adamw.hpp, the device kernel's arithmetic), and the updated
// parameters are copied back. Without ZeRO-Offload's one-step delayed update, so the results are
// bitwise those of the same run without offload. The gradients go out in one batch with one wait;
// the parameters come back unit by unit, each copy enqueued as soon as the host has updated its
// unit, so that a device copies unit i while the host updates unit i + 1. The copies are not
// overlapped with the next step's forward, whose kernels queue behind them on the same stream
// (that would take a second stream and a wait per unit before its forward). Device memory keeps
// the parameters and gradients (model_states.hpp).
// activations ("CPU swapping", as DeepSpeed's activation checkpointing `cpu_checkpointing` and
// Megatron-LM's `--cpu-offloading` do for saved tensors): the tensors a layer keeps for its
// backward go to host memory right after its forward and come back right before they are read in
// backward, through two device working sets (activations.hpp); synchronous too, so the losses are
// bitwise those without offload. Both: optimizer+activations.
enum class Offload : uint8_t { none = 0, optimizer = 1, activations = 2, optimizer_activations = 3 };
constexpr bool offloads_optimizer(Offload o) { return (static_cast<uint8_t>(o) & 1) != 0; }
constexpr bool offloads_activations(Offload o) { return (static_cast<uint8_t>(o) & 2) != 0; }
// "none", "optimizer", "activations", "optimizer+activations" (train_option_names.hpp reads them
// back, and "activations+optimizer" too).
std::string_view offload_name(Offload o);
// Bytes one step copies between a rank's device and host memory under offload: gradients out and
// parameters back (optimizer), saved activations out and back (activations).
struct OffloadBytes {
  size_t d2h = 0, h2d = 0;
  OffloadBytes& operator+=(const OffloadBytes& o) {
    d2h += o.d2h;
    h2d += o.h2d;
    return *this;
  }
};

// The learning-rate schedule: constant, or nanoGPT's (karpathy/nanoGPT train.py get_lr): a linear
// warm-up over the first warmup steps, then a cosine decay to min_lr at decay_steps, min_lr after.
// Both warm up when warmup_steps > 0.
enum class LrSchedule : uint8_t { constant, cosine };
std::string_view lr_schedule_name(LrSchedule s);

// The optimizer as practitioners configure it (nanoGPT, llm.c, Megatron-LM): AdamW with two
// parameter groups (decay on matrices and embeddings, none on biases and LayerNorm parameters;
// rank_units.hpp decay_segments), a learning-rate schedule and global gradient-norm clipping.
struct OptimizerOptions {
  // lr is the peak learning rate; weight_decay applies to the decaying group. adam.step and
  // adam.grad_scale are ignored: the engine sets them every step.
  AdamWArgs adam{1e-3f, 0.9f, 0.95f, 1e-8f, 0.1f};
  bool decay_groups = true;  // false: weight decay on every tensor (LayerNorm and biases too)
  LrSchedule schedule = LrSchedule::constant;
  int warmup_steps = 0;  // linear warm-up steps (both schedules)
  int decay_steps = 0;   // cosine: the step at which min_lr is reached (> warmup_steps)
  float min_lr = 0.0f;   // cosine: the floor
  // Clip the global gradient norm to this (torch.nn.utils.clip_grad_norm_'s max_norm; Megatron-LM
  // clip_grad 1.0, nanoGPT grad_clip 1.0, llm.c grad_clip 1.0); 0: no clipping and no norm.
  double grad_clip = 1.0;
};

// The learning rate of 1-based step `step` (nanoGPT get_lr with it = step − 1), in double.
double scheduled_lr(const OptimizerOptions& o, int64_t step);
// torch.nn.utils.clip_grad_norm_'s coefficient: min(1, max_norm / (norm + 1e-6)), in fp32 as torch
// computes it from an fp32 norm.
float clip_coefficient(double norm, double max_norm);
// "" when the settings are usable, else what is wrong (the CLI's usage error).
std::string optimizer_error(const OptimizerOptions& o);

struct TrainOptions {
  GptConfig model;
  ZeroStage zero = ZeroStage::none;
  int micro_batch = 1;      // sequences per micro-batch (per dp rank)
  int grad_accum = 1;       // micro-batches per dp rank per step
  uint64_t seed = 1234;     // parameter initialisation
  uint64_t data_seed = 42;  // synthetic tokens
  std::string data_file;    // token file (llm.c or nanoGPT format); empty: synthetic tokens
  Recompute recompute = Recompute::none;
  int recompute_every = 1;                      // full: layers per recomputed block (K; 1 ≤ K ≤ stage layers)
  bool sp = false;                              // sequence parallelism in the tp group (Korthikanti et al. 2022)
  PipeSchedule schedule = PipeSchedule::gpipe;  // pp > 1
  // Gradient reductions of the dp group run asynchronously (a comm stream, or a second thread
  // for host communicators) while backward goes on; the optimizer waits for them.
  bool overlap_comm = false;
  Precision precision = Precision::fp32;
  Offload offload = Offload::none;
  OptimizerOptions optim{};
  // Rows of the LM head's logits computed at a time (0: all B·T at once). The head runs its GEMM,
  // cross-entropy and backward GEMMs chunk by chunk, so a rank holds chunk·V/t logits instead of
  // B·T·V/t (models/engine/gpt_layers.hpp head()).
  int logit_rows = 0;
};

// One line describing why (o, layout) cannot run, or "" (checked before any allocation): heads
// and hidden divisible by tp (the vocabulary is padded where tp does not divide it); B·T divisible by tp under SP; pp ≤
// layers; positive counts; --recompute-every K only with full recomputation and K ≤ the layers
// of every stage.
std::string layout_error(const TrainOptions& o, const ParallelLayout& layout);

}  // namespace gcb::models
