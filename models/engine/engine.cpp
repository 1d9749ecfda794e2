// The engine: a rank's stage of the model (rank_units.hpp), its model states (model_states.hpp),
// its activations (activations.hpp) and the layer math (gpt_layers.hpp), driven through one step
// by the pipeline schedule (pipeline_schedule.hpp).
//
// Order of a unit's gradient reduction, the same on every rank: (1) under SP the tp all-reduce of
// the partial LayerNorm/bias gradients (the unit's "sync" tail), (2) for the embedding unit with
// pp > 1 the tied-gradient exchange between the first and the last stage, (3) the dp reduction
// (all-reduce at zero 0, reduce-scatter at 1–3), all on the whole unit gradient summed over the
// step's micro-batches. Layers are reduced as soon as the last micro-batch's backward finishes
// them (as DDP's no_sync accumulation), the embedding unit after the schedule (its two ends finish
// at different times). All gradients are sums of gradients already scaled by 1/(global tokens),
// so no averaging step is needed.
//
// Gradient clipping (Megatron-LM megatron/core/optimizer/clip_grads.py clip_grad_norm_fp32, torch
// torch/nn/utils/clip_grad.py clip_grad_norm_): after the reductions every rank sums the squares of
// its share of the reduced gradients (ModelStates::grad_square_sum: its dp shard range, replicated
// pieces on tp rank 0, the tied embedding on the first stage), one fp64 all-reduce per group of
// more than one rank (dp, then tp, then pp) gives the global squared norm on every rank, and
// AdamW scales each gradient by min(1, max_norm / (norm + 1e-6)) as it reads it. The partial sums
// do not depend on the ZeRO stage, so ZeRO-1/2/3 stay bitwise equal to zero 0.
#include "models/engine/engine.hpp"

#include <fmt/format.h>

#include <cmath>
#include <limits>
#include <vector>

#include "core/error.hpp"
#include "core/size.hpp"
#include "models/engine/activations.hpp"
#include "models/engine/attention_agreement.hpp"
#include "models/engine/comm/comm_queue.hpp"
#include "models/engine/comm/dp_comm.hpp"
#include "models/engine/gpt_layers.hpp"
#include "models/engine/model_states.hpp"
#include "models/engine/pipeline_schedule.hpp"
#include "models/model/rank_shape.hpp"
#include "models/model/rank_units.hpp"
#include "models/io/token_data.hpp"
#include "models/engine/comm/tp_comm.hpp"

namespace gcb::models {
namespace {

std::unique_ptr<TokenSource> token_source(const TrainOptions& o) {
  if (o.data_file.empty()) return synthetic_tokens(o.data_seed, o.model.vocab);
  return open_token_file(o.data_file, o.model.vocab, o.model.seq);
}

class Engine final : public TrainingStep {
 public:
  Engine(Backend& be, ParallelGroups& ctx, const TrainOptions& o)
      : be_(be),
        ctx_(ctx),
        opt_(o),
        policy_(precision_policy(o.precision)),
        units_(o.model, ctx.layout, ctx.tp_rank, ctx.pp_rank),
        shape_(o, ctx.layout, ctx.tp_rank, ctx.pp_rank, units_.stage_layers()),
        dp_queue_(be, *ctx.dp, o.overlap_comm),
        dp_(be, dp_queue_),
        states_(be, units_, o.zero, policy_, o.offload, dp_, ctx.dp_rank),
        acts_(be, shape_, o.recompute, policy_.activations, offloads_activations(o.offload)),
        tp_(be, *ctx.tp, shape_.R, shape_.C, shape_.sp),
        layers_(be, tp_, shape_, units_, o.recompute, acts_),
        actions_(pipeline_actions(o.schedule, ctx.layout.pp, ctx.pp_rank, o.grad_accum)),
        data_(token_source(o)) {
    states_.initialize(o.seed);
    // Unset: tokens and targets are uploaded for every micro-batch before they are read; the loss
    // is written by the first micro-batch's sum (last stage) or a fill (the others) every step.
    const size_t rows = sz(shape_.R);
    if (shape_.first) {
      for (int j = 0; j < shape_.slots; ++j)
        tokens_.push_back(be.alloc(MemCategory::workspace, DType::i32, rows, AllocInit::unset));
    }
    if (shape_.last) targets_ = be.alloc(MemCategory::workspace, DType::i32, rows, AllocInit::unset);
    loss_ = be.alloc(MemCategory::workspace, DType::f64, 1, AllocInit::unset);
    norm_ = be.alloc(MemCategory::workspace, DType::f64, 1, AllocInit::unset);  // grad_square_sum fills it
    // --attn auto: one implementation for every rank, agreed before the first step.
    agree_on_attention(be, *ctx.world, policy_.activations, shape_.B, shape_.T, shape_.Cl, shape_.heads);
    set_counting(true);
  }

