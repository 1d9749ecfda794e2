// Every analytic count of a training step, in one place: FLOPs per token, model-state and
// activation bytes per rank, communication per kind and the pipeline bubble, for any layout,
// from the options alone (nothing runs). step_theory() is the one entry point; the engine's
// measurements equal its model-state, activation and communication figures exactly (the tests
// assert it), and docs/readme-train.md derives each formula.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "models/model/comm_stats.hpp"
#include "models/model/config.hpp"
#include "models/model/train_options.hpp"

namespace gcb::models {

enum class FlopsConvention : uint8_t {
  causal,  // 6N + 6·L·C·T: attention scores counted causal-halved (llm.c, Megatron today)
  palm,    // 6N + 12·L·C·T: full attention matrix (PaLM, Narayanan et al. 2021, torchtitan)
};

// Model FLOPs per trained token (forward + backward, no recompute): the MFU numerator.
// Sources: llm.c train_gpt2.cu (6N + 6LCT), PaLM appendix B / torchtitan metrics.py (6N + 12LCT).
// N includes the tied embedding.
double model_flops_per_token(const GptConfig& c, FlopsConvention conv);
// Hardware FLOPs per token: model FLOPs plus what recomputation runs again (HFU, Korthikanti et
// al. 2022 §6.3). full: one more forward of every layer (2·N_layers + attention forward, which is
// 2·L·C·T causal / 4·L·C·T full), for any block size K (Chen et al. 2016 §3: each block's forward
// runs once more); selective: the attention core forward only (same attention term).
double hardware_flops_per_token(const GptConfig& c, FlopsConvention conv, Recompute r);

// Per-rank bytes of the persistent model states (ZeRO paper §3.1 and Fig. 1: 2Ψ + 2Ψ + KΨ with
// K = 12 in mixed precision — fp32 master, m, v — and K = 8 in fp32, where the parameters are the
// master copy), Ψ = the rank's padded parameters, N_d = dp:
//   zero 0: everything Ψ; 1: master, m, v Ψ/N_d; 2: + grads Ψ/N_d; 3: + params Ψ/N_d.
struct StateBytes {
  size_t params = 0, grads = 0, master = 0, adam_m = 0, adam_v = 0;
  size_t total() const { return params + grads + master + adam_m + adam_v; }
};
// Under --offload optimizer (ZeRO-Offload, Ren et al. 2021 §4) master, m and v leave the device:
// these are then the device's bytes, and host_state_bytes the host's.
StateBytes zero_state_bytes(ZeroStage z, size_t padded_params, int dp, const PrecisionPolicy& p,
                            Offload off = Offload::none);
// The host's model-state bytes per rank under offload (model_states.hpp), of the n elements the
// rank updates (n = Ψ at zero 0, Ψ/N_d from zero 1): master 4n (fp32 training too: the weights'
// host copy), m 4n, v 4n, the gradients copied out G·n and, in mixed precision, the parameters on
// their way back P·n. All zero without offload.
StateBytes host_state_bytes(ZeroStage z, size_t padded_params, int dp, const PrecisionPolicy& p, Offload off);
// Bytes one step copies under offload: G·n gradients to the host, P·n parameters back.
OffloadBytes offload_bytes(ZeroStage z, size_t padded_params, int dp, const PrecisionPolicy& p, Offload off);

// The parameter units of a tp rank, each padded to a multiple of dp (the engine's LocalUnit spec):
// a layer (12C² + 7C)/t + 6C, the embedding unit V_p·C/t + TC + 2C (V_p the padded vocabulary,
// config.hpp padded_vocab) — the granularity of gradient reductions and ZeRO gathers.
struct PaddedUnits {
  size_t layer = 0, embed = 0;
};
PaddedUnits padded_units(const GptConfig& c, const ParallelLayout& lay);

// Parameters a rank of pipeline stage `stage` holds (elements, each unit padded to a multiple of
// dp): a layer (12C² + 7C)/t tp-sharded + 6C replicated; the embedding unit V_p·C/t + TC + 2C, held
// by the first and the last stage (tied wte: Megatron keeps one copy per end of the pipeline).
size_t stage_padded_params(const GptConfig& c, const ParallelLayout& lay, int stage);

// Activation bytes a rank of `stage` allocates (activations.hpp), Korthikanti et al. 2022 Table 2
// adapted: no dropout, LayerNorm statistics and log-sum-exps in fp32, and flash attention, so the
// softmax probabilities (their 5·a·s/h term, quadratic in T) are never stored. Full recomputation
// in blocks of K layers (Chen et al. 2016 §3–4) keeps ⌈L_s/K⌉ block outputs per micro-batch in
// flight plus one working set of K layers: with a layer's tensors X and its output y,
//   slots·⌈L_s/K⌉·y + K·(X − y) + (K − 1)·y   (K = 1: slots·L_s·y + X − y, plain full).
// Under --offload activations (activations.hpp) the device keeps each slot's stage input, output
// gradient and output, two working sets of a layer's kept tensors (fewer when fewer layers keep
// any: the last layer's set lacks its output) and the shared sets and scratch; the host holds
// every other kept tensor, per slot (host_activation_bytes).
size_t activation_bytes(const TrainOptions& o, const ParallelLayout& lay, int stage);
size_t host_activation_bytes(const TrainOptions& o, const ParallelLayout& lay, int stage);
// Bytes one step copies under --offload activations: every micro-batch's host sets out after its
// forward and back before its backward, grad_accum · host sets per slot each way.
OffloadBytes activation_offload_bytes(const TrainOptions& o, const ParallelLayout& lay, int stage);

// Bytes per step per kind (comm_stats.hpp's logical buffers) a rank of `stage` communicates.
std::array<int64_t, kCommKinds> comm_bytes(const TrainOptions& o, const ParallelLayout& lay, int stage);

// Bytes one rank sends over the wire for a collective whose logical buffer is `bytes`, under ring
// algorithms (nccl-tests PERFORMANCE.md; ZeRO paper §7): all-reduce 2(n−1)/n·S, reduce-scatter
// and all-gather (n−1)/n·S. This is where "2Ψ for DP, 3Ψ for ZeRO-3" comes from as n grows.
double ring_wire_bytes(CommKind kind, double bytes, int n);

// Pipeline bubble: idle fraction of a stage, (p − 1)/(m + p − 1) for GPipe and 1F1B alike
// (Narayanan et al. 2021 §2.2); 0 without a pipeline.
double bubble_fraction(int pp, int micro_batches);

// Interleaved 1F1B (Narayanan et al. 2021 §2.2.2): each device holds v model chunks, so the
// fill and drain shrink v-fold: bubble/ideal = (p − 1)/(v·m), i.e. a fraction (p − 1)/(v·m + p − 1)
// of the step; v = 1 is bubble_fraction. The engine runs v = 1 only; the planner models v > 1.
double interleaved_bubble_fraction(int pp, int micro_batches, int virtual_stages);

// FLOPs of one iteration of `batch` sequences as Narayanan et al. 2021 (arXiv:2104.04473) count
// them, eq. (3): only the transformer's matrix multiplications and the logit layer, with full
// recomputation 96·B·s·l·h²·(1 + s/(6h) + V/(16·l·h)) — the layers' forward runs 4 times (forward,
// recompute, backward 2×), the logits 3 times. Without recomputation the layers' forward runs 3
// times: 72·B·s·l·h²·(1 + s/(6h) + V/(12·l·h)). The paper's "% of theoretical peak" divides the
// first by time × GPUs × 312 TFLOP/s, so it counts the recomputation (a hardware FLOP rate).
// Full recomputation in blocks of K layers (--recompute-every) counts as full_recompute: every
// layer's forward still runs once more, whatever K (Chen et al. 2016 §3).
double narayanan_flops_per_iteration(const GptConfig& c, int64_t batch, bool full_recompute);

// Bytes per layer a rank keeps for an attention that materialises the probabilities (no flash
// attention; Megatron-LM before it, and the runs of Narayanan et al. 2021), on top of
// activation_bytes(): Korthikanti et al. 2022 Table 2's 5·a·s²·b term per layer — softmax output
// (A bytes per element), dropout mask (1 byte) and dropout output (A) — for the rank's a/t heads;
// without dropout only the softmax output: A·(a/t)·s²·b.
size_t materialized_attention_bytes(const TrainOptions& o, const ParallelLayout& lay, bool dropout);

struct StageTheory {
  int stage = 0;
  size_t padded_params = 0;          // Ψ of a rank of this stage
  StateBytes states;                 // device (or the CPU backend's memory())
  StateBytes host_states;            // host memory under offload (Backend::host_memory())
  OffloadBytes offload;              // per step, under offload (optimizer and activations)
  size_t activation_bytes = 0;       // device
  size_t host_activation_bytes = 0;  // host, under --offload activations
  std::array<int64_t, kCommKinds> comm_bytes{};
};

struct StepTheory {
  int64_t tokens_per_step = 0;  // dp · grad_accum · micro_batch · seq
  double flops_per_token_causal = 0, flops_per_token_palm = 0;
  double hardware_flops_per_token = 0;  // causal convention, with recomputation
  double bubble = 0;
  std::vector<StageTheory> stages;  // one per pipeline stage (its tp and dp ranks are alike)
};

// Everything above for one run of `o` on `lay`.
StepTheory step_theory(const TrainOptions& o, const ParallelLayout& lay);

}  // namespace gcb::models
