// One layout's prediction: memory per device by category (memory_model.hpp) and the step time
//   step = m·max_s T_s + (Σ_s T_s − max_s T_s)/v            (the pipeline: steady state + fill/drain)
//        + max_s (exposed dp communication + optimizer + offload + per-step collectives)
// where T_s, one micro-batch on stage s, = forward + backward + recomputation (each GEMM and
// attention call at its calibrated or interpolated rate × the layout's shared-host contention,
// each element-wise call on its roofline, compute_model.hpp) + the tensor-parallel collectives, pipeline sends and
// ZeRO-3 gathers in its path (the engine and Megatron block on them). With v = 1 and equal stages this is (m + p −
// 1)·T, the bubble (p − 1)/(m + p − 1) of theory.hpp; v > 1 is interleaved 1F1B (Narayanan et al. 2021 §2.2.2), whose
// pipeline messages grow v-fold. dp gradient reductions overlap the last micro-batch's backward when the layout
// overlaps (the engine's --overlap), else they follow it. offload (--offload optimizer, ZeRO-Offload;
// model_states.hpp): the gradients to the host and the parameters back at the host link's rates and
// the host AdamW at the host's memory bandwidth, in series after the schedule as the engine runs
// them (no overlap with the next forward).
#pragma once

#include <string>
#include <vector>

#include "models/planner/cluster.hpp"
#include "models/planner/comm_model.hpp"
#include "models/planner/compute_model.hpp"
#include "models/planner/memory_model.hpp"
#include "models/model/sweep.hpp"

namespace gcb::models::planner {

struct Candidate {
  LayoutSpec layout;  // dp, tp, pp, sp, zero, schedule, overlap
  int micro_batch = 1;
  Recompute recompute = Recompute::none;
  int virtual_stages = 1;               // interleaved 1F1B model chunks (1: plain GPipe / 1F1B)
  int recompute_every = 1;              // full recomputation in blocks of K layers (train_options.hpp Recompute)
  Offload offload = Offload::none;      // --offload (optimizer: ZeRO-Offload; activations: swapping)
  std::string name() const;             // "dp2-zero1-tp2-sp-pp2-1f1b[-v2]-mb4-full[-k3][-offload][-swap]"
  std::string recompute_label() const;  // "none", "selective", "full", "full-k3" (blocks of 3 layers)
};

std::string_view recompute_name(Recompute r);
// A layout name's offload suffix: "" (none), "-offload" (optimizer), "-swap" (activations),
// "-offload-swap" (both).
std::string_view offload_suffix(Offload o);

// A candidate of `layout` (its canonical name filled in) with the given micro-batch,
// recomputation and interleaving.
Candidate make_candidate(LayoutSpec layout, int micro_batch, Recompute recompute, int virtual_stages = 1,
                         Offload offload = Offload::none);

// What a prediction needs besides the layout.
struct PlanModel {
  GptConfig model;
  int global_batch = 1;  // sequences per step
  Precision precision = Precision::bf16;
  AttentionCostModel attention;
  // Megatron's scatter/gather of pipeline messages over the tp ranks (Narayanan et al. 2021 §4.1):
  // each tp rank sends 1/t over the inter-node tier, an all-gather rebuilds it on the intra-node one.
  bool pp_scatter_gather = false;
  Cluster cluster;
  ComputeModel compute;
  CommModel comm;
};

struct TimeBreakdown {
  // The bottleneck stage's m micro-batches (seconds per step).
  double forward = 0, backward = 0, recompute = 0;
  double gemm = 0, attention = 0, elementwise = 0;  // the same three passes by kind of work
  // The GEMM seconds per step of stage 0, whose ranks include rank 0 (Megatron order: tp, dp,
  // then pp): what rank 0's measured matmul time is compared with. It differs from `gemm` when
  // another stage is the bottleneck — the last stage's LM head [T, C]·[C, V] is often the
  // largest GEMM of a small model.
  double gemm_stage0 = 0;
  double contention = 1;  // the factor of the GEMM and attention times (layout_contention)
  double tp_comm = 0, pp_comm = 0, zero3_gather = 0;
  double bubble = 0;  // pipeline fill and drain: step part − m·max_s T_s
  // After the schedule, on the slowest stage.
  double dp_comm = 0;         // exposed gradient reductions and ZeRO-1/2 parameter gathers
  double dp_comm_hidden = 0;  // reductions overlapped with backward
  double optimizer = 0;
  double offload = 0;     // --offload optimizer: gradients out, host AdamW, parameters back
  double other_comm = 0;  // SP LayerNorm/bias tails, tied-embedding exchange, loss
  double step = 0;
};

struct Prediction {
  Candidate candidate;
  TrainOptions options;  // as the engine would run it (vocabulary padded when tp needs it)
  StageMemory memory;    // the stage with the most bytes
  TimeBreakdown time;
  int bottleneck_stage = 0;  // the stage with the longest micro-batch
  double tokens_per_s = 0;
  double mfu = 0, mfu_palm = 0, hfu = 0;  // %, of the cluster's peak (theory.hpp conventions)
  // Achieved model FLOP/s per GPU: the model FLOPs of a step (causal, MFU's convention) over the
  // step time and the GPUs — Megatron-LM's "teraFLOP/s per GPU" (Narayanan et al. 2021).
  double model_flops_per_gpu = 0;
  double memory_limit = 0;
  // --offload: the most host bytes a rank of any stage holds, and each rank's share of the node's
  // host memory (Cluster::host_memory_bytes / GPUs per node; 0 = not checked).
  double host_peak = 0, host_limit = 0;
  bool host_fits() const { return host_limit <= 0 || host_peak <= host_limit; }
  bool device_fits() const { return memory.total() <= memory_limit; }
  bool fits() const { return device_fits() && host_fits(); }
};

// The factor GEMM and attention calls of a layout take on a host whose ranks share the cores,
// from κ (compute_model.hpp SharedHostRates, measured with all `dp·tp·pp` ranks computing at
// once): 1 + (κ − 1)·ρ, where ρ is the share of the other ranks busy while a rank computes — its
// dp·tp peers always (they run the same stage in lockstep), and a rank of stage s' for
// max(0, m − |s − s'|) of stage s's m micro-batch slots (equal stages, the fill and drain of
// GPipe and 1F1B alike), averaged over s. Assumes the slowdown grows linearly with the busy
// ranks. 1 when κ = 1 or there is one rank.
double layout_contention(double kappa, int dp, int tp, int pp, int micro_batches);

// The engine's options for a candidate: the layout's choices, micro-batch, recomputation,
// grad_accum = G/(dp·B), the padded vocabulary.
TrainOptions candidate_options(const PlanModel& pm, const Candidate& c);

// The memory of the candidate's stage with the most bytes (what predict() puts in Prediction::memory).
StageMemory candidate_memory(const PlanModel& pm, const Candidate& c);

Prediction predict(const PlanModel& pm, const Candidate& c);

}  // namespace gcb::models::planner
