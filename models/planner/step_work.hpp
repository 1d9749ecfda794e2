// The work one rank of a pipeline stage does per micro-batch and per step, as lists the cost
// models price: GEMM shapes, attention calls and element-wise calls of the forward, the backward
// and what recomputation reruns; the collectives of each kind with their bytes per call and calls.
// It follows the engine (gpt_layers.cpp, tp_comm, dp_comm, model_states, pipeline_schedule), so
// that Σ calls × bytes per kind equals theory.hpp's comm_bytes and the calls equal what the engine
// records (both tested).
#pragma once

#include <vector>

#include "models/model/comm_stats.hpp"
#include "models/planner/compute_model.hpp"
#include "models/planner/elementwise_ops.hpp"
#include "models/model/train_options.hpp"

namespace gcb::models::planner {

// The attention cost the planner prices (not a kernel choice: the engine's kernels are the
// attention registry's, kernels/attention/attention_registry.hpp): fused, flash-style (the engine's;
// no T × T tensor is stored) or materialised — scores, softmax and, with dropout, its mask and
// output written to memory, as Megatron-LM ran before flash attention (Korthikanti et al. 2022
// Table 2's 5·a·s²·b).
struct AttentionCostModel {
  bool flash = true;
  bool dropout = false;  // attention dropout (materialised attention only)
};

struct GemmCall {
  GemmShape shape;
  double count = 0;
};
struct AttnCall {
  AttnShapeCall shape;
  double count = 0;
};

// One pass over a micro-batch.
struct PassWork {
  std::vector<GemmCall> gemm;
  std::vector<AttnCall> attn;
  std::vector<EwCall> elementwise;  // LayerNorms, bias loops, residuals, GELU, embedding, cross-entropy
  double flops() const;             // GEMM FLOPs 2mnk + attention FLOPs (FlashAttention convention)
  double elementwise_bytes() const { return ew_bytes(elementwise); }
};

struct CommCall {
  CommKind kind = CommKind::all_reduce;
  double bytes = 0;  // logical buffer of one call (comm_stats.hpp)
  double calls = 0;
  bool embedding_unit = false;  // a dp collective of the embedding unit (reduced after the schedule)
};

struct StageWork {
  int stage = 0, layers = 0;
  bool first = true, last = true;
  PassWork forward, backward, recompute;  // per micro-batch
  std::vector<CommCall> per_micro_batch;  // tp collectives, pp sends and receives, ZeRO-3 gathers
  std::vector<CommCall> per_step;         // dp reductions, ZeRO-1/2 gathers, SP tails, tied embedding, loss
  std::vector<EwCall> optimizer;          // gradient zeroing and AdamW, once per step
  // --offload optimizer (model_states.hpp): AdamW leaves `optimizer` for the host; bytes per step
  // the gradients' copy out (d2h), the parameters' copy back (h2d) and the host AdamW's memory
  // traffic (host_adamw.hpp: reads g, m, v, master; writes m, v, master and, in mixed precision, the
  // rounded parameters).
  double offload_d2h = 0, offload_h2d = 0, host_adamw_bytes = 0;
  // --offload activations: bytes per step of the saved activations out and back (theory.hpp
  // activation_offload_bytes).
  double swap_d2h = 0, swap_h2d = 0;
};

// Element-wise calls follow gpt_layers.cpp op by op on tp rank 0 (which adds the row-parallel
// biases), with the bytes each op's loop reads and writes (elementwise_ops.hpp). A materialised
// attention adds, per score element of the rank's a/t heads, the memory traffic of QKᵀ's output,
// the softmax, dropout and AV's input: forward 4·A (no dropout) or 6·A + 1, backward twice that;
// its FLOPs stay those of the two batched GEMMs.
StageWork stage_work(const TrainOptions& o, const ParallelLayout& lay, int stage,
                     const AttentionCostModel& attention = {});

// Σ calls × bytes of kind k over a step of m micro-batches (theory's comm_bytes counting).
double step_comm_bytes(const StageWork& w, CommKind k, int micro_batches);
double step_comm_calls(const StageWork& w, CommKind k, int micro_batches);

}  // namespace gcb::models::planner