  std::string name() const override {
    const ParallelLayout& l = ctx_.layout;
    std::string s = fmt::format("dp{}-tp{}-pp{}", l.dp, l.tp, l.pp);
    if (shape_.sp) s += "-sp";
    if (opt_.zero != ZeroStage::none) s += fmt::format("-zero{}", static_cast<int>(opt_.zero));
    if (l.pp > 1) s += opt_.schedule == PipeSchedule::gpipe ? "-gpipe" : "-1f1b";
    return s;
  }
  size_t padded_params() const override { return states_.padded_params(); }
  const OffloadBytes& last_step_offload() const override { return offload_; }
  const CommStats& last_step_comm() const override { return stats_; }
  double last_grad_norm() const override { return grad_norm_; }
  double last_lr() const override { return lr_; }
  const float* token_losses() const override { return layers_.token_losses(); }
  void set_phase_timer(PhaseTimer* t) override {
    phases_ = t;
    dp_.set_phase_timer(t);
    tp_.set_phase_timer(t);
  }

  double step() override {
    stats_ = CommStats{};
    ++step_;
    states_.begin_step();
    for (const PipeAction& a : actions_) {
      switch (a.kind) {
        case PipeAction::Kind::forward: forward(a.micro_batch); break;
        case PipeAction::Kind::backward: backward(a.micro_batch); break;
        case PipeAction::Kind::exchange: exchange(a.exchange); break;
      }
    }
    if (units_.has_embedding()) {                 // layers were reduced during backward
      const PhaseScope ph(phases_, "optimizer");  // gradient reductions nest as comm phases
      reduce_unit(0);
    }
    states_.finish_reductions();
    // Loss: Σ over micro-batches on the last stage, scaled, summed over dp, sent to every stage.
    if (!shape_.last) be_.fill(loss_.view(), 1, 0.0f);
    be_.scale(loss_.view(), 1.0 / global_tokens(), 1);
    for (Communicator* c : {ctx_.dp.get(), ctx_.pp.get()}) {
      if (c->size() == 1) continue;
      const PhaseScope ph(phases_, "comm:loss_all_reduce");
      ordered_collective(be_, *c, [&] { c->all_reduce(loss_.data(), loss_.data(), 1, DType::f64, ReduceOp::sum); });
      stats_.record(CommKind::loss_all_reduce, sizeof(double));
    }
    AdamWArgs a = opt_.optim.adam;
    a.step = static_cast<int>(step_);
    lr_ = scheduled_lr(opt_.optim, step_);
    a.lr = static_cast<float>(lr_);
    grad_norm_ = std::numeric_limits<double>::quiet_NaN();
    if (opt_.optim.grad_clip > 0.0) {
      grad_norm_ = global_grad_norm();
      a.grad_scale = clip_coefficient(grad_norm_, opt_.optim.grad_clip);
    }
    {
      const PhaseScope ph(phases_, "optimizer");
      states_.optimizer_step(a, opt_.optim.decay_groups);
    }
    for (Communicator* c : {ctx_.dp.get(), ctx_.tp.get(), ctx_.pp.get()}) c->synchronize();
    offload_ = states_.last_step_offload();
    offload_ += acts_.take_swapped();
    double loss = 0.0;
    be_.copy_to_host(&loss, loss_.data(), sizeof(double));
    return loss;
  }

  std::vector<float> full_params() override { return assemble(ModelStates::Values::weights); }
  std::vector<float> full_grads() override { return assemble(ModelStates::Values::grads); }
  void load_params(const std::vector<float>& canonical) override { states_.load(canonical); }

