// The model states of one rank — parameters, gradients, fp32 master weights (mixed precision)
// and Adam moments — partitioned over the dp group as ZeRO does (Rajbhandari et al. 2019,
// arXiv:1910.02054 §5), per local unit (rank_units.hpp, each padded to a multiple of dp):
//   zero 0: everything full on every rank; gradients all-reduced.
//   zero 1 (P_os): full parameters and gradients; master, m and v only for the own shard;
//           gradients reduce-scattered, updated shards all-gathered.
//   zero 2 (P_os+g): full parameters; the only persistent gradient is the own shard. A unit's
//           full gradient exists as a bucket from its first micro-batch's backward until its
//           gradient is complete for the step, is reduce-scattered into the shard and freed.
//   zero 3 (P_os+g+p): only parameter shards persist. A unit is all-gathered before each use
//           and freed after it; gradients as zero 2; Adam on the shards, nothing to gather after.
// Every stage reduces a unit's gradient once per step, after the micro-batches are summed
// (DDP's no_sync), and the reduce-scatter gives the all-reduce's elements, so zero 1, 2 and 3
// are bitwise equal to zero 0 with gradient accumulation too. The price, against DeepSpeed's
// reduce-scatter per micro-batch: with m > 1 a bucket lives across micro-batches; the traffic is
// Ψ reduce-scattered per step instead of m·Ψ. Under --overlap a reduced bucket is freed once the
// reductions are waited for.
// Under --offload optimizer (ZeRO-Offload, Ren et al. 2021 §4; train_options.hpp Offload) master,
// m and v live in host memory (Backend::alloc_host) with the same elements as on the device, the
// master always (fp32 training: the fp32 weights' host copy), beside two host buffers of the
// same elements: the gradients copied out (their device type) and, in mixed precision, the updated
// parameters rounded to their type on their way back. The device keeps params and grads as above.
#pragma once

#include <cstdint>
#include <vector>

#include "models/backend/backend.hpp"
#include "models/engine/comm/dp_comm.hpp"
#include "models/model/rank_units.hpp"
#include "models/model/train_options.hpp"

namespace gcb::models {

class ModelStates {
 public:
  ModelStates(Backend& be, const RankUnits& units, ZeroStage zero, const PrecisionPolicy& policy, Offload offload,
              DpComm& dp, int dp_rank);

  // Every local element from the canonical initialisation (param_layout.hpp), or from a full
  // canonical parameter vector (host, fp32; e.g. a checkpoint).
  void initialize(uint64_t seed);
  void load(const std::vector<float>& canonical);

  void begin_step();  // gradients to zero
  // The parameters of local unit i for one use (ZeRO-3: gathered into a new buffer; pair with
  // release(i)); other stages: the persistent buffer.
  View acquire(size_t i);
  void release(size_t i);
  // The buffer backward accumulates unit i's gradient into (zero 2/3: a bucket made on first use).
  View grads(size_t i);
  // Unit i's gradient is complete for the step: the dp reduction (launched, asynchronous under
  // --overlap).
  void reduce(size_t i);
  // Waits for the launched reductions and frees the buckets they read.
  void finish_reductions();
  // AdamW on the own elements; decay_groups: weight decay only where RankUnits::decay_segments says
  // (the parameter groups), else on every element.
  void optimizer_step(const AdamWArgs& a, bool decay_groups);
  // out (fp64, one element) = Σ g² in double over this rank's share of the step's reduced
  // gradients: of every local unit the dp shard this rank owns under ZeRO (the same range at every
  // stage, zero 0 included, so the sum's order does not depend on the stage), of that only the
  // pieces this rank counts — replicated pieces on tp rank 0 (tp_leader) only, the embedding unit
  // only where count_embedding (its tied copy on the last stage is counted by the first). Summed
  // over the dp, tp and pp groups this is the squared global norm (Megatron-LM
  // megatron/core/optimizer/clip_grads.py get_grad_norm_fp32). Call after finish_reductions().
  void grad_square_sum(View out, bool tp_leader, bool count_embedding);

  enum class Values : uint8_t { weights, grads };
  // Local unit i's weights (the fp32 master copy where one exists) or reduced gradients, whole
  // (gathered over dp where sharded, not counted as step communication), as fp32 on the host.
  std::vector<float> unit_to_host(size_t i, Values which);

  size_t padded_params() const { return units_.padded_total(); }
  // Bytes the last optimizer_step copied device → host (gradients) and host → device (parameters)
  // under offload; 0 without.
  const OffloadBytes& last_step_offload() const { return offload_bytes_; }

 private:
  // Writes a full padded fp32 unit into the parameter and master storage of unit i.
  void distribute(size_t i, View full);
  View grad_shard(size_t i) const;
  // The elements of unit i this rank updates: [begin, end) of the padded unit, the index of
  // element `begin` in the optimizer states, and where it lives in the parameters and gradients.
  struct Updated {
    size_t begin, end, state;
    View params, grads;
  };
  Updated updated(size_t i) const;
  void device_step(const AdamWArgs& a, bool decay_groups);
  void offloaded_step(const AdamWArgs& a, bool decay_groups);

  Backend& be_;
  const RankUnits& units_;
  ZeroStage zero_;
  PrecisionPolicy policy_;
  bool offload_;
  DpComm& dp_;
  int dp_rank_;
  // params_: full (zero 0–2) or own shards (zero 3); grads_: full (zero 0/1) or shards (2/3);
  // master_, m_, v_: full (zero 0) or shards (1–3); host memory under offload, beside host_grads_
  // and host_params_ (mixed precision) of the same elements.
  Buffer params_, grads_, master_, m_, v_, host_grads_, host_params_;
  OffloadBytes offload_bytes_;
  std::vector<Buffer> buckets_, gathered_, retired_;  // per local unit; retired: awaiting wait()
};

}  // namespace gcb::models
