// Data-parallel engines: replicated DP (and the single-device reference at dp = 1), ZeRO-1,
// ZeRO-2 and ZeRO-3 (Rajbhandari et al. 2019, arXiv:1910.02054; ../shared/reference/training.md
// §3). They share EngineBase: the micro-batch loop, data, loss and communication accounting. Each
// stage differs only in where parameters, gradients and optimizer state live (UnitHooks) and in
// its optimizer step. All gradient reductions are sums of gradients already scaled by
// 1/(global tokens), so no averaging step is needed and ZeRO-1/2 stay bitwise equal to DP.
#include "models/engine.hpp"

#include <fmt/format.h>

#include "core/error.hpp"
#include "models/comm_lane.hpp"
#include "models/gpt.hpp"
#include "models/shard.hpp"
#include "models/zero.hpp"

namespace gcb::models {

std::string_view comm_kind_name(CommKind k) {
  switch (k) {
    case CommKind::all_reduce: return "all_reduce";
    case CommKind::reduce_scatter: return "reduce_scatter";
    case CommKind::all_gather: return "all_gather";
    case CommKind::loss_all_reduce: return "loss_all_reduce";
    case CommKind::tp_all_reduce: return "tp_all_reduce";
    case CommKind::tp_all_gather: return "tp_all_gather";
    case CommKind::tp_reduce_scatter: return "tp_reduce_scatter";
    case CommKind::pp_send: return "pp_send";
    case CommKind::pp_recv: return "pp_recv";
    case CommKind::pp_embed: return "pp_embed";
  }
  return "?";
}

RankContext make_rank_context(Communicator& world, const ParallelLayout& layout) {
  if (layout.dp < 1 || layout.tp < 1 || layout.pp < 1 || layout.world() != world.size()) {
    throw UsageError(fmt::format("layout dp {} × tp {} × pp {} does not match {} ranks", layout.dp,
                                 layout.tp, layout.pp, world.size()));
  }
  RankContext ctx;
  ctx.layout = layout;
  ctx.world = &world;
  ctx.rank = world.rank();
  // Megatron order: rank = tp_rank + tp·(dp_rank + dp·pp_rank).
  ctx.tp_rank = ctx.rank % layout.tp;
  ctx.dp_rank = (ctx.rank / layout.tp) % layout.dp;
  ctx.pp_rank = ctx.rank / (layout.tp * layout.dp);
  ctx.dp = world.split(ctx.pp_rank * layout.tp + ctx.tp_rank, ctx.dp_rank);
  ctx.tp = world.split(ctx.pp_rank * layout.dp + ctx.dp_rank, ctx.tp_rank);
  ctx.pp = world.split(ctx.dp_rank * layout.tp + ctx.tp_rank, ctx.pp_rank);
  return ctx;
}

CommTheory comm_theory_elements(ZeroStage z, int64_t psi, int m, int dp) {
  CommTheory t;
  if (dp <= 1) return t;
  switch (z) {
    case ZeroStage::none: t.all_reduce = psi; break;
    case ZeroStage::one: t.reduce_scatter = psi; t.all_gather = psi; break;
    case ZeroStage::two: t.reduce_scatter = psi; t.all_gather = psi; break;
    case ZeroStage::three: t.reduce_scatter = psi; t.all_gather = 2 * m * psi; break;
  }
  return t;
}

double ring_wire_bytes(CommKind kind, double bytes, int n) {
  if (n <= 1) return 0.0;
  const double f = static_cast<double>(n - 1) / n;
  return (kind == CommKind::all_reduce || kind == CommKind::loss_all_reduce ? 2.0 : 1.0) * f * bytes;
}

StateBytes expected_state_bytes(ZeroStage z, size_t psi, int dp) {
  const size_t full = psi * sizeof(float), shard = full / static_cast<size_t>(dp);
  StateBytes b;
  b.params = z == ZeroStage::three ? shard : full;
  b.grads = z >= ZeroStage::two ? shard : full;
  b.adam_m = b.adam_v = z >= ZeroStage::one ? shard : full;
  return b;
}

namespace {

class EngineBase : public TrainingStep, protected UnitHooks {
 public:
  EngineBase(Backend& be, RankContext& ctx, const TrainOptions& opt)
      : be_(be), comm_(*ctx.dp), opt_(opt), model_(be, opt.model, opt.micro_batch, opt.recompute),
        n_(ctx.dp->size()), r_(ctx.dp->rank()) {
    const ParamLayout& pl = model_.layout();
    size_t full = 0, shard = 0;
    for (int u = 0; u < pl.num_units(); ++u) {
      spec_.push_back(make_shard_spec(pl.unit_size(u), n_));
      off_full_.push_back(full);
      off_shard_.push_back(shard);
      full += spec_.back().padded;
      shard += spec_.back().shard;
    }
    psi_ = full;
    psi_shard_ = shard;
    const size_t bt = static_cast<size_t>(opt.micro_batch) * static_cast<size_t>(opt.model.seq);
    tokens_ = be.alloc(MemCategory::workspace, bt * sizeof(int32_t));
    targets_ = be.alloc(MemCategory::workspace, bt * sizeof(int32_t));
    loss_ = be.alloc_floats(MemCategory::workspace, 1);
    if (opt.overlap_comm && n_ > 1) lane_ = std::make_unique<CommLane>();
  }

