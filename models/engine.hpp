// Training engines behind one TrainingStep interface. Rank code is a function of a RankContext
// (DESIGN.md "World"): the world communicator split into dp / tp / pp groups in Megatron's rank
// order (tp varies fastest, then dp, then pp: rank = tp_rank + tp·(dp_rank + dp·pp_rank)). This
// file's engines implement the dp dimension (replicated DP and ZeRO-1/2/3); tp, pp and sp are the
// Megatron engine's (make_parallel_training_step), combined with every ZeRO stage.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "collectives/communicator.hpp"
#include "models/backend.hpp"
#include "models/config.hpp"

namespace gcb::models {

struct ParallelLayout {
  int dp = 1, tp = 1, pp = 1;
  int world() const { return dp * tp * pp; }
};

struct RankContext {
  ParallelLayout layout;
  int rank = 0;  // in the world
  int dp_rank = 0, tp_rank = 0, pp_rank = 0;
  Communicator* world = nullptr;        // not owned
  std::unique_ptr<Communicator> dp;     // ranks with the same (tp_rank, pp_rank)
  std::unique_ptr<Communicator> tp;     // ranks with the same (dp_rank, pp_rank)
  std::unique_ptr<Communicator> pp;     // ranks with the same (tp_rank, dp_rank)
};

// Collective over `world` (every rank calls it). gcb::UsageError when dp·tp·pp ≠ world size.
RankContext make_rank_context(Communicator& world, const ParallelLayout& layout);

enum class ZeroStage : uint8_t { none = 0, one = 1, two = 2, three = 3 };
// Pipeline schedules: GPipe (all forwards, then all backwards; Huang et al. 2019) and 1F1B
// (PipeDream-Flush, Narayanan et al. 2021): p − s − 1 warm-up forwards, then one forward / one
// backward. Both run backwards in micro-batch order 0…m−1, so they give bitwise equal results.
enum class PipeSchedule : uint8_t { gpipe, one_f_one_b };

struct TrainOptions {
  GptConfig model;
  ZeroStage zero = ZeroStage::none;
  int micro_batch = 1;  // sequences per micro-batch (per dp rank)
  int grad_accum = 1;   // micro-batches per dp rank per step
  uint64_t seed = 1234; // parameter init
  uint64_t data_seed = 42;
  Recompute recompute = Recompute::none;  // activation recomputation (GptModel)
  bool sp = false;      // sequence parallelism in the tp group (Korthikanti et al. 2022)
  PipeSchedule schedule = PipeSchedule::gpipe;  // pp > 1
  // DP and ZeRO-1 (tp = pp = 1, no sp): run each gradient bucket's collective on a CommLane so it
  // overlaps the rest of backward; the engine waits for all of them before the optimizer.
  bool overlap_comm = false;
  AdamWArgs adam{};     // adam.step is ignored: the engine counts steps
};

// Communication per kind, counted as the logical buffer of each call: all_reduce = count,
// reduce_scatter = dp·count (its input), all_gather = dp·count (its output), in bytes.
// The first four are the dp dimension; the tp_* kinds are Megatron's activation collectives
// (plus, under SP, the per-step all-reduce of the sequence-parallel LayerNorm/bias gradients,
// counted as tp_all_reduce); pp_send / pp_recv are pipeline activations and activation gradients
// (counted by the sender and the receiver respectively); pp_embed is the per-step exchange of the
// tied embedding gradient between the first and the last stage (sent bytes).
enum class CommKind : uint8_t {
  all_reduce, reduce_scatter, all_gather, loss_all_reduce,
  tp_all_reduce, tp_all_gather, tp_reduce_scatter, pp_send, pp_recv, pp_embed
};
inline constexpr size_t kCommKinds = 10;
struct CommCounter {
  int64_t calls = 0;
  int64_t bytes = 0;
};
struct CommStats {
  std::array<CommCounter, kCommKinds> by_kind{};
  const CommCounter& operator[](CommKind k) const { return by_kind[static_cast<size_t>(k)]; }
};
std::string_view comm_kind_name(CommKind k);

class TrainingStep {
 public:
  virtual ~TrainingStep() = default;
  virtual std::string name() const = 0;
  // Runs one optimizer step on the next global batch (dp · grad_accum · micro_batch sequences)
  // and returns its mean per-token loss, the only value read back inside a step. Collective
  // over the rank context.
  virtual float step() = 0;
  // All parameters in canonical order (units concatenated, padding dropped), read to the host.
  // Collective (ZeRO-3 gathers); for tests and checkpoints, never inside a step.
  virtual std::vector<float> full_params() = 0;
  // Communication of the most recent step().
  virtual const CommStats& last_step_comm() const = 0;
  // Padded parameter count Ψ_pad = Σ over units of the unit size rounded up to a multiple of dp.
  virtual size_t padded_params() const = 0;
  // Phase split of later steps (forward, backward, optimizer, comm:<kind>); null turns it off.
  void set_phase_timer(PhaseTimer* t) { phases_ = t; }