 private:
  double global_tokens() const {
    return static_cast<double>(ctx_.layout.dp) * opt_.grad_accum * opt_.micro_batch * opt_.model.seq;
  }
  float dloss() const { return static_cast<float>(1.0 / global_tokens()); }

  // The global gradient norm of the step (see the top of the file), the same on every rank.
  double global_grad_norm() {
    {
      const PhaseScope ph(phases_, "optimizer");
      states_.grad_square_sum(norm_.view(), ctx_.tp_rank == 0, shape_.first);
    }
    for (Communicator* c : {ctx_.dp.get(), ctx_.tp.get(), ctx_.pp.get()}) {
      if (c->size() == 1) continue;
      const PhaseScope ph(phases_, "comm:grad_norm_all_reduce");
      ordered_collective(be_, *c, [&] { c->all_reduce(norm_.data(), norm_.data(), 1, DType::f64, ReduceOp::sum); });
      stats_.record(CommKind::grad_norm_all_reduce, sizeof(double));
    }
    double sq = 0.0;
    be_.copy_to_host(&sq, norm_.data(), sizeof(double));
    return std::sqrt(sq);
  }

  void set_counting(bool on) {
    dp_.set_stats(on ? &stats_ : nullptr);
    tp_.set_stats(on ? &stats_ : nullptr);
  }

  // Every rank writes the pieces it is responsible for (dp rank 0; replicated pieces only on tp
  // rank 0; the embedding only on the first stage) into a zeroed canonical vector, and a sum over
  // the world assembles it: adding zeros is exact, so the result is bitwise.
  std::vector<float> assemble(ModelStates::Values which) {
    const ParamLayout& layout = units_.canonical();
    std::vector<float> host(layout.total(), 0.0f);
    set_counting(false);
    for (size_t i = 0; i < units_.count(); ++i) {
      const LocalUnit& u = units_.units()[i];
      const std::vector<float> local = states_.unit_to_host(i, which);  // collective over dp
      if (ctx_.dp_rank != 0 || (u.unit == 0 && !shape_.first)) continue;
      float* unit = host.data() + layout.unit_offset(u.unit);
      for (const Piece& pc : u.pieces) {
        if (pc.replicated && ctx_.tp_rank != 0) continue;
        std::copy_n(local.data() + pc.local, pc.len, unit + pc.canonical);
      }
    }
    set_counting(true);
    Buffer buf = be_.alloc(MemCategory::workspace, DType::f32, host.size(), AllocInit::unset);
    be_.copy_from_host(buf.data(), host.data(), host.size() * sizeof(float));
    Communicator& world = *ctx_.world;
    ordered_collective(be_, world,
                       [&] { world.all_reduce(buf.data(), buf.data(), host.size(), DType::f32, ReduceOp::sum); });
    world.synchronize();
    be_.copy_to_host(host.data(), buf.data(), host.size() * sizeof(float));
    return host;
  }

  // Micro-batch j of this dp rank: sequences (dp_rank·m + j)·B … of this step's global batch, so
  // dp·m micro-batches of one rank and m of each of dp ranks cover the same sequences.
  void load_batch(int j) {
    if (!shape_.first && !shape_.last) return;
    const int m = opt_.grad_accum, B = opt_.micro_batch;
    const int64_t global_seqs = static_cast<int64_t>(ctx_.layout.dp) * m * B;
    const int64_t first = (step_ - 1) * global_seqs + (static_cast<int64_t>(ctx_.dp_rank) * m + j) * B;
    data_->read(first, B, opt_.model.seq, host_tokens_, host_targets_);
    if (shape_.first) {
      be_.copy_from_host(slot_tokens(j).data(), host_tokens_.data(), host_tokens_.size() * sizeof(int32_t));
    }
    if (shape_.last) {
      be_.copy_from_host(targets_.data(), host_targets_.data(), host_targets_.size() * sizeof(int32_t));
    }
  }
  Buffer& slot_tokens(int j) { return tokens_[sz(j % shape_.slots)]; }