  size_t padded_params() const override { return psi_; }
  const CommStats& last_step_comm() const override { return stats_; }

  float step() override {
    stats_ = CommStats{};
    ++step_;
    begin_step();
    const int m = opt_.grad_accum, B = opt_.micro_batch, T = opt_.model.seq;
    const int64_t global_seqs = static_cast<int64_t>(n_) * m * B;
    const float dloss = 1.0f / static_cast<float>(global_seqs * T);
    for (int j = 0; j < m; ++j) {
      last_micro_ = j == m - 1;
      // Rank r's micro-batch j: sequences (r·m + j)·B … of this step's global batch, so dp·m
      // micro-batches of one rank and m of each of dp ranks cover the same sequences.
      const int64_t first = (step_ - 1) * global_seqs + (static_cast<int64_t>(r_) * m + j) * B;
      synthetic_batch(opt_.data_seed, opt_.model.vocab, T, first, B, host_tokens_, host_targets_);
      be_.copy_from_host(tokens_.data(), host_tokens_.data(), host_tokens_.size() * sizeof(int32_t));
      be_.copy_from_host(targets_.data(), host_targets_.data(),
                         host_targets_.size() * sizeof(int32_t));
      const PhaseScope ph(phases_, "forward_backward");
      model_.forward_backward(static_cast<const int32_t*>(tokens_.data()),
                              static_cast<const int32_t*>(targets_.data()), *this, dloss,
                              loss_.f32(), j > 0);
    }
    drain_lane();
    be_.scale(loss_.f32(), dloss, 1);
    if (n_ > 1) {
      const PhaseScope ph(phases_, "comm:loss_all_reduce");
      be_.comm_begin();
      comm_.all_reduce(loss_.data(), loss_.data(), 1, DType::f32, ReduceOp::sum);
      be_.comm_end();
      record(CommKind::loss_all_reduce, 1);
    }
    AdamWArgs a = opt_.adam;
    a.step = static_cast<int>(step_);
    {
      const PhaseScope ph(phases_, "optimizer");
      optimizer_step(a);
    }
    comm_.synchronize();
    float loss = 0.0f;
    be_.copy_to_host(&loss, loss_.data(), sizeof(float));
    return loss;
  }

  std::vector<float> full_params() override {
    const ParamLayout& pl = model_.layout();
    std::vector<float> out;
    counting_ = false;
    for (int u = 0; u < pl.num_units(); ++u) {
      const float* p = params(u, ParamUse::embed_forward);
      const size_t old = out.size();
      out.resize(old + pl.unit_size(u));
      be_.copy_to_host(out.data() + old, p, pl.unit_size(u) * sizeof(float));
      release(u, ParamUse::embed_forward);
    }
    counting_ = true;
    return out;
  }

 protected:
  virtual void begin_step() = 0;
  virtual void optimizer_step(const AdamWArgs& a) = 0;

