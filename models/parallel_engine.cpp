// The Megatron engine: tensor parallelism (Shoeybi et al. 2019), sequence parallelism (Korthikanti
// et al. 2022) and pipeline parallelism (GPipe, Huang et al. 2019; 1F1B, Narayanan et al. 2021),
// combined with data parallelism (replicated or ZeRO-1/2/3) in Megatron's rank order
// (../shared/reference/training.md §2, §3, §4). The dp-only engines live in engine.cpp; this file
// takes over when tp > 1, pp > 1 or sp is set.
//
// Tensor parallelism per layer (t ranks, rank r, C_l = C/t, heads NH/t):
//   column-parallel QKV [3C_l, C] (this rank's heads of q, k and v) and fc [4C_l, C];
//   row-parallel attention projection [C, C_l] and fc-projection [C, 4C_l];
//   f = identity forward / all-reduce backward before each column-parallel block,
//   g = all-reduce forward / identity backward after each row-parallel block.
// With SP the LayerNorm and residual regions hold B·T/t rows: g becomes a reduce-scatter and f an
// all-gather (backward: all-gather and reduce-scatter); the gathered LayerNorm output is not kept
// but gathered again in backward (Korthikanti et al. §4.2.2). The row-parallel biases are added
// once, by tp rank 0, before the reduction. Replicated parameters whose gradients are partial under
// SP (LayerNorms and the two row-parallel biases) are all-reduced over tp once per step.
// Vocabulary-parallel embedding and cross-entropy: rank r holds vocabulary rows [r·V/t, (r+1)·V/t)
// of the tied wte; the embedding is reduced like a row-parallel output, and the loss needs an
// all-reduce (max) of the row maxima and an all-reduce (sum) of {Σexp, target logit} per row.
// Pipeline: stage s holds a contiguous block of layers (the first L mod p stages one more); the
// first and the last stage both hold the embedding unit (tied wte) and exchange its gradient once
// per step. The last stage runs the head's forward and backward together, as soon as a micro-batch
// arrives. Each stage keeps activation slots for the micro-batches in flight: m for GPipe,
// min(m, p − s) for 1F1B.
//
// ZeRO on the dp dimension (Rajbhandari et al. 2019; training.md §3), per local unit (the
// embedding unit on the first / last stage, each of the stage's layers), each padded to a
// multiple of dp (ShardSpec; collectives in zero.hpp, shared with engine.cpp):
//   zero 1: full params and grads, Adam m and v for the own shard; grads reduce-scattered,
//           updated shards all-gathered.
//   zero 2: full params; the only persistent gradient is the own shard. A unit's full gradient
//           exists as a bucket from its first micro-batch's backward until its backward is
//           complete for the step, is then reduced (see below) and reduce-scattered into the
//           shard, and freed.
//   zero 3: only parameter shards persist. A unit is all-gathered before each use and freed after
//           it: per micro-batch a layer before its forward and again before its backward (which
//           includes the recomputed forward under full recompute), the embedding unit before the
//           first stage's embedding forward and before the last stage's head (its forward and
//           backward share one gather); the embedding backward needs no parameters. Gradients as
//           zero 2; Adam on the shards, nothing to gather after it.
// Order of a unit's gradient reduction, the same for every stage: (1) under SP the tp all-reduce
// of the partial LayerNorm/bias gradients ("sync" tail), (2) for the embedding unit with pp > 1
// the tied-gradient exchange between first and last stage, (3) the dp reduction (all-reduce at
// zero 0, reduce-scatter at 1–3), all on the whole unit gradient summed over the step's
// micro-batches. Layers are reduced as soon as the last micro-batch's backward finishes them (as
// DDP's no_sync accumulation), the embedding unit after the schedule (its two ends finish at
// different times). Because the buckets accumulate micro-batches exactly as the persistent
// gradient of zero 0 does and the reduce-scatter gives the all-reduce's elements (rank-ordered
// sums), zero 1, 2 and 3 are bitwise equal to zero 0 of the same layout, with gradient
// accumulation too. The price, against DeepSpeed's reduce-scatter per micro-batch: with m > 1 a
// bucket lives across micro-batches (under GPipe the stage's whole gradient exists during the
// backward phase); the traffic is Ψ reduce-scattered per step instead of m·Ψ.
#include <fmt/format.h>

#include <algorithm>

#include "core/error.hpp"
#include "models/engine.hpp"
#include "models/gpt.hpp"
#include "models/shard.hpp"
#include "models/zero.hpp"