  void forward(int j) {
    const PhaseScope ph(phases_, "forward");
    Slot& s = acts_.slot(j);
    load_batch(j);
    if (shape_.first) {
      layers_.embed_forward(s, slot_tokens(j).i32(), states_.acquire(0));
      states_.release(0);
    }
    for (int l = 0; l < shape_.stage_layers; ++l) {
      const size_t u = units_.layer_unit(l);
      layers_.layer_forward(s, l, states_.acquire(u));
      states_.release(u);
      if (acts_.swaps(l)) acts_.swap_out(j, l);  // --offload activations
    }
    if (shape_.last) {
      layers_.head(s, targets_.i32(), states_.acquire(0), states_.grads(0), loss_.view(), j > 0, dloss());
      states_.release(0);
    }
  }

  void backward(int j) {
    const PhaseScope ph(phases_, "backward");
    Slot& s = acts_.slot(j);
    const bool full = opt_.recompute == Recompute::full;
    // --offload activations: each kept set comes back once, before the first backward that reads
    // it — a layer's own, and its input (the output of the layer below; under full recomputation
    // the block's input, the previous block's output).
    std::vector<bool> back(sz(shape_.stage_layers), false);
    const auto need = [&](int l) {
      if (l < 0 || back[sz(l)] || !acts_.swaps(l)) return;
      acts_.swap_in(j, l);
      back[sz(l)] = true;
    };
    for (int l = shape_.stage_layers - 1; l >= 0; --l) {
      const size_t u = units_.layer_unit(l);
      if (full) {
        if (shape_.block_end(l)) need(shape_.block_start(l) - 1);
      } else {
        need(l);
        need(l - 1);
      }
      if (full && shape_.block_end(l)) {
        // The block's forward again from its kept input (Chen et al. 2016 §3): its first layers
        // with their own parameters (under ZeRO-3 gathered once more), the last one below with
        // those its backward uses right after. Blocks of 1 layer: plain full recomputation.
        for (int i = shape_.block_start(l); i < l; ++i) {
          const size_t ui = units_.layer_unit(i);
          layers_.layer_forward(s, i, states_.acquire(ui));
          states_.release(ui);
        }
      }
      const View p = states_.acquire(u);
      if (full && shape_.block_end(l)) layers_.layer_forward(s, l, p);
      layers_.layer_backward(s, l, p, states_.grads(u));
      states_.release(u);
      if (j == opt_.grad_accum - 1) reduce_unit(u);  // complete for this step
    }
    if (shape_.first) layers_.embed_backward(s, slot_tokens(j).i32(), states_.grads(0));
  }

  // One group of pipeline sends and receives (stages without that neighbour skip its part).
  void exchange(const PipeExchange& e) {
    Communicator& pp = *ctx_.pp;
    const int prev = ctx_.pp_rank - 1, next = ctx_.pp_rank + 1;
    const size_t n = sz(shape_.Rs) * sz(shape_.C);
    const DType t = policy_.activations;
    struct Call {
      bool send;
      void* buf;
      int peer;
    };
    std::vector<Call> calls;
    if (!shape_.last && e.send_output >= 0)
      calls.push_back({true, acts_.slot(e.send_output).layers.back().res3.data, next});
    if (!shape_.last && e.recv_output_grad >= 0)
      calls.push_back({false, acts_.slot(e.recv_output_grad).dout.data, next});
    if (!shape_.first && e.send_input_grad >= 0) calls.push_back({true, acts_.slot(e.send_input_grad).dout.data, prev});
    if (!shape_.first && e.recv_input >= 0) calls.push_back({false, acts_.slot(e.recv_input).x.data, prev});
    if (calls.empty()) return;
    const PhaseScope ph(phases_, "comm:pp_send_recv");
    ordered_collective(be_, pp, [&] {
      pp.group_start();
      for (const Call& c : calls) {
        if (c.send) {
          pp.send(c.buf, n, t, c.peer);
        } else {
          pp.recv(c.buf, n, t, c.peer);
        }
      }
      pp.group_end();
    });
    for (const Call& c : calls) stats_.record(c.send ? CommKind::pp_send : CommKind::pp_recv, n * dtype_size(t));
  }