  void record(CommKind k, size_t elements) { record_comm(counting_ ? &stats_ : nullptr, k, elements); }
  // The dp collectives of this engine; with --overlap its gradient reductions go to the lane.
  DpUnitComm dpc() { return DpUnitComm{be_, comm_, phases_, counting_ ? &stats_ : nullptr, lane_.get()}; }
  // Waits for the queued bucket collectives. The wait is the exposed part ("comm:bucket_wait");
  // the lane's busy time is a span ("comm_lane"), so overlapped = busy − wait.
  void drain_lane() {
    if (!lane_) return;
    {
      const PhaseScope ph(phases_, "comm:bucket_wait");
      lane_->wait();
      be_.comm_end();
    }
    const double busy = lane_->take_busy_seconds();
    if (phases_ != nullptr) phases_->add_span("comm_lane", busy);
  }
  // In place on a padded unit buffer: this rank's reduced shard lands at base + r·shard.
  void reduce_scatter_unit(float* base, int u) { dpc().reduce_scatter(base, base + spec_[u].begin(r_), spec_[u]); }
  void all_gather_unit(float* base, int u) { dpc().all_gather(base, spec_[u]); }
  void init_full_params(float* flat) {
    for (int u = 0; u < model_.layout().num_units(); ++u) {
      model_.layout().init_range(be_, flat + off_full_[u], u, 0, spec_[u].padded, opt_.seed);
    }
  }
  int units() const { return model_.layout().num_units(); }

  Backend& be_;
  Communicator& comm_;
  TrainOptions opt_;
  GptModel model_;
  int n_, r_;
  std::vector<ShardSpec> spec_;
  std::vector<size_t> off_full_, off_shard_;
  size_t psi_ = 0, psi_shard_ = 0;
  bool last_micro_ = false;
  int64_t step_ = 0;
  std::unique_ptr<CommLane> lane_;  // --overlap with dp > 1

 private:
  Buffer tokens_, targets_, loss_;
  std::vector<int32_t> host_tokens_, host_targets_;
  CommStats stats_;
  bool counting_ = true;
};

// Replicated DP (the single-device reference when dp = 1): full params, grads, m and v on every
// rank; each unit's gradient bucket is all-reduced as soon as backward finishes it, on the last
// micro-batch only (llm.c, PyTorch DDP no_sync).
class DpEngine final : public EngineBase {
 public:
  DpEngine(Backend& be, RankContext& ctx, const TrainOptions& opt) : EngineBase(be, ctx, opt) {
    params_ = be.alloc_floats(MemCategory::params, psi_);
    grads_ = be.alloc_floats(MemCategory::grads, psi_);
    m_ = be.alloc_floats(MemCategory::adam_m, psi_);
    v_ = be.alloc_floats(MemCategory::adam_v, psi_);
    init_full_params(params_.f32());
  }
  std::string name() const override { return n_ == 1 ? "single" : fmt::format("dp{}", n_); }

 protected:
  const float* params(int u, ParamUse) override { return params_.f32() + off_full_[u]; }
  void release(int, ParamUse) override {}
  float* grads_begin(int u) override { return grads_.f32() + off_full_[u]; }
  void grads_end(int u) override {
    if (last_micro_) dpc().all_reduce(grads_.f32() + off_full_[u], spec_[u]);
  }
  void begin_step() override { be_.fill(grads_.f32(), psi_, 0.0f); }
  void optimizer_step(const AdamWArgs& a) override {
    be_.adamw(params_.f32(), grads_.f32(), m_.f32(), v_.f32(), psi_, a);
  }

 private:
  Buffer params_, grads_, m_, v_;
};

// ZeRO-1 (P_os): full params and grads; m and v only for this rank's shard of every unit. On the
// last micro-batch each unit's gradient is reduce-scattered as backward finishes it; the
// optimizer updates the own shard; updated shards are all-gathered.
class Zero1Engine final : public EngineBase {
 public:
  Zero1Engine(Backend& be, RankContext& ctx, const TrainOptions& opt) : EngineBase(be, ctx, opt) {
    params_ = be.alloc_floats(MemCategory::params, psi_);
    grads_ = be.alloc_floats(MemCategory::grads, psi_);
    m_ = be.alloc_floats(MemCategory::adam_m, psi_shard_);
    v_ = be.alloc_floats(MemCategory::adam_v, psi_shard_);
    init_full_params(params_.f32());
  }
  std::string name() const override { return fmt::format("zero1-dp{}", n_); }