namespace gcb::models {
namespace {

size_t sz(int v) { return static_cast<size_t>(v); }

// A run of elements of the full (canonical) unit stored contiguously in the local unit.
// replicated: the same values exist on every tp rank (written once when reassembling).
struct Piece {
  size_t full, local, len;
  bool replicated;
};

// Local unit layouts: tp-sharded tensors first; the "sync" tail (from sync_begin) holds the
// replicated tensors whose gradients are partial under SP.
struct LocalEmbed {
  size_t wte, wpe, lnfw, lnfb, sync_begin, size;
};
struct LocalLayer {
  size_t qkvw, qkvb, projw, fcw, fcb, fcprojw, ln1w, ln1b, projb, ln2w, ln2b, fcprojb, sync_begin,
      size;
};

struct LocalUnit {
  int unit = 0;  // canonical unit index (0 = embedding, 1 + l = layer l)
  std::vector<Piece> pieces;
  size_t size = 0, sync_begin = 0;
  ShardSpec spec;  // over dp
  size_t off = 0, off_shard = 0;
};

struct LayerActs {
  float *ln1, *ln1_mean, *ln1_rstd, *qkv, *atty, *att, *res2, *ln2, *ln2_mean, *ln2_rstd, *fch,
      *fch_gelu, *res3;
};
struct Slot {
  float* x = nullptr;     // stage input [Rs, C]
  float* dout = nullptr;  // gradient w.r.t. the stage output [Rs, C]; backward works in place
  Buffer tokens;          // first stage: the micro-batch's tokens (embedding backward)
  std::vector<LayerActs> layers;
};

class ParallelEngine final : public TrainingStep {
 public:
  ParallelEngine(Backend& be, RankContext& ctx, const TrainOptions& opt)
      : be_(be), dp_(*ctx.dp), tp_(*ctx.tp), pp_(*ctx.pp), world_(*ctx.world), opt_(opt),
        cfg_(opt.model), layout_(opt.model) {
    t_ = ctx.layout.tp;
    tr_ = ctx.tp_rank;
    p_ = ctx.layout.pp;
    pr_ = ctx.pp_rank;
    nd_ = ctx.layout.dp;
    dr_ = ctx.dp_rank;
    sp_ = opt.sp && t_ > 1;
    B_ = opt.micro_batch;
    T_ = cfg_.seq;
    C_ = cfg_.hidden;
    Cl_ = C_ / t_;
    NHl_ = cfg_.heads / t_;
    Vl_ = cfg_.vocab / t_;
    v0_ = tr_ * Vl_;
    R_ = B_ * T_;
    Rs_ = sp_ ? R_ / t_ : R_;
    nl_ = stage_layers(cfg_.layers, p_, pr_);
    l0_ = stage_first_layer(cfg_.layers, p_, pr_);
    first_ = pr_ == 0;
    last_ = pr_ == p_ - 1;
    build_local_layouts();
    build_units();
    // Model states (ZeRO paper §3.1: P_os from zero 1, P_g from 2, P_p at 3).
    zero_ = opt.zero;
    params_ = be.alloc_floats(MemCategory::params, zero_ == ZeroStage::three ? psi_shard_ : psi_);
    grads_ = be.alloc_floats(MemCategory::grads, zero_ >= ZeroStage::two ? psi_shard_ : psi_);
    const size_t opt_n = zero_ >= ZeroStage::one ? psi_shard_ : psi_;
    m_ = be.alloc_floats(MemCategory::adam_m, opt_n);
    v_ = be.alloc_floats(MemCategory::adam_v, opt_n);
    buckets_.resize(units_.size());
    gathered_.resize(units_.size());
    for (const LocalUnit& u : units_) init_unit(u);
    alloc_activations();
    targets_ = be.alloc(MemCategory::workspace, sz(R_) * sizeof(int32_t));
    loss_ = be.alloc_floats(MemCategory::workspace, 1);
  }

  std::string name() const override {
    std::string s = fmt::format("dp{}-tp{}-pp{}", nd_, t_, p_);
    if (sp_) s += "-sp";
    if (zero_ != ZeroStage::none) s += fmt::format("-zero{}", static_cast<int>(zero_));
    if (p_ > 1) s += opt_.schedule == PipeSchedule::gpipe ? "-gpipe" : "-1f1b";
    return s;
  }
  size_t padded_params() const override { return psi_; }
  const CommStats& last_step_comm() const override { return stats_; }

  float step() override {
    stats_ = CommStats{};
    ++step_;
    be_.fill(grads_.f32(), zero_ >= ZeroStage::two ? psi_shard_ : psi_, 0.0f);
    const int m = opt_.grad_accum;
    if (opt_.schedule == PipeSchedule::gpipe || p_ == 1) {
      for (int j = 0; j < m; ++j) {
        recv_forward(j);
        forward(j);
        send_forward(j);
      }
      for (int j = 0; j < m; ++j) {
        recv_backward(j);
        backward(j);
        send_backward(j);
      }
    } else {
      // 1F1B (Megatron forward_backward_pipelining_without_interleaving): the steady-state
      // sends and receives are paired in one group so neighbours never wait on each other.
      const int w = std::min(p_ - pr_ - 1, m), rem = m - w;
      for (int j = 0; j < w; ++j) {
        recv_forward(j);
        forward(j);
        send_forward(j);
      }
      if (rem > 0) recv_forward(w);
      for (int i = 0; i < rem; ++i) {
        forward(w + i);
        p2p(fwd_out(w + i), next(), bwd_in(i), next());
        backward(i);
        if (i == rem - 1) {
          send_backward(i);
        } else {
          p2p(bwd_out(i), prev(), fwd_in(w + i + 1), prev());
        }
      }
      for (int j = rem; j < m; ++j) {
        recv_backward(j);
        backward(j);
        send_backward(j);
      }
    }
    if (embed_unit_ == 0) {  // layers were reduced during backward
      const PhaseScope ph(phases_, "optimizer");  // gradient reductions nest as comm phases
      reduce_unit(0);
    }
    // Loss: Σ over micro-batches on the last stage, scaled, summed over dp, sent to every stage.
    const float dloss = dloss_value();
    if (!last_) be_.fill(loss_.f32(), 1, 0.0f);
    be_.scale(loss_.f32(), dloss, 1);
    if (nd_ > 1) {
      const PhaseScope ph(phases_, "comm:loss_all_reduce");
      be_.comm_begin();
      dp_.all_reduce(loss_.data(), loss_.data(), 1, DType::f32, ReduceOp::sum);
      be_.comm_end();
      record(CommKind::loss_all_reduce, 1);
    }
    if (p_ > 1) {
      const PhaseScope ph(phases_, "comm:loss_all_reduce");
      be_.comm_begin();
      pp_.all_reduce(loss_.data(), loss_.data(), 1, DType::f32, ReduceOp::sum);
      be_.comm_end();
      record(CommKind::loss_all_reduce, 1);
    }
    {
      const PhaseScope ph(phases_, "optimizer");
      optimizer_step();
    }
    dp_.synchronize();
    tp_.synchronize();
    pp_.synchronize();
    float loss = 0.0f;
    be_.copy_to_host(&loss, loss_.data(), sizeof(float));
    return loss;
  }

  // Every rank writes the pieces it is responsible for (dp rank 0; replicated pieces only on tp
  // rank 0; the embedding only on the first stage) into a zeroed canonical vector, and a sum
  // over the world assembles it: adding zeros is exact, so the result is bitwise.
  // Under ZeRO-3 every dp rank takes part in gathering each unit first (not counted as comm).
  std::vector<float> full_params() override {
    const size_t emb = layout_.unit_size(0), lay = layout_.unit_size(1);
    const size_t total = emb + sz(cfg_.layers) * lay;
    std::vector<float> host(total, 0.0f), local;
    counting_ = false;
    for (size_t i = 0; i < units_.size(); ++i) {
      const LocalUnit& u = units_[i];
      acquire(i);
      if (dr_ == 0 && (u.unit != 0 || first_)) {
        local.resize(u.size);
        be_.copy_to_host(local.data(), unit_params(i), u.size * sizeof(float));
        const size_t base = u.unit == 0 ? 0 : emb + sz(u.unit - 1) * lay;
        for (const Piece& pc : u.pieces) {
          if (pc.replicated && tr_ != 0) continue;
          std::copy_n(local.data() + pc.local, pc.len, host.data() + base + pc.full);
        }
      }
      release(i);
    }
    counting_ = true;
    Buffer buf = be_.alloc_floats(MemCategory::workspace, total);
    be_.copy_from_host(buf.data(), host.data(), total * sizeof(float));
    world_.all_reduce(buf.data(), buf.data(), total, DType::f32, ReduceOp::sum);
    world_.synchronize();
    be_.copy_to_host(host.data(), buf.data(), total * sizeof(float));
    return host;
  }

