// Shared by the engine tests: run a layout for a few steps with ranks as threads and collect what
// each rank saw; compare a run with a reference within a tolerance, parameter by parameter.
#pragma once

#include <string>
#include <vector>

#include "models/engine/engine.hpp"

namespace gcb::models::test {

struct RankOutcome {
  std::vector<double> losses;
  std::vector<double> grad_norms;  // per step (TrainingStep::last_grad_norm)
  std::vector<float> params;
  std::vector<float> grads;           // of the last step, with keep_grads only
  std::vector<float> initial_params;  // before the first step
  MemoryStats mem;                    // between steps, engine alive: current = the persistent bytes
  MemoryStats host_mem;               // the same, host memory (--offload optimizer)
  OffloadBytes offload;               // bytes the last step copied device ↔ host
  CommStats comm;                     // of the last step
  size_t padded = 0;
  int dp_rank = 0, tp_rank = 0, pp_rank = 0;
  double lane_busy = 0, bucket_wait = 0;  // phase timer figures over all steps
};

// Gradient clipping in the engine tests: below the global gradient norm of every `tiny` step they
// run (observed 1.0 … 2.2 for 1–4 layers over 3 steps at lr 1e-2), so the clip coefficient scales every step and a norm
// that missed a shard, counted a replicated piece twice or differed between ZeRO stages would change the results.
inline constexpr double kTinyGradClip = 0.5;

// `tiny` with `layers` layers, AdamW lr 1e-2, weight decay 0.1 (the default groups), gradient
// clipping at kTinyGradClip. Adam's update m̂/(√v̂ + eps)
// divides by |g|: for a component whose true gradient is within a few thousand roundings of zero
// (zero-initialised biases; q and k weights while attention is near uniform) the default eps 1e-8
// turns summation-order noise into a full lr-sized update difference (observed up to 1e-5 after
// 3 steps at lr 1e-2 for tp2-sp in fp32, against 1e-6 allowed). eps = 1e-4 bounds that
// amplification; every other difference is unchanged (max observed < 1e-6). A wiring error shows
// up as O(lr) = 1e-2 differences under either eps.
TrainOptions tiny_options(int layers, int micro_batch, int grad_accum, Precision precision = Precision::fp32);

// One layout of a table-driven test.
struct LayoutCase {
  const char* name;
  ParallelLayout lay;
  int layers, micro_batch, grad_accum;
  bool sp;
  ZeroStage zero;
  PipeSchedule schedule;
  Recompute recompute = Recompute::none;
  int recompute_every = 1;  // full: layers per recomputed block
};
TrainOptions case_options(const LayoutCase& k, Precision precision = Precision::fp32);

// `steps` steps of `o` on `lay` (ranks as threads, CpuBackend); one outcome per world rank.
// keep_grads: also the last step's full_grads().
std::vector<RankOutcome> run_layout(const ParallelLayout& lay, const TrainOptions& o, int steps = 3,
                                    bool keep_grads = false);

// The single-rank run of the same global batch: dp·m micro-batches of B sequences, no ZeRO, no SP.
RankOutcome single_rank_reference(const ParallelLayout& lay, const TrainOptions& o, int steps = 3,
                                  bool keep_grads = false);

// The key bias (second third of qkv.b) has an identically zero gradient: adding q·b_k to every
// score of a softmax row changes nothing. Its trained value is rounding noise that Adam scales by
// lr/eps, different for every summation order, so comparing it would compare noise; it is
// checked to stay within `bound` of 0 instead.
bool is_key_bias(const GptConfig& c, size_t i);

// Losses within rtol; every parameter within rtol·max(|want|, floor) (a floor of 0.1 for
// parameters near 0, where relative error is meaningless; weights are O(0.02 … 1)); key biases
// within key_bias_bound of 0. On failure, the largest difference per tensor kind is reported.
struct Tolerance {
  double rtol = 1e-5;
  double floor = 0.1;
  double key_bias_bound = 1e-4;
};
void expect_close(const RankOutcome& got, const RankOutcome& want, const GptConfig& c, const Tolerance& tol,
                  const std::string& what);

// Per tensor kind (embedding, ln1, the q, k and v weights, qkv biases, proj, ln2, fc, fcproj; each
// summed over layers), ‖got − want‖₂ / ‖want − want.initial‖₂: how far apart two runs ended,
// relative to how far training moved those weights. Key biases are left out (pure noise).
struct TensorError {
  std::string tensor;
  double relative = 0;
};
std::vector<TensorError> relative_update_errors(const RankOutcome& got, const RankOutcome& want, const GptConfig& c);

}  // namespace gcb::models::test