  // Unit i's gradient is complete for the step (see the top of the file for the order).
  void reduce_unit(size_t i) {
    const LocalUnit& u = units_.units()[i];
    const View g = states_.grads(i);
    if (shape_.sp) tp_.all_reduce(g.at(u.sync_begin), u.size - u.sync_begin, ReduceOp::sum);
    if (u.unit == 0 && ctx_.layout.pp > 1) {
      // Tied embedding: first and last stage swap their partial gradients and add them
      // (a + b = b + a, so both copies stay bitwise equal).
      Communicator& pp = *ctx_.pp;
      Buffer other = be_.alloc(MemCategory::comm, g.dtype, u.size, AllocInit::unset);  // the recv writes it
      const int peer = shape_.first ? ctx_.layout.pp - 1 : 0;
      const PhaseScope ph(phases_, "comm:pp_embed");
      ordered_collective(be_, pp, [&] {
        pp.group_start();
        pp.send(g.data, u.size, g.dtype, peer);
        pp.recv(other.data(), u.size, g.dtype, peer);
        pp.group_end();
      });
      stats_.record(CommKind::pp_embed, u.size * dtype_size(g.dtype));
      be_.add(g, g, other.view(), u.size);
    }
    states_.reduce(i);
  }

  Backend& be_;
  ParallelGroups& ctx_;
  TrainOptions opt_;
  PrecisionPolicy policy_;
  RankUnits units_;
  RankShape shape_;
  CommQueue dp_queue_;
  DpComm dp_;
  ModelStates states_;
  Activations acts_;
  TpComm tp_;
  GptLayers layers_;
  std::vector<PipeAction> actions_;
  std::unique_ptr<TokenSource> data_;
  std::vector<Buffer> tokens_;  // first stage: each slot's tokens (embedding backward reads them)
  Buffer targets_, loss_, norm_;
  std::vector<int32_t> host_tokens_, host_targets_;
  CommStats stats_;
  OffloadBytes offload_;  // the last step's copies: model states' and activations'
  PhaseTimer* phases_ = nullptr;
  int64_t step_ = 0;
  double grad_norm_ = std::numeric_limits<double>::quiet_NaN(), lr_ = 0.0;
};

}  // namespace

std::string overlap_error(const TrainOptions& o, const ParallelLayout& layout, const Communicator* dp) {
  if (!o.overlap_comm || dp == nullptr || dp->size() == 1 || dp->stream() != nullptr) return "";
  // A second thread calls the dp group while this rank's thread calls its tp and pp groups.
  const bool other_groups = layout.tp > 1 || layout.pp > 1;
  const ThreadSupport need = other_groups ? ThreadSupport::concurrent : ThreadSupport::serialized;
  if (dp->thread_support() >= need) return "";
  return fmt::format(
      "--overlap runs the dp group's collectives on a second thread{}; this {} communicator does not "
      "allow it (MPI: MPI_THREAD_{})",
      other_groups ? " while the tp and pp groups run on the rank's thread" : "", dp->backend(),
      other_groups ? "MULTIPLE" : "SERIALIZED");
}

std::unique_ptr<TrainingStep> make_training_step(Backend& be, ParallelGroups& ctx, const TrainOptions& o) {
  validate(o.model);
  if (const std::string e = layout_error(o, ctx.layout); !e.empty()) throw UsageError(e);
  if (const std::string e = optimizer_error(o.optim); !e.empty()) throw UsageError(e);
  GCB_CHECK(ctx.dp && ctx.tp && ctx.pp && ctx.world, "rank context without world/dp/tp/pp communicators");
  // make_parallel_groups split them to the layout's sizes (it refuses a layout that does not fit the world).
  GCB_CHECK(ctx.dp->size() == ctx.layout.dp && ctx.tp->size() == ctx.layout.tp && ctx.pp->size() == ctx.layout.pp,
            "rank context communicators do not match the layout");
  if (const std::string e = overlap_error(o, ctx.layout, ctx.dp.get()); !e.empty()) throw UsageError(e);
  // The world was made for the backend's memory (communicator_for in training_run.cpp; the host
  // communicator in scan's reference step), and the groups are splits of it.
  for (const Communicator* c : {ctx.world, ctx.dp.get(), ctx.tp.get(), ctx.pp.get()}) {
    GCB_CHECK(c->memory() == be.memory_space(),
              fmt::format("the {} backend computes in {} memory but the {} communicator moves {} memory", be.name(),
                          memory_space_name(be.memory_space()), c->backend(), memory_space_name(c->memory())));
  }
  return std::make_unique<Engine>(be, ctx, o);
}

}  // namespace gcb::models