 private:
  // ---- layouts ---------------------------------------------------------------------------------
  void build_local_layouts() {
    const size_t C = sz(C_), Cl = sz(Cl_), Vl = sz(Vl_), T = sz(T_);
    size_t o = 0;
    auto take = [&o](size_t n) { return std::exchange(o, o + n); };
    le_.wte = take(Vl * C);
    le_.wpe = take(T * C);  // replicated, but its gradient is complete on every tp rank
    le_.sync_begin = o;
    le_.lnfw = take(C);
    le_.lnfb = take(C);
    le_.size = o;
    o = 0;
    ll_.qkvw = take(3 * Cl * C);
    ll_.qkvb = take(3 * Cl);
    ll_.projw = take(C * Cl);
    ll_.fcw = take(4 * Cl * C);
    ll_.fcb = take(4 * Cl);
    ll_.fcprojw = take(C * 4 * Cl);
    ll_.sync_begin = o;
    ll_.ln1w = take(C);
    ll_.ln1b = take(C);
    ll_.projb = take(C);
    ll_.ln2w = take(C);
    ll_.ln2b = take(C);
    ll_.fcprojb = take(C);
    ll_.size = o;
  }

  std::vector<Piece> embed_pieces() const {
    const EmbedUnit& e = layout_.embed();
    const size_t C = sz(C_), Vl = sz(Vl_);
    return {{e.wte + sz(v0_) * C, le_.wte, Vl * C, false},
            {e.wpe, le_.wpe, sz(T_) * C, true},
            {e.lnfw, le_.lnfw, C, true},
            {e.lnfb, le_.lnfb, C, true}};
  }

  std::vector<Piece> layer_pieces() const {
    const LayerUnit& u = layout_.layer();
    const size_t C = sz(C_), Cl = sz(Cl_), r = sz(tr_);
    std::vector<Piece> v;
    for (size_t k = 0; k < 3; ++k) {  // this rank's heads of q, k and v: rows k·C + r·Cl …
      v.push_back({u.qkvw + (k * C + r * Cl) * C, ll_.qkvw + k * Cl * C, Cl * C, false});
      v.push_back({u.qkvb + k * C + r * Cl, ll_.qkvb + k * Cl, Cl, false});
    }
    for (size_t i = 0; i < C; ++i) {  // row-parallel: columns r·Cl … of every row
      v.push_back({u.projw + i * C + r * Cl, ll_.projw + i * Cl, Cl, false});
      v.push_back({u.fcprojw + i * 4 * C + r * 4 * Cl, ll_.fcprojw + i * 4 * Cl, 4 * Cl, false});
    }
    v.push_back({u.fcw + r * 4 * Cl * C, ll_.fcw, 4 * Cl * C, false});
    v.push_back({u.fcb + r * 4 * Cl, ll_.fcb, 4 * Cl, false});
    v.push_back({u.ln1w, ll_.ln1w, C, true});
    v.push_back({u.ln1b, ll_.ln1b, C, true});
    v.push_back({u.projb, ll_.projb, C, true});
    v.push_back({u.ln2w, ll_.ln2w, C, true});
    v.push_back({u.ln2b, ll_.ln2b, C, true});
    v.push_back({u.fcprojb, ll_.fcprojb, C, true});
    return v;
  }

  void build_units() {
    size_t off = 0, off_shard = 0;
    auto add = [&](int unit, std::vector<Piece> pieces, size_t size, size_t sync_begin) {
      LocalUnit u;
      u.unit = unit;
      u.pieces = std::move(pieces);
      u.size = size;
      u.sync_begin = sync_begin;
      u.spec = make_shard_spec(size, nd_);
      u.off = off;
      u.off_shard = off_shard;
      off += u.spec.padded;
      off_shard += u.spec.shard;
      units_.push_back(std::move(u));
    };
    if (first_ || last_) {
      embed_unit_ = 0;
      add(0, embed_pieces(), le_.size, le_.sync_begin);
    }
    const std::vector<Piece> lp = layer_pieces();
    for (int l = 0; l < nl_; ++l) add(1 + l0_ + l, lp, ll_.size, ll_.sync_begin);
    psi_ = off;
    psi_shard_ = off_shard;
  }

  // Fills the local unit's pieces from the canonical initialisation; under ZeRO-3 through a
  // temporary full unit of which only the own dp shard is kept.
  void init_unit(const LocalUnit& u) {
    Buffer tmp;
    float* full = params_.f32() + u.off;
    if (zero_ == ZeroStage::three) {
      tmp = be_.alloc_floats(MemCategory::workspace, u.spec.padded);
      full = tmp.f32();
    }
    for (const Piece& pc : u.pieces) {
      layout_.init_range(be_, full + pc.local, u.unit, pc.full, pc.full + pc.len, opt_.seed);
    }
    if (tmp) be_.copy(params_.f32() + u.off_shard, full + u.spec.begin(dr_), u.spec.shard);
  }

