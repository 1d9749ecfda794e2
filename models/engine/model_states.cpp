// ModelStates (model_states.hpp): one rank's parameters, gradients, master weights and Adam moments partitioned by ZeRO
// stage — initialize, load, acquire/release of gathered units, gradient reduction, optimizer_step.
#include "models/engine/model_states.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

#include "core/error.hpp"
#include "models/backend/host_adamw.hpp"
#include "models/engine/param_init.hpp"

namespace gcb::models {

ModelStates::ModelStates(Backend& be, const RankUnits& units, ZeroStage zero, const PrecisionPolicy& policy,
                         Offload offload, DpComm& dp, int dp_rank)
    : be_(be),
      units_(units),
      zero_(zero),
      policy_(policy),
      offload_(offloads_optimizer(offload)),
      dp_(dp),
      dp_rank_(dp_rank),
      buckets_(units.count()),
      gathered_(units.count()) {
  // Weights and master weights are written whole by distribute() (each unit's padding included,
  // from a zeroed `full`), gradients by begin_step(); Adam's moments start at zero.
  const size_t full = units.padded_total(), shard = units.shard_total();
  params_ = be.alloc(MemCategory::params, policy.params, zero == ZeroStage::three ? shard : full, AllocInit::unset);
  grads_ = be.alloc(MemCategory::grads, policy.grads, zero >= ZeroStage::two ? shard : full, AllocInit::unset);
  const size_t optimizer = zero >= ZeroStage::one ? shard : full;
  if (offload_) {
    // Host memory comes zeroed; master is written by distribute(), the gradient and parameter
    // copies by each step before they are read.
    master_ = be.alloc_host(MemCategory::master, DType::f32, optimizer);
    m_ = be.alloc_host(MemCategory::adam_m, DType::f32, optimizer);
    v_ = be.alloc_host(MemCategory::adam_v, DType::f32, optimizer);
    host_grads_ = be.alloc_host(MemCategory::grads, policy.grads, optimizer);
    if (policy.master_weights) host_params_ = be.alloc_host(MemCategory::params, policy.params, optimizer);
    return;
  }
  if (policy.master_weights) master_ = be.alloc(MemCategory::master, DType::f32, optimizer, AllocInit::unset);
  m_ = be.alloc(MemCategory::adam_m, DType::f32, optimizer, AllocInit::zeros);
  v_ = be.alloc(MemCategory::adam_v, DType::f32, optimizer, AllocInit::zeros);
}

void ModelStates::distribute(size_t i, View full) {
  const LocalUnit& u = units_.units()[i];
  const View own = full.at(u.spec.begin(dp_rank_));
  if (zero_ == ZeroStage::three) {
    be_.copy(params_.at(u.shard_offset), own, u.spec.shard);
  } else {
    be_.copy(params_.at(u.offset), full, u.spec.padded);
  }
  if (!master_) return;
  if (offload_) {  // the host's master: this rank's elements, as the device copies hold them
    const bool sharded = zero_ >= ZeroStage::one;
    be_.copy_to_host(master_.f32() + (sharded ? u.shard_offset : u.offset), (sharded ? own : full).data,
                     (sharded ? u.spec.shard : u.spec.padded) * sizeof(float));
    return;
  }
  if (zero_ >= ZeroStage::one) {
    be_.copy(master_.at(u.shard_offset), own, u.spec.shard);
  } else {
    be_.copy(master_.at(u.offset), full, u.spec.padded);
  }
}

void ModelStates::initialize(uint64_t seed) {
  for (size_t i = 0; i < units_.count(); ++i) {
    const LocalUnit& u = units_.units()[i];
    // Zeroed: the pieces leave the unit's padding out (under tp the vocabulary rows ≥ V of wte,
    // which the head's logits gemms read), and the padding is distributed with them.
    Buffer full = be_.alloc(MemCategory::workspace, DType::f32, u.spec.padded, AllocInit::zeros);
    for (const Piece& pc : u.pieces) {
      init_range(units_.canonical(), be_, full.at(pc.local), u.unit, pc.canonical, pc.canonical + pc.len, seed);
    }
    distribute(i, full.view());
  }
}

void ModelStates::load(const std::vector<float>& canonical) {
  const ParamLayout& layout = units_.canonical();
  GCB_CHECK(canonical.size() == layout.total(),
            fmt::format("parameter vector of {} elements for a model of {}", canonical.size(), layout.total()));
  for (size_t i = 0; i < units_.count(); ++i) {
    const LocalUnit& u = units_.units()[i];
    Buffer full = be_.alloc(MemCategory::workspace, DType::f32, u.spec.padded, AllocInit::zeros);  // as in initialize
    const float* unit = canonical.data() + layout.unit_offset(u.unit);
    for (const Piece& pc : u.pieces) {
      be_.copy_from_host(full.at(pc.local).data, unit + pc.canonical, pc.len * sizeof(float));
    }
    distribute(i, full.view());
  }
}

void ModelStates::begin_step() { be_.fill(grads_.view(), grads_.count(), 0.0f); }

View ModelStates::acquire(size_t i) {
  const LocalUnit& u = units_.units()[i];
  if (zero_ != ZeroStage::three) return params_.at(u.offset);
  GCB_CHECK(!gathered_[i], "ZeRO-3: unit gathered twice without release");
  gathered_[i] = dp_.gather(params_.at(u.shard_offset), u.spec, MemCategory::params);
  return gathered_[i].view();
}

void ModelStates::release(size_t i) { gathered_[i].reset(); }

View ModelStates::grads(size_t i) {
  const LocalUnit& u = units_.units()[i];
  if (zero_ < ZeroStage::two) return grads_.at(u.offset);
  Buffer& b = buckets_[i];
  // Zeroed: backward accumulates into the bucket (gemm with beta = 1, bias and LayerNorm `+=`).
  if (!b) b = be_.alloc(MemCategory::grads, policy_.grads, u.spec.padded, AllocInit::zeros);
  return b.view();
}

View ModelStates::grad_shard(size_t i) const {
  const LocalUnit& u = units_.units()[i];
  return zero_ >= ZeroStage::two ? grads_.at(u.shard_offset) : grads_.at(u.offset + u.spec.begin(dp_rank_));
}

void ModelStates::reduce(size_t i) {
  const LocalUnit& u = units_.units()[i];
  if (zero_ == ZeroStage::none) {
    dp_.all_reduce(grads_.at(u.offset), u.spec);
    return;
  }
  if (zero_ == ZeroStage::one) {
    const View g = grads_.at(u.offset);
    dp_.reduce_scatter(g, g.at(u.spec.begin(dp_rank_)), u.spec);
    return;
  }
  Buffer& bucket = buckets_[i];
  GCB_CHECK(bucket, "ZeRO-2/3: unit reduced without a gradient bucket");
  dp_.reduce_scatter(bucket.view(), grads_.at(u.shard_offset), u.spec);
  // The bucket's life ends with its reduction (a launched one still reads it).
  if (dp_.overlapped()) {
    retired_.push_back(std::move(bucket));
  } else {
    bucket.reset();
  }
}

void ModelStates::finish_reductions() {
  dp_.wait();
  retired_.clear();
}

ModelStates::Updated ModelStates::updated(size_t i) const {
  const LocalUnit& u = units_.units()[i];
  const size_t begin = zero_ == ZeroStage::none ? 0 : u.spec.begin(dp_rank_);
  const size_t end = zero_ == ZeroStage::none ? u.spec.padded : begin + u.spec.shard;
  const View p = zero_ == ZeroStage::three ? params_.at(u.shard_offset) : params_.at(u.offset + begin);
  const View g = zero_ == ZeroStage::none ? grads_.at(u.offset) : grad_shard(i);
  return {begin, end, zero_ == ZeroStage::none ? u.offset : u.shard_offset, p, g};
}

void ModelStates::offloaded_step(const AdamWArgs& a, bool decay_groups) {
  // ZeRO-Offload's step (Ren et al. 2021 §4.1): the reduced gradients out, AdamW on the host, the
  // parameters back. The host buffers hold the updated elements in the optimizer states' order.
  const size_t G = dtype_size(policy_.grads), P = dtype_size(policy_.params);
  // Mixed precision: AdamW writes the rounded parameters into host_params_; fp32: the host's
  // master is the weights and is what goes back.
  const Buffer& out = host_params_ ? host_params_ : master_;
  offload_bytes_ = {};
  // Every unit's gradients out in one go, one wait: the wait also covers the previous step's
  // uploads, whose host sources AdamW is about to overwrite.
  for (size_t i = 0; i < units_.count(); ++i) {
    const Updated e = updated(i);
    const size_t n = e.end - e.begin;
    be_.download_async(host_grads_.at(e.state).data, e.grads.data, n * G);
    offload_bytes_.d2h += n * G;
  }
  be_.synchronize();
  // Then unit by unit: AdamW on the host, the unit's parameters enqueued back at once, so that on a
  // device the copy of unit i runs while the host updates unit i + 1 (the pipeline of ZeRO-Offload
  // §4.1's CPU→GPU parameter swap); the step's next device work queues behind the copies.
  std::vector<AdamWBuffers> list;
  for (size_t i = 0; i < units_.count(); ++i) {
    const Updated e = updated(i);
    const size_t n = e.end - e.begin;
    const LocalUnit& u = units_.units()[i];
    list.clear();
    for (const DecaySegment& s : units_.decay_segments(u, e.begin, e.end, decay_groups)) {
      const size_t o = e.state + s.begin - e.begin;
      list.push_back({out.at(o), host_grads_.at(o), m_.f32() + o, v_.f32() + o,
                      host_params_ ? master_.f32() + o : nullptr, s.len, s.decay});
    }
    host_adamw_multi(list, a);
    be_.upload_async(e.params.data, out.at(e.state).data, n * P);
    offload_bytes_.h2d += n * P;
  }
}

void ModelStates::optimizer_step(const AdamWArgs& a, bool decay_groups) {
  if (offload_) {
    offloaded_step(a, decay_groups);
  } else {
    device_step(a, decay_groups);
  }
  if (zero_ == ZeroStage::one || zero_ == ZeroStage::two) {
    for (size_t i = 0; i < units_.count(); ++i)
      dp_.all_gather(params_.at(units_.units()[i].offset), units_.units()[i].spec);
  }
}

void ModelStates::device_step(const AdamWArgs& a, bool decay_groups) {
  auto master = [this](size_t offset) { return master_ ? master_.f32() + offset : nullptr; };
  if (!decay_groups && (zero_ == ZeroStage::none || zero_ == ZeroStage::three)) {
    // All four (five) buffers hold the same elements in the same order: full, or the own shards.
    be_.adamw_multi({{params_.view(), grads_.view(), m_.f32(), v_.f32(), master(0), m_.count()}}, a);
    return;  // nothing to gather (optimizer_step)
  }
  // Per unit the elements this rank updates — the whole padded unit (zero 0) or its own shard
  // (1–3) — cut into runs that decay or not, all in one multi-tensor update.
  std::vector<AdamWBuffers> list;
  for (size_t i = 0; i < units_.count(); ++i) {
    // Where element `begin` lives in the parameters, the gradients and the optimizer states.
    const Updated e = updated(i);
    for (const DecaySegment& s : units_.decay_segments(units_.units()[i], e.begin, e.end, decay_groups)) {
      const size_t k = s.begin - e.begin, o = e.state + k;
      list.push_back({e.params.at(k), e.grads.at(k), m_.f32() + o, v_.f32() + o, master(o), s.len, s.decay});
    }
  }
  be_.adamw_multi(list, a);
}

void ModelStates::grad_square_sum(View out, bool tp_leader, bool count_embedding) {
  be_.fill(out, 1, 0.0f);
  for (size_t i = 0; i < units_.count(); ++i) {
    const LocalUnit& u = units_.units()[i];
    if (u.unit == 0 && !count_embedding) continue;
    const size_t begin = u.spec.begin(dp_rank_), end = begin + u.spec.shard;
    const View g = grad_shard(i);  // element `begin` of the reduced gradient
    // The counted pieces' local ranges in local order, adjacent ones merged: at tp 1 the whole unit
    // is one run; under tp the sharded tensors are one run and the replicated tail another.
    std::vector<std::pair<size_t, size_t>> pieces, runs;
    for (const Piece& pc : u.pieces)
      if (!pc.replicated || tp_leader) pieces.emplace_back(pc.local, pc.local + pc.len);
    std::sort(pieces.begin(), pieces.end());
    for (const auto& [pb, pe] : pieces) {
      if (!runs.empty() && runs.back().second == pb) {
        runs.back().second = pe;
      } else {
        runs.emplace_back(pb, pe);
      }
    }
    for (const auto& [rb, re] : runs) {
      const size_t lo = std::max(rb, begin), hi = std::min(re, end);
      if (lo < hi) be_.sum_squares(out, g.at(lo - begin), hi - lo, true);
    }
  }
}

std::vector<float> ModelStates::unit_to_host(size_t i, Values which) {
  const LocalUnit& u = units_.units()[i];
  const bool weights = which == Values::weights;
  // Where the values live: whole (`full`) or as this rank's shard of the padded unit.
  View full{}, shard{};
  if (weights && master_) {
    (zero_ == ZeroStage::none ? full : shard) = master_.at(zero_ == ZeroStage::none ? u.offset : u.shard_offset);
  } else if (weights) {
    (zero_ == ZeroStage::three ? shard : full) = params_.at(zero_ == ZeroStage::three ? u.shard_offset : u.offset);
  } else if (zero_ == ZeroStage::none) {
    full = grads_.at(u.offset);
  } else {
    shard = grad_shard(i);  // zero 1: only the own shard of the full buffer is reduced
  }
  Buffer uploaded;  // offload: the host's master, brought to the device for the gather
  if (weights && offload_) {
    const size_t n = zero_ == ZeroStage::none ? u.spec.padded : u.spec.shard;
    uploaded = be_.alloc(MemCategory::workspace, DType::f32, n, AllocInit::unset);
    be_.copy_from_host(uploaded.data(), (shard ? shard : full).data, n * sizeof(float));
    (shard ? shard : full) = uploaded.view();
  }
  Buffer gathered;
  if (shard) {
    gathered = dp_.gather(shard, u.spec, MemCategory::workspace);
    full = gathered.view();
  }
  Buffer widened;
  if (full.dtype != DType::f32) {
    widened = be_.alloc(MemCategory::workspace, DType::f32, u.size, AllocInit::unset);
    be_.copy(widened.view(), full, u.size);
    full = widened.view();
  }
  std::vector<float> host(u.size);
  be_.copy_to_host(host.data(), full.data, u.size * sizeof(float));
  return host;
}

}  // namespace gcb::models