 protected:
  PhaseTimer* phases_ = nullptr;
};

// tp > 1, pp > 1 or sp: the Megatron engine (models/parallel_engine.cpp), zero 0–3 on dp.
std::unique_ptr<TrainingStep> make_parallel_training_step(Backend& be, RankContext& ctx,
                                                          const TrainOptions& opt);
// One line describing why (opt, layout) cannot run, or "" (checked before any allocation):
// heads, hidden and vocab divisible by tp; B·T divisible by tp under SP; pp ≤ layers.
std::string layout_error(const TrainOptions& opt, const ParallelLayout& layout);

// One line saying why --overlap cannot run with (opt, layout) on `dp` (null: not yet known), or "".
std::string overlap_error(const TrainOptions& opt, const ParallelLayout& layout,
                          const Communicator* dp = nullptr);

// gcb::UsageError (one line, before any allocation) for invalid combinations.
std::unique_ptr<TrainingStep> make_training_step(Backend& be, RankContext& ctx,
                                                 const TrainOptions& opt);

// Theory for one step (../shared/reference/training.md §3.2, ZeRO paper §7), as elements of the
// logical buffers counted by CommStats, with Ψ = padded params and m = grad_accum:
// DP: all-reduce Ψ (ring traffic 2Ψ); ZeRO-1: reduce-scatter Ψ + all-gather Ψ (2Ψ);
// ZeRO-2: Ψ reduce-scatter + Ψ all-gather (2Ψ); ZeRO-3: 2mΨ all-gather + Ψ reduce-scatter (3Ψ at
// m = 1). Gradients are reduced once per step, after accumulation (engine.cpp ShardedGradEngine),
// where DeepSpeed reduce-scatters every micro-batch (m·Ψ). dp = 1 communicates nothing.
struct CommTheory {
  int64_t all_reduce = 0, reduce_scatter = 0, all_gather = 0;
};
CommTheory comm_theory_elements(ZeroStage z, int64_t padded_params, int grad_accum, int dp);

// Bytes one rank sends over the wire for a collective whose logical buffer (as CommStats counts
// it) is `bytes`, under ring algorithms (nccl-tests PERFORMANCE.md; ZeRO paper §7):
// all-reduce 2(n−1)/n·S, reduce-scatter and all-gather (n−1)/n·S. This is where "2Ψ for DP,
// 3Ψ for ZeRO-3" comes from as n grows.
double ring_wire_bytes(CommKind kind, double bytes, int n);

// Per-rank bytes of the persistent model states outside a step (fp32, 4 bytes per element),
// ZeRO paper §3.1 / training.md §3.1 with K = 8 (fp32 m and v; no separate master in fp32):
// params 4Ψ (ZeRO-3: 4Ψ/Nd), grads 4Ψ (ZeRO-2/3: 4Ψ/Nd), m and v 4Ψ each (ZeRO-1+: /Nd).
struct StateBytes {
  size_t params = 0, grads = 0, adam_m = 0, adam_v = 0;
};
StateBytes expected_state_bytes(ZeroStage z, size_t padded_params, int dp);

// Layers of pipeline stage s: a contiguous block, the first L mod p stages one more.
int stage_layers(int layers, int pp, int stage);
int stage_first_layer(int layers, int pp, int stage);

// Analytic per-rank counts for the Megatron engine (tp/pp/sp), derived in docs/readme-train.md
// "TP, SP and PP". Ranks are identified by their pp stage (tp and dp ranks are symmetric).
// Parameters per rank (elements, each unit padded to a multiple of dp): a layer holds
// (12C² + 7C)/t tp-sharded + 6C replicated; the embedding unit VC/t + TC + 2C, held by the first
// and the last stage (tied wte, Megatron keeps one copy per end of the pipeline).
size_t parallel_stage_params(const GptConfig& c, const ParallelLayout& lay, int stage);
// ZeRO paper §3.1 on the dp dimension over these per-rank elements (zero 0–3).
StateBytes parallel_state_bytes(const TrainOptions& opt, const ParallelLayout& lay, int stage);
// Activation floats (Korthikanti et al. 2022 Table 2 adapted; see the readme).
size_t parallel_activation_floats(const TrainOptions& opt, const ParallelLayout& lay, int stage);
// Communication per step per kind (elements of logical buffers, as CommStats counts them). The dp
// kinds: zero 0 all-reduce Ψ; zero 1 and 2 reduce-scatter Ψ + all-gather Ψ (gradients reduced once
// per step, after accumulation); zero 3 reduce-scatter Ψ + all-gather m·(2·layers + ends)
// (every layer twice per micro-batch, the embedding unit once per end of the pipeline).
std::array<int64_t, kCommKinds> parallel_comm_theory(const TrainOptions& opt,
                                                     const ParallelLayout& lay, int stage);

}  // namespace gcb::models