  // ---- ZeRO hooks: parameters and gradient buffers of local unit i -------------------------------
  DpUnitComm dpc() { return DpUnitComm{be_, dp_, phases_, counting_ ? &stats_ : nullptr}; }
  // ZeRO-3: gathers unit i over dp for one use (paired with release); other stages: nothing.
  void acquire(size_t i) {
    if (zero_ != ZeroStage::three) return;
    GCB_CHECK(!gathered_[i], "ZeRO-3: unit gathered twice without release");
    gathered_[i] = dpc().gather(params_.f32() + units_[i].off_shard, units_[i].spec);
  }
  void release(size_t i) { gathered_[i].reset(); }
  float* unit_params(size_t i) {
    if (zero_ != ZeroStage::three) return params_.f32() + units_[i].off;
    GCB_CHECK(gathered_[i], "ZeRO-3: unit used without being gathered");
    return gathered_[i].f32();
  }
  // The buffer backward accumulates unit i's gradient into: the persistent full gradient at zero
  // 0/1, a zeroed bucket (created on first use in a step) at zero 2/3.
  float* unit_grads(size_t i) {
    if (zero_ < ZeroStage::two) return grads_.f32() + units_[i].off;
    Buffer& b = buckets_[i];
    if (!b) b = be_.alloc_floats(MemCategory::grads, units_[i].spec.padded);
    return b.f32();
  }
  // This rank's shard of unit i's reduced gradient (after reduce_unit).
  float* grad_shard(size_t i) {
    const LocalUnit& u = units_[i];
    return zero_ >= ZeroStage::two ? grads_.f32() + u.off_shard : grads_.f32() + u.off + u.spec.begin(dr_);
  }
  const float* P(int l) { return unit_params(layer_index(l)); }
  float* G(int l) { return unit_grads(layer_index(l)); }
  size_t layer_index(int l) const { return sz(l) + (embed_unit_ == 0 ? 1 : 0); }
  const float* PE() { return unit_params(0); }
  float* GE() { return unit_grads(0); }

  // ---- activations -----------------------------------------------------------------------------
  float* act(size_t n) {
    owned_.push_back(be_.alloc_floats(MemCategory::activations, n));
    return owned_.back().f32();
  }

  int num_slots() const {
    const int m = opt_.grad_accum;
    return opt_.schedule == PipeSchedule::gpipe || p_ == 1 ? m : std::min(m, p_ - pr_);
  }

  void alloc_activations() {
    const size_t R = sz(R_), Rs = sz(Rs_), C = sz(C_), Cl = sz(Cl_);
    const size_t att = R * sz(NHl_) * sz(T_);
    const bool full = opt_.recompute == Recompute::full;
    const bool core_shared = opt_.recompute != Recompute::none;
    LayerActs shared{};
    auto one = [&](bool share, float* LayerActs::*field, size_t n) {
      if (!share) return act(n);
      if (shared.*field == nullptr) shared.*field = act(n);
      return shared.*field;
    };
    slots_.resize(sz(num_slots()));
    for (Slot& s : slots_) {
      s.x = act(Rs * C);
      s.dout = act(Rs * C);
      if (first_) s.tokens = be_.alloc(MemCategory::workspace, R * sizeof(int32_t));
      s.layers.resize(sz(nl_));
      for (LayerActs& a : s.layers) {
        a.ln1 = one(full, &LayerActs::ln1, Rs * C);
        a.ln1_mean = one(full, &LayerActs::ln1_mean, Rs);
        a.ln1_rstd = one(full, &LayerActs::ln1_rstd, Rs);
        a.qkv = one(full, &LayerActs::qkv, R * 3 * Cl);
        a.atty = one(core_shared, &LayerActs::atty, R * Cl);
        a.att = one(core_shared, &LayerActs::att, att);
        a.res2 = one(full, &LayerActs::res2, Rs * C);
        a.ln2 = one(full, &LayerActs::ln2, Rs * C);
        a.ln2_mean = one(full, &LayerActs::ln2_mean, Rs);
        a.ln2_rstd = one(full, &LayerActs::ln2_rstd, Rs);
        a.fch = one(full, &LayerActs::fch, R * 4 * Cl);
        a.fch_gelu = one(full, &LayerActs::fch_gelu, R * 4 * Cl);
        a.res3 = act(Rs * C);  // always kept: the next layer's input
      }
    }
    partial_ = act(R * C);
    dC_ = act(Rs * C);
    dCl_ = act(R * Cl);
    d4C_ = act(R * 4 * Cl);
    dqkv_ = act(R * 3 * Cl);
    datt_ = act(att);
    if (sp_) {
      gath_ = act(R * C);  // gathered activation gradient
      ln1g_ = act(R * C);
      ln2g_ = act(R * C);
    }
    if (last_) {
      lnf_ = act(Rs * C);
      lnf_mean_ = act(Rs);
      lnf_rstd_ = act(Rs);
      lnfg_ = sp_ ? act(R * C) : lnf_;
      logits_ = act(R * sz(Vl_));
      losses_ = act(R);
      rowmax_ = act(R);
      cestats_ = act(2 * R);
      dlnf_ = act(Rs * C);
    }
  }

  // ---- tp collectives (f / g operators) ---------------------------------------------------------
  void record(CommKind k, size_t elements) { record_comm(counting_ ? &stats_ : nullptr, k, elements); }
  // g (forward) / f (backward): out[Rs,C] = Σ_tp in[R,C] (all-reduce, or reduce-scatter under SP).
  void reduce_rows(float* out, const float* in) {
    const size_t n = sz(R_) * sz(C_);
    if (t_ == 1) {
      be_.copy(out, in, n);
      return;
    }
    const PhaseScope ph(phases_, sp_ ? "comm:tp_reduce_scatter" : "comm:tp_all_reduce");
    be_.comm_begin();
    if (sp_) {
      tp_.reduce_scatter(in, out, sz(Rs_) * sz(C_), DType::f32, ReduceOp::sum);
      record(CommKind::tp_reduce_scatter, n);
    } else {
      tp_.all_reduce(in, out, n, DType::f32, ReduceOp::sum);
      record(CommKind::tp_all_reduce, n);
    }
    be_.comm_end();
  }
  // f (forward) / g (backward) under SP: the full [R,C] from the sequence shards; identity else.
  const float* gather_rows(float* out, const float* in) {
    if (!sp_) return in;
    const PhaseScope ph(phases_, "comm:tp_all_gather");
    be_.comm_begin();
    tp_.all_gather(in, out, sz(Rs_) * sz(C_), DType::f32);
    be_.comm_end();
    record(CommKind::tp_all_gather, sz(R_) * sz(C_));
    return out;
  }
  void tp_all_reduce(float* x, size_t n, ReduceOp op) {
    if (t_ == 1) return;
    const PhaseScope ph(phases_, "comm:tp_all_reduce");
    be_.comm_begin();
    tp_.all_reduce(x, x, n, DType::f32, op);
    be_.comm_end();
    record(CommKind::tp_all_reduce, n);
  }