 protected:
  const float* params(int u, ParamUse) override { return params_.f32() + off_full_[u]; }
  void release(int, ParamUse) override {}
  float* grads_begin(int u) override { return grads_.f32() + off_full_[u]; }
  void grads_end(int u) override {
    if (last_micro_) reduce_scatter_unit(grads_.f32() + off_full_[u], u);
  }
  void begin_step() override { be_.fill(grads_.f32(), psi_, 0.0f); }
  void optimizer_step(const AdamWArgs& a) override {
    for (int u = 0; u < units(); ++u) {
      const size_t own = off_full_[u] + spec_[u].begin(r_);
      be_.adamw(params_.f32() + own, grads_.f32() + own, m_.f32() + off_shard_[u],
                v_.f32() + off_shard_[u], spec_[u].shard, a);
      all_gather_unit(params_.f32() + off_full_[u], u);
    }
  }

 private:
  Buffer params_, grads_, m_, v_;
};

// Gradient handling shared by ZeRO-2 and ZeRO-3 (P_g): a unit's full gradient exists only as a
// bucket while backward fills it. The bucket sums the step's micro-batches; when the last
// micro-batch's backward finishes the unit, grads_end reduce-scatters it, adds this rank's shard
// into the persistent gradient shard and frees it. Reducing once per step (DDP's no_sync, and the
// Megatron engine's choice, parallel_engine.cpp) keeps ZeRO-2/3 bitwise equal to DP with gradient
// accumulation too, and sends Ψ instead of DeepSpeed's m·Ψ per step; the price is that with m > 1
// the buckets live across micro-batches (peak gradient bytes up to Ψ, persistent Ψ/N).
class ShardedGradEngine : public EngineBase {
 public:
  ShardedGradEngine(Backend& be, RankContext& ctx, const TrainOptions& opt)
      : EngineBase(be, ctx, opt), buckets_(static_cast<size_t>(units())) {
    // grads_end adds the reduced shard at once: its reduce-scatter must not be queued.
    GCB_CHECK(!lane_, "ZeRO-2/3 engines do not overlap their reduce-scatter");
    gshard_ = be.alloc_floats(MemCategory::grads, psi_shard_);
    m_ = be.alloc_floats(MemCategory::adam_m, psi_shard_);
    v_ = be.alloc_floats(MemCategory::adam_v, psi_shard_);
  }

 protected:
  float* grads_begin(int u) override {
    Buffer& b = buckets_[static_cast<size_t>(u)];
    if (!b) b = be_.alloc_floats(MemCategory::grads, spec_[u].padded);
    return b.f32();
  }
  void grads_end(int u) override {
    if (!last_micro_) return;  // the bucket keeps accumulating
    Buffer& b = buckets_[static_cast<size_t>(u)];
    reduce_scatter_unit(b.f32(), u);
    float* own = gshard_.f32() + off_shard_[u];
    be_.add(own, own, b.f32() + spec_[u].begin(r_), spec_[u].shard);
    b.reset();
  }
  void begin_step() override { be_.fill(gshard_.f32(), psi_shard_, 0.0f); }

  Buffer gshard_, m_, v_;
  std::vector<Buffer> buckets_;
};

// ZeRO-2 (P_os+g): full params; gradient and optimizer shards.
class Zero2Engine final : public ShardedGradEngine {
 public:
  Zero2Engine(Backend& be, RankContext& ctx, const TrainOptions& opt)
      : ShardedGradEngine(be, ctx, opt) {
    params_ = be.alloc_floats(MemCategory::params, psi_);
    init_full_params(params_.f32());
  }
  std::string name() const override { return fmt::format("zero2-dp{}", n_); }