  // ---- model -------------------------------------------------------------------------------------
  const float* layer_input(const Slot& s, int l) const { return l == 0 ? s.x : s.layers[sz(l - 1)].res3; }

  void layer_forward(Slot& s, int l) {
    const LocalLayer& u = ll_;
    const float* p = P(l);
    LayerActs& a = s.layers[sz(l)];
    const float* x = layer_input(s, l);
    const int R = R_, C = C_, Cl = Cl_;
    const size_t rsc = sz(Rs_) * sz(C_);
    be_.layernorm_forward(a.ln1, a.ln1_mean, a.ln1_rstd, x, p + u.ln1w, p + u.ln1b, Rs_, C);
    const float* in1 = gather_rows(ln1g_, a.ln1);
    be_.gemm({false, true, R, 3 * Cl, C, in1, p + u.qkvw, a.qkv, 0.0f, p + u.qkvb});
    be_.attention_forward(a.atty, a.att, a.qkv, B_, T_, Cl, NHl_);
    be_.gemm({false, true, R, C, Cl, a.atty, p + u.projw, partial_, 0.0f,
              tr_ == 0 ? p + u.projb : nullptr});
    reduce_rows(a.res2, partial_);
    be_.add(a.res2, a.res2, x, rsc);
    be_.layernorm_forward(a.ln2, a.ln2_mean, a.ln2_rstd, a.res2, p + u.ln2w, p + u.ln2b, Rs_, C);
    const float* in2 = gather_rows(ln2g_, a.ln2);
    be_.gemm({false, true, R, 4 * Cl, C, in2, p + u.fcw, a.fch, 0.0f, p + u.fcb});
    be_.gelu_forward(a.fch_gelu, a.fch, sz(R) * 4 * sz(Cl));
    be_.gemm({false, true, R, C, 4 * Cl, a.fch_gelu, p + u.fcprojw, partial_, 0.0f,
              tr_ == 0 ? p + u.fcprojb : nullptr});
    reduce_rows(a.res3, partial_);
    be_.add(a.res3, a.res3, a.res2, rsc);
  }

  // dres [Rs,C]: on entry dL/d(res3), on exit dL/d(layer input).
  void layer_backward(Slot& s, int l, float* dres) {
    const LocalLayer& u = ll_;
    const float* p = P(l);
    float* g = G(l);
    LayerActs& a = s.layers[sz(l)];
    const float* x = layer_input(s, l);
    const int R = R_, C = C_, Cl = Cl_;
    if (opt_.recompute == Recompute::full) layer_forward(s, l);
    if (opt_.recompute == Recompute::selective) {
      be_.attention_forward(a.atty, a.att, a.qkv, B_, T_, Cl, NHl_);
    }
    // MLP.
    const float* dr = gather_rows(gath_, dres);
    be_.gemm({false, false, R, 4 * Cl, C, dr, p + u.fcprojw, d4C_, 0.0f, nullptr});
    const float* in2 = gather_rows(ln2g_, a.ln2);  // SP: gathered again, not kept
    be_.gemm({true, false, C, 4 * Cl, R, dr, a.fch_gelu, g + u.fcprojw, 1.0f, nullptr});
    be_.bias_backward(g + u.fcprojb, dres, Rs_, C);
    be_.gelu_backward(d4C_, a.fch, d4C_, sz(R) * 4 * sz(Cl));
    be_.gemm({false, false, R, C, 4 * Cl, d4C_, p + u.fcw, partial_, 0.0f, nullptr});
    be_.gemm({true, false, 4 * Cl, C, R, d4C_, in2, g + u.fcw, 1.0f, nullptr});
    be_.bias_backward(g + u.fcb, d4C_, R, 4 * Cl);
    reduce_rows(dC_, partial_);
    be_.layernorm_backward(dres, g + u.ln2w, g + u.ln2b, dC_, a.res2, p + u.ln2w, a.ln2_mean,
                           a.ln2_rstd, Rs_, C);
    // Attention.
    dr = gather_rows(gath_, dres);
    be_.gemm({false, false, R, Cl, C, dr, p + u.projw, dCl_, 0.0f, nullptr});
    be_.gemm({true, false, C, Cl, R, dr, a.atty, g + u.projw, 1.0f, nullptr});
    be_.bias_backward(g + u.projb, dres, Rs_, C);
    be_.attention_backward(dqkv_, datt_, dCl_, a.qkv, a.att, B_, T_, Cl, NHl_);
    const float* in1 = gather_rows(ln1g_, a.ln1);
    be_.gemm({false, false, R, C, 3 * Cl, dqkv_, p + u.qkvw, partial_, 0.0f, nullptr});
    be_.gemm({true, false, 3 * Cl, C, R, dqkv_, in1, g + u.qkvw, 1.0f, nullptr});
    be_.bias_backward(g + u.qkvb, dqkv_, R, 3 * Cl);
    reduce_rows(dC_, partial_);
    be_.layernorm_backward(dres, g + u.ln1w, g + u.ln1b, dC_, x, p + u.ln1w, a.ln1_mean,
                           a.ln1_rstd, Rs_, C);
  }

  // Head forward and backward on the last stage: dL/d(stage output) lands in s.dout.
  void head(Slot& s, bool accumulate) {
    const float* pe = PE();
    float* ge = GE();
    const float* last = layer_input(s, nl_);
    const int R = R_, C = C_, Vl = Vl_;
    be_.layernorm_forward(lnf_, lnf_mean_, lnf_rstd_, last, pe + le_.lnfw, pe + le_.lnfb, Rs_, C);
    const float* in = gather_rows(lnfg_, lnf_);
    be_.gemm({false, true, R, Vl, C, in, pe + le_.wte, logits_, 0.0f, nullptr});
    const auto* targets = static_cast<const int32_t*>(targets_.data());
    be_.vocab_ce_max(rowmax_, logits_, R, Vl);
    tp_all_reduce(rowmax_, sz(R), ReduceOp::max);
    be_.vocab_ce_sumexp(cestats_, logits_, rowmax_, targets, v0_, R, Vl);
    tp_all_reduce(cestats_, 2 * sz(R), ReduceOp::sum);
    be_.vocab_ce_finish(losses_, logits_, logits_, rowmax_, cestats_, R, Vl);
    be_.sum(loss_.f32(), losses_, sz(R), accumulate);
    be_.vocab_ce_backward(logits_, logits_, targets, v0_, R, Vl, dloss_value());
    be_.gemm({false, false, R, C, Vl, logits_, pe + le_.wte, partial_, 0.0f, nullptr});
    be_.gemm({true, false, Vl, C, R, logits_, in, ge + le_.wte, 1.0f, nullptr});
    reduce_rows(dlnf_, partial_);
    be_.fill(s.dout, sz(Rs_) * sz(C_), 0.0f);
    be_.layernorm_backward(s.dout, ge + le_.lnfw, ge + le_.lnfb, dlnf_, last, pe + le_.lnfw,
                           lnf_mean_, lnf_rstd_, Rs_, C);
  }

  float dloss_value() const {
    const int64_t global_seqs = static_cast<int64_t>(nd_) * opt_.grad_accum * B_;
    return 1.0f / static_cast<float>(global_seqs * T_);
  }

  Slot& slot(int j) { return slots_[sz(j % num_slots())]; }

  void load_batch(int j) {
    const int m = opt_.grad_accum;
    const int64_t global_seqs = static_cast<int64_t>(nd_) * m * B_;
    const int64_t first = (step_ - 1) * global_seqs + (static_cast<int64_t>(dr_) * m + j) * B_;
    if (!first_ && !last_) return;
    synthetic_batch(opt_.data_seed, cfg_.vocab, T_, first, B_, host_tokens_, host_targets_);
    if (first_) {
      be_.copy_from_host(slot(j).tokens.data(), host_tokens_.data(),
                         host_tokens_.size() * sizeof(int32_t));
    }
    if (last_) {
      be_.copy_from_host(targets_.data(), host_targets_.data(),
                         host_targets_.size() * sizeof(int32_t));
    }
  }

  void forward(int j) {
    const PhaseScope ph(phases_, "forward");
    Slot& s = slot(j);
    load_batch(j);
    if (first_) {
      acquire(0);
      const float* pe = PE();
      be_.embedding_forward_vocab(partial_, static_cast<const int32_t*>(s.tokens.data()),
                                  pe + le_.wte, v0_, Vl_, tr_ == 0 ? pe + le_.wpe : nullptr, B_,
                                  T_, C_);
      release(0);
      reduce_rows(s.x, partial_);
    }
    for (int l = 0; l < nl_; ++l) {
      acquire(layer_index(l));
      layer_forward(s, l);
      release(layer_index(l));
    }
    if (last_) {
      acquire(0);
      head(s, j > 0);
      release(0);
    }
  }

  void backward(int j) {
    const PhaseScope ph(phases_, "backward");
    Slot& s = slot(j);
    for (int l = nl_ - 1; l >= 0; --l) {
      acquire(layer_index(l));
      layer_backward(s, l, s.dout);
      release(layer_index(l));
      if (j == opt_.grad_accum - 1) reduce_unit(layer_index(l));  // complete for this step
    }
    if (first_) {
      float* ge = GE();
      const float* dr = gather_rows(gath_, s.dout);
      be_.embedding_backward_vocab(ge + le_.wte, ge + le_.wpe, dr,
                                   static_cast<const int32_t*>(s.tokens.data()), v0_, Vl_, B_, T_,
                                   C_);
    }
  }

  // ---- pipeline p2p ------------------------------------------------------------------------------
  int prev() const { return pr_ - 1; }
  int next() const { return pr_ + 1; }
  float* fwd_out(int j) {
    if (last_) return nullptr;
    Slot& s = slot(j);
    return nl_ == 0 ? s.x : s.layers[sz(nl_ - 1)].res3;
  }
  float* fwd_in(int j) { return first_ ? nullptr : slot(j).x; }
  float* bwd_in(int j) { return last_ ? nullptr : slot(j).dout; }
  float* bwd_out(int j) { return first_ ? nullptr : slot(j).dout; }
  // One group: send `send` to pp rank `to` and receive `recv` from `from` (either may be null).
  void p2p(float* send, int to, float* recv, int from) {
    if (send == nullptr && recv == nullptr) return;
    const size_t n = sz(Rs_) * sz(C_);
    const PhaseScope ph(phases_, "comm:pp_send_recv");
    be_.comm_begin();
    pp_.group_start();
    if (send != nullptr) pp_.send(send, n, DType::f32, to);
    if (recv != nullptr) pp_.recv(recv, n, DType::f32, from);
    pp_.group_end();
    be_.comm_end();
    if (send != nullptr) record(CommKind::pp_send, n);
    if (recv != nullptr) record(CommKind::pp_recv, n);
  }
  void recv_forward(int j) { p2p(nullptr, 0, fwd_in(j), prev()); }
  void send_forward(int j) { p2p(fwd_out(j), next(), nullptr, 0); }
  void recv_backward(int j) { p2p(nullptr, 0, bwd_in(j), next()); }
  void send_backward(int j) { p2p(bwd_out(j), prev(), nullptr, 0); }

  // ---- gradients and optimizer -------------------------------------------------------------------
  // Unit i's gradient is complete for the step: tp sync (SP), tied-embedding exchange (pp), then
  // the dp reduction of the stage (see the top of the file for why in this order).
  void reduce_unit(size_t i) {
    const LocalUnit& u = units_[i];
    float* g = unit_grads(i);
    if (sp_) tp_all_reduce(g + u.sync_begin, u.size - u.sync_begin, ReduceOp::sum);
    if (u.unit == 0 && p_ > 1) {
      // Tied embedding: first and last stage swap their partial gradients and add them
      // (a + b = b + a, so both copies stay bitwise equal).
      Buffer other = be_.alloc_floats(MemCategory::comm, u.size);
      const int peer = first_ ? p_ - 1 : 0;
      const PhaseScope ph(phases_, "comm:pp_embed");
      be_.comm_begin();
      pp_.group_start();
      pp_.send(g, u.size, DType::f32, peer);
      pp_.recv(other.data(), u.size, DType::f32, peer);
      pp_.group_end();
      be_.comm_end();
      record(CommKind::pp_embed, u.size);
      be_.add(g, g, other.f32(), u.size);
    }
    if (zero_ == ZeroStage::none) {
      dpc().all_reduce(g, u.spec);
      return;
    }
    dpc().reduce_scatter(g, grad_shard(i), u.spec);
    buckets_[i].reset();  // zero 2/3: the bucket's life ends here
  }