 protected:
  const float* params(int u, ParamUse) override { return params_.f32() + off_full_[u]; }
  void release(int, ParamUse) override {}
  void optimizer_step(const AdamWArgs& a) override {
    for (int u = 0; u < units(); ++u) {
      const size_t os = off_shard_[u];
      be_.adamw(params_.f32() + off_full_[u] + spec_[u].begin(r_), gshard_.f32() + os,
                m_.f32() + os, v_.f32() + os, spec_[u].shard, a);
      all_gather_unit(params_.f32() + off_full_[u], u);
    }
  }

 private:
  Buffer params_;
};

// ZeRO-3 (P_os+g+p): only parameter shards persist. A unit is all-gathered into a temporary
// buffer before its forward and again before its backward (the head's forward and backward share
// one gather) and freed after use; embedding backward needs no parameters.
class Zero3Engine final : public ShardedGradEngine {
 public:
  Zero3Engine(Backend& be, RankContext& ctx, const TrainOptions& opt)
      : ShardedGradEngine(be, ctx, opt), gathered_(static_cast<size_t>(units())) {
    pshard_ = be.alloc_floats(MemCategory::params, psi_shard_);
    for (int u = 0; u < units(); ++u) {
      model_.layout().init_range(be, pshard_.f32() + off_shard_[u], u, spec_[u].begin(r_),
                                 spec_[u].end(r_), opt.seed);
    }
  }
  std::string name() const override { return fmt::format("zero3-dp{}", n_); }

 protected:
  const float* params(int u, ParamUse) override {
    Buffer& b = gathered_[static_cast<size_t>(u)];
    GCB_CHECK(!b, "ZeRO-3: unit gathered twice without release");
    b = dpc().gather(pshard_.f32() + off_shard_[u], spec_[u]);
    return b.f32();
  }
  void release(int u, ParamUse) override { gathered_[static_cast<size_t>(u)].reset(); }
  void optimizer_step(const AdamWArgs& a) override {
    be_.adamw(pshard_.f32(), gshard_.f32(), m_.f32(), v_.f32(), psi_shard_, a);
  }

 private:
  Buffer pshard_;
  std::vector<Buffer> gathered_;
};

}  // namespace

std::string overlap_error(const TrainOptions& opt, const ParallelLayout& layout,
                          const Communicator* dp) {
  if (!opt.overlap_comm) return "";
  if (layout.tp != 1 || layout.pp != 1 || opt.sp || opt.zero > ZeroStage::one) {
    return "--overlap is implemented for the dp engines with zero 0 or 1 (tp = pp = 1, no sp)";
  }
  if (dp != nullptr && dp->thread_support() == ThreadSupport::creating_thread) {
    return fmt::format("--overlap needs a {} communicator callable from a second thread "
                       "(MPI: MPI_THREAD_SERIALIZED)", dp->backend());
  }
  return "";
}

std::unique_ptr<TrainingStep> make_training_step(Backend& be, RankContext& ctx,
                                                 const TrainOptions& opt) {
  validate(opt.model);
  if (const std::string e = layout_error(opt, ctx.layout); !e.empty()) throw UsageError(e);
  if (const std::string e = overlap_error(opt, ctx.layout, ctx.dp.get()); !e.empty()) {
    throw UsageError(e);
  }
  if (ctx.layout.tp != 1 || ctx.layout.pp != 1 || opt.sp) {
    return make_parallel_training_step(be, ctx, opt);
  }
  if (ctx.dp == nullptr || ctx.dp->size() != ctx.layout.dp) {
    throw UsageError("rank context has no dp communicator of the layout's size");
  }
  if (opt.micro_batch < 1 || opt.grad_accum < 1) {
    throw UsageError(fmt::format("micro-batch ({}) and gradient accumulation ({}) must be ≥ 1",
                                 opt.micro_batch, opt.grad_accum));
  }
  switch (opt.zero) {
    case ZeroStage::none: return std::make_unique<DpEngine>(be, ctx, opt);
    case ZeroStage::one: return std::make_unique<Zero1Engine>(be, ctx, opt);
    case ZeroStage::two: return std::make_unique<Zero2Engine>(be, ctx, opt);
    case ZeroStage::three: return std::make_unique<Zero3Engine>(be, ctx, opt);
  }
  throw UsageError("unknown ZeRO stage");
}

}  // namespace gcb::models