  void optimizer_step() {
    AdamWArgs a = opt_.adam;
    a.step = static_cast<int>(step_);
    if (zero_ == ZeroStage::none) {
      be_.adamw(params_.f32(), grads_.f32(), m_.f32(), v_.f32(), psi_, a);
      return;
    }
    if (zero_ == ZeroStage::three) {  // params, grads, m and v are all shards in the same order
      be_.adamw(params_.f32(), grads_.f32(), m_.f32(), v_.f32(), psi_shard_, a);
      return;
    }
    for (size_t i = 0; i < units_.size(); ++i) {
      const LocalUnit& u = units_[i];
      be_.adamw(params_.f32() + u.off + u.spec.begin(dr_), grad_shard(i), m_.f32() + u.off_shard,
                v_.f32() + u.off_shard, u.spec.shard, a);
      dpc().all_gather(params_.f32() + u.off, u.spec);
    }
  }

  Backend& be_;
  Communicator &dp_, &tp_, &pp_, &world_;
  TrainOptions opt_;
  GptConfig cfg_;
  ParamLayout layout_;
  int t_ = 1, tr_ = 0, p_ = 1, pr_ = 0, nd_ = 1, dr_ = 0;
  bool sp_ = false, first_ = true, last_ = true;
  int B_ = 1, T_ = 1, C_ = 1, Cl_ = 1, NHl_ = 1, Vl_ = 1, v0_ = 0, R_ = 1, Rs_ = 1;
  int nl_ = 0, l0_ = 0, embed_unit_ = -1;
  LocalEmbed le_{};
  LocalLayer ll_{};
  std::vector<LocalUnit> units_;
  size_t psi_ = 0, psi_shard_ = 0;
  ZeroStage zero_ = ZeroStage::none;
  bool counting_ = true;  // false inside full_params
  // params_: full (zero 0–2) or the own shards (zero 3); grads_: full (zero 0/1) or shards (2/3).
  Buffer params_, grads_, m_, v_, targets_, loss_;
  std::vector<Buffer> buckets_, gathered_;  // per local unit: zero 2/3 buckets, zero 3 gathers
  std::vector<Buffer> owned_;
  std::vector<Slot> slots_;
  float *partial_ = nullptr, *dC_ = nullptr, *dCl_ = nullptr, *d4C_ = nullptr, *dqkv_ = nullptr,
        *datt_ = nullptr, *gath_ = nullptr, *ln1g_ = nullptr, *ln2g_ = nullptr;
  float *lnf_ = nullptr, *lnf_mean_ = nullptr, *lnf_rstd_ = nullptr, *lnfg_ = nullptr,
        *logits_ = nullptr, *losses_ = nullptr, *rowmax_ = nullptr, *cestats_ = nullptr,
        *dlnf_ = nullptr;
  std::vector<int32_t> host_tokens_, host_targets_;
  CommStats stats_;
  int64_t step_ = 0;
};

}  // namespace

std::string layout_error(const TrainOptions& opt, const ParallelLayout& lay) {
  const GptConfig& c = opt.model;
  if (lay.dp < 1 || lay.tp < 1 || lay.pp < 1) return "dp, tp and pp must be ≥ 1";
  if (c.heads % lay.tp != 0) return fmt::format("tp {} does not divide heads {}", lay.tp, c.heads);
  if (c.hidden % lay.tp != 0) return fmt::format("tp {} does not divide hidden {}", lay.tp, c.hidden);
  if (c.vocab % lay.tp != 0) {
    return fmt::format("tp {} does not divide vocab {} (vocabulary-parallel embedding)", lay.tp,
                       c.vocab);
  }
  if (lay.pp > c.layers) return fmt::format("pp {} > layers {}", lay.pp, c.layers);
  if (opt.sp && (opt.micro_batch * c.seq) % lay.tp != 0) {
    return fmt::format("sp: micro-batch × seq = {} is not divisible by tp {}",
                       opt.micro_batch * c.seq, lay.tp);
  }
  return "";
}

std::unique_ptr<TrainingStep> make_parallel_training_step(Backend& be, RankContext& ctx,
                                                          const TrainOptions& opt) {
  if (const std::string e = layout_error(opt, ctx.layout); !e.empty()) throw UsageError(e);
  GCB_CHECK(ctx.dp && ctx.tp && ctx.pp, "rank context without dp/tp/pp communicators");
  return std::make_unique<ParallelEngine>(be, ctx, opt);
}

}  // namespace gcb::models

namespace gcb::models {
namespace {
size_t zu(int v) { return static_cast<size_t>(v); }
}  // namespace

int stage_layers(int layers, int pp, int stage) {
  return layers / pp + (stage < layers % pp ? 1 : 0);
}
int stage_first_layer(int layers, int pp, int stage) {
  return stage * (layers / pp) + std::min(stage, layers % pp);
}

namespace {
// Local unit sizes on a tp rank, each padded to a multiple of dp (the engine's LocalUnit::spec):
// a layer (12C² + 7C)/t + 6C, the embedding unit VC/t + TC + 2C.
struct PaddedUnits {
  size_t layer, embed;
};
PaddedUnits padded_units(const GptConfig& c, const ParallelLayout& lay) {
  const size_t C = zu(c.hidden), t = zu(lay.tp), d = zu(lay.dp);
  auto pad = [d](size_t n) { return (n + d - 1) / d * d; };
  return {pad((12 * C * C + 7 * C) / t + 6 * C), pad(zu(c.vocab) * C / t + zu(c.seq) * C + 2 * C)};
}
}  // namespace

size_t parallel_stage_params(const GptConfig& c, const ParallelLayout& lay, int stage) {
  const PaddedUnits u = padded_units(c, lay);
  const bool ends = stage == 0 || stage == lay.pp - 1;
  return zu(stage_layers(c.layers, lay.pp, stage)) * u.layer + (ends ? u.embed : 0);
}

StateBytes parallel_state_bytes(const TrainOptions& opt, const ParallelLayout& lay, int stage) {
  const size_t psi = parallel_stage_params(opt.model, lay, stage);
  return expected_state_bytes(opt.zero, psi, lay.dp);
}

size_t parallel_activation_floats(const TrainOptions& opt, const ParallelLayout& lay, int stage) {
  const GptConfig& c = opt.model;
  const bool sp = opt.sp && lay.tp > 1;
  const size_t t = zu(lay.tp), R = zu(opt.micro_batch) * zu(c.seq), Rs = sp ? R / t : R;
  const size_t C = zu(c.hidden), Cl = C / t, att = R * zu(c.heads) / t * zu(c.seq);
  const size_t Ls = zu(stage_layers(c.layers, lay.pp, stage));
  const size_t m = zu(opt.grad_accum), p = zu(lay.pp), s = zu(stage);
  const size_t slots = lay.pp == 1 || opt.schedule == PipeSchedule::gpipe ? m : std::min(m, p - s);
  // Kept per layer (Korthikanti Table 2 terms, fp32, LayerNorm statistics, no dropout): the
  // sequence-sharded LayerNorm/residual region Rs·(4C + 4) and the tp-sharded region
  // R·(12C/t) + the attention probabilities R·NH/t·T.
  const size_t core = R * Cl + att;  // attention output + probabilities (selective drops them)
  const size_t layer_all = Rs * (4 * C + 4) + R * 12 * Cl + att;
  size_t per_slot = 2 * Rs * C, shared = 0;  // stage input, output gradient
  switch (opt.recompute) {
    case Recompute::none: per_slot += Ls * layer_all; break;
    case Recompute::selective: per_slot += Ls * (layer_all - core); shared += core; break;
    case Recompute::full: per_slot += Ls * Rs * C; shared += layer_all - Rs * C; break;
  }
  // Scratch: row-parallel partial R·C, dC Rs·C, dC_l, d4C_l, dqkv_l (16·R·C/t … = R·8C/t), datt;
  // under SP the gathered gradient and the two re-gathered LayerNorm outputs (3·R·C).
  shared += R * C + Rs * C + R * 8 * Cl + att + (sp ? 3 * R * C : 0);
  if (stage == lay.pp - 1) {
    // Head: lnf Rs·(C + 2), gathered lnf (SP), logits R·V/t (probs, dlogits in place), losses,
    // row maxima, {Σexp, target logit}, dlnf.
    shared += Rs * (C + 2) + (sp ? R * C : 0) + R * zu(c.vocab) / t + 4 * R + Rs * C;
  }
  return slots * per_slot + shared;
}

std::array<int64_t, kCommKinds> parallel_comm_theory(const TrainOptions& opt,
                                                     const ParallelLayout& lay, int stage) {
  std::array<int64_t, kCommKinds> th{};
  auto at = [&th](CommKind k) -> int64_t& { return th[static_cast<size_t>(k)]; };
  const GptConfig& c = opt.model;
  const bool sp = opt.sp && lay.tp > 1, first = stage == 0, last = stage == lay.pp - 1;
  const int64_t t = lay.tp, R = static_cast<int64_t>(opt.micro_batch) * c.seq, C = c.hidden;
  const int64_t Rs = sp ? R / t : R, m = opt.grad_accum;
  const int64_t Ls = stage_layers(c.layers, lay.pp, stage), RC = R * C;
  const int64_t redo = opt.recompute == Recompute::full ? 2 * Ls * RC : 0;  // rerun forward
  if (t > 1 && !sp) {
    // Megatron: 2 all-reduces per layer forward (g), 2 backward (f) = 4·b·s·h per layer.
    at(CommKind::tp_all_reduce) =
        m * (4 * Ls * RC + redo + (first ? RC : 0) + (last ? RC + 3 * R : 0));
  } else if (t > 1) {
    // Korthikanti SP: each all-reduce becomes all-gather + reduce-scatter; backward also
    // re-gathers the two LayerNorm outputs (not kept), so all-gather 6·RC, reduce-scatter 4·RC.
    at(CommKind::tp_all_gather) = m * (6 * Ls * RC + redo + (first ? RC : 0) + (last ? RC : 0));
    at(CommKind::tp_reduce_scatter) =
        m * (4 * Ls * RC + redo + (first ? RC : 0) + (last ? RC : 0));
    // Row maxima and loss statistics, plus once per step the partial LayerNorm / bias grads.
    at(CommKind::tp_all_reduce) = m * (last ? 3 * R : 0) + Ls * 6 * C + (first || last ? 2 * C : 0);
  }
  if (lay.pp > 1) {
    // b·s·h (b·s·h/t under SP) per stage boundary per micro-batch, each direction.
    const int64_t n = m * Rs * C * ((first ? 0 : 1) + (last ? 0 : 1));
    at(CommKind::pp_send) = n;
    at(CommKind::pp_recv) = n;
    if (first || last) at(CommKind::pp_embed) = c.vocab * C / t + c.seq * C + 2 * C;
  }
  if (lay.dp > 1) {
    // The engine reduces each unit's gradient once per step, summed over the m micro-batches
    // (top comment), as the dp-only engines do: all-reduce Ψ (zero 0), reduce-scatter Ψ +
    // all-gather Ψ (zero 1 and 2); ZeRO-3's gathers are counted below per stage.
    const int64_t psi = static_cast<int64_t>(parallel_stage_params(c, lay, stage));
    const CommTheory d = comm_theory_elements(opt.zero, psi, 1, lay.dp);
    at(CommKind::all_reduce) = d.all_reduce;
    at(CommKind::reduce_scatter) = d.reduce_scatter;
    at(CommKind::all_gather) = d.all_gather;
    if (opt.zero == ZeroStage::three) {
      // ZeRO paper §7.2.2: parameters all-gathered for forward and again for backward, per
      // micro-batch. Per stage: each layer twice; the embedding unit once at each end where it is
      // used (first stage: embedding forward, last: the head's forward + backward), so 2·m·Ψ at
      // pp = 1 and less on the pipeline's ends, whose embedding backward needs no parameters.
      const PaddedUnits u = padded_units(c, lay);
      const auto layer = static_cast<int64_t>(u.layer), embed = static_cast<int64_t>(u.embed);
      at(CommKind::all_gather) = m * (2 * Ls * layer + ((first ? 1 : 0) + (last ? 1 : 0)) * embed);
    }
  }
  at(CommKind::loss_all_reduce) = (lay.dp > 1 ? 1 : 0) + (lay.pp > 1 ? 1 : 0);
  return th;
}

}  // namespace gcb::models
