// The engine's data-parallel layouts (tp = pp = 1) on `tiny`, ranks as threads, with the default
// optimizer groups and gradient clipping that scales every step (layout_runs.hpp): single-rank
// training learns; DP matches the single rank (fp32 rtol 1e-5, the different summation order of
// gradients and loss being the only difference); ZeRO-1/2 are bitwise equal to DP, ZeRO-3 too
// (every stage reduces the same accumulated gradients in the same order); reruns are bitwise;
// recomputation (selective, full, full in blocks of K layers) is bitwise; model-state, activation
// and communicated bytes per rank equal theory.hpp.
#include <gtest/gtest.h>

#include <cmath>
#include <mutex>
#include <vector>

#include "collectives/thread_communicator.hpp"
#include "core/error.hpp"
#include "models/backend/cpu/cpu_backend.hpp"
#include "models/engine/engine.hpp"
#include "models/theory/theory.hpp"
#include "tests/models/engine/layout_runs.hpp"

namespace gcb::models {
namespace {

using test::RankOutcome;
using test::run_layout;

// The shared `tiny` options (layout_runs.hpp) with ZeRO stage z and Adam's default eps, which
// the key-bias bound of kFp32 below assumes.
TrainOptions tiny_options(ZeroStage z, int micro_batch, int grad_accum) {
  TrainOptions o = test::tiny_options(named_config("tiny").layers, micro_batch, grad_accum);
  o.zero = z;
  o.optim.adam.eps = AdamWArgs{}.eps;
  return o;
}

ParallelLayout dp(int n) { return {n, 1, 1}; }

// The key bias noise bound: 3 steps × lr 1e-2 × noise ≲ 1e-10 / eps 1e-8 ≈ 3e-4; observed ≲ 2e-5.
const test::Tolerance kFp32{1e-5, 0.1, 1e-4};

TEST(Engines, SingleRankLossDecreases) {
  const RankOutcome r = run_layout(dp(1), tiny_options(ZeroStage::none, 4, 1), 30)[0];
  EXPECT_NEAR(r.losses.front(), std::log(64.0), 0.3);  // initial loss ≈ ln V for small logits
  EXPECT_LT(r.losses.back(), r.losses.front() - 1.0) << "30 AdamW steps on a learnable chain must cut the loss";
}

TEST(Engines, DataParallelMatchesSingleRank) {
  for (int n : {2, 4}) {
    const auto single = run_layout(dp(1), tiny_options(ZeroStage::none, 2, n));
    const auto par = run_layout(dp(n), tiny_options(ZeroStage::none, 2, 1));
    test::expect_close(par[0], single[0], named_config("tiny"), kFp32, n == 2 ? "dp2" : "dp4");
    for (const auto& rank : par) EXPECT_EQ(rank.params, par[0].params) << "replicas diverged";
  }
}

TEST(Engines, ZeroStagesAreBitwiseEqualToDp) {
  for (int n : {2, 4}) {
    const auto base = run_layout(dp(n), tiny_options(ZeroStage::none, 2, 1));
    for (ZeroStage z : {ZeroStage::one, ZeroStage::two, ZeroStage::three}) {
      const auto zr = run_layout(dp(n), tiny_options(z, 2, 1));
      EXPECT_EQ(zr[0].losses, base[0].losses) << "zero" << static_cast<int>(z) << " dp" << n;
      EXPECT_EQ(zr[0].params, base[0].params) << "zero" << static_cast<int>(z) << " dp" << n;
      // Clipping (on in these runs, layout_runs.hpp) sums the same shard ranges at every stage.
      EXPECT_EQ(zr[0].grad_norms, base[0].grad_norms) << "zero" << static_cast<int>(z) << " dp" << n;
      for (const auto& rank : zr) EXPECT_EQ(rank.params, zr[0].params);
    }
  }
}

TEST(Engines, ZeroStagesBitwiseWithGradientAccumulation) {
  // Every stage reduces once per step, after the micro-batches are summed, like DP: the same sums
  // in the same order, so ZeRO-1, 2 and 3 stay bitwise equal to DP with accumulation.
  const auto base = run_layout(dp(2), tiny_options(ZeroStage::none, 1, 2));
  for (ZeroStage z : {ZeroStage::one, ZeroStage::two, ZeroStage::three}) {
    const auto zr = run_layout(dp(2), tiny_options(z, 1, 2));
    EXPECT_EQ(zr[0].losses, base[0].losses) << "zero" << static_cast<int>(z);
    EXPECT_EQ(zr[0].params, base[0].params) << "zero" << static_cast<int>(z);
  }
  const auto single = run_layout(dp(1), tiny_options(ZeroStage::none, 1, 4));
  test::expect_close(base[0], single[0], named_config("tiny"), kFp32, "dp2 with accumulation vs single");
}

TEST(Engines, RerunIsBitwiseIdentical) {
  for (ZeroStage z : {ZeroStage::none, ZeroStage::one, ZeroStage::two, ZeroStage::three}) {
    const auto a = run_layout(dp(2), tiny_options(z, 2, 2));
    const auto b = run_layout(dp(2), tiny_options(z, 2, 2));
    EXPECT_EQ(a[0].losses, b[0].losses);
    EXPECT_EQ(a[0].params, b[0].params);
  }
}

TEST(Engines, RecomputationIsBitwiseIdenticalAndSavesActivations) {
  for (ZeroStage z : {ZeroStage::none, ZeroStage::three}) {
    const auto base = run_layout(dp(2), tiny_options(z, 2, 2));
    size_t previous = 0;
    for (Recompute rc : {Recompute::none, Recompute::selective, Recompute::full}) {
      TrainOptions o = tiny_options(z, 2, 2);
      o.recompute = rc;
      const auto r = run_layout(dp(2), o);
      EXPECT_EQ(r[0].losses, base[0].losses) << static_cast<int>(rc);
      EXPECT_EQ(r[0].params, base[0].params) << static_cast<int>(rc);
      // Activation bytes equal the documented derivation exactly.
      const size_t act = r[0].mem[MemCategory::activations].peak;
      EXPECT_EQ(act, activation_bytes(o, dp(2), 0));
      if (previous != 0) {
        EXPECT_LT(act, previous) << "each mode must keep less";
      }
      previous = act;
    }
  }
}

// Full recomputation in blocks of K layers (--recompute-every; Chen et al. 2016 §3–4) on 5
// layers, K from 1 to 5 (blocks of 2 and 3 leave a shorter last block): bitwise equal to no
// recomputation; activation bytes and ZeRO-3's gathered bytes (a block's layers but its last are
// gathered again for its rerun forward) equal theory.hpp.
TEST(Engines, RecomputationInBlocksIsBitwiseIdenticalAndItsBytesEqualTheory) {
  for (ZeroStage z : {ZeroStage::none, ZeroStage::three}) {
    TrainOptions o = test::tiny_options(5, 2, 2);
    o.zero = z;
    const auto base = run_layout(dp(2), o);
    o.recompute = Recompute::full;
    for (int k = 1; k <= 5; ++k) {
      o.recompute_every = k;
      const auto r = run_layout(dp(2), o);
      EXPECT_EQ(r[0].losses, base[0].losses) << "K = " << k;
      EXPECT_EQ(r[0].params, base[0].params) << "K = " << k;
      EXPECT_EQ(r[0].mem[MemCategory::activations].peak, activation_bytes(o, dp(2), 0)) << "K = " << k;
      const auto th = comm_bytes(o, dp(2), 0);
      for (size_t i = 0; i < kCommKinds; ++i)
        EXPECT_EQ(r[0].comm.by_kind[i].bytes, th[i]) << "K = " << k << " " << comm_kind_name(static_cast<CommKind>(i));
    }
  }
}

TEST(Engines, ActivationBytesHaveNoQuadraticTermInSequenceLength) {
  // Flash attention keeps O and a log-sum-exp per row, never the [T, T] probabilities: doubling
  // T (and the micro-batch's rows with it) at most doubles the activation bytes of a layer, and
  // the allocation equals the formula at both lengths.
  TrainOptions o = tiny_options(ZeroStage::none, 1, 1);
  const size_t at16 = activation_bytes(o, dp(1), 0);
  o.model.seq = 1024;
  const size_t at1024 = activation_bytes(o, dp(1), 0);
  EXPECT_EQ(at1024, at16 * 64) << "linear in T: 64 × the tokens, 64 × the bytes";
  const auto r = run_layout(dp(1), o, 1);
  EXPECT_EQ(r[0].mem[MemCategory::activations].peak, at1024);
}

TEST(Engines, ModelStateBytesMatchZeroFormulas) {
  GptConfig cfg = named_config("tiny");
  cfg.vocab = padded_vocab(cfg.vocab, 1);  // Ψ of the padded vocabulary (config.hpp padded_vocab)
  const size_t psi = static_cast<size_t>(param_count(cfg));
  const int units = cfg.layers + 1;
  for (int n : {1, 2, 4}) {
    for (ZeroStage z : {ZeroStage::none, ZeroStage::one, ZeroStage::two, ZeroStage::three}) {
      const TrainOptions o = tiny_options(z, 1, 1);
      const auto r = run_layout(dp(n), o, 1);
      const StageTheory th = step_theory(o, dp(n)).stages[0];
      for (const auto& rank : r) {
        // Padding: each unit rounds up to a multiple of dp, so Ψ ≤ Ψ_pad < Ψ + units·dp.
        EXPECT_EQ(rank.padded, th.padded_params);
        EXPECT_GE(rank.padded, psi);
        EXPECT_LT(rank.padded, psi + static_cast<size_t>(units * n));
        // Measured after the step, outside it: only persistent model states remain.
        EXPECT_EQ(rank.mem[MemCategory::params].current, th.states.params);
        EXPECT_EQ(rank.mem[MemCategory::grads].current, th.states.grads);
        EXPECT_EQ(rank.mem[MemCategory::adam_m].current, th.states.adam_m);
        EXPECT_EQ(rank.mem[MemCategory::adam_v].current, th.states.adam_v);
        EXPECT_EQ(rank.mem[MemCategory::master].peak, 0u);  // fp32: weights are the master copy
        // Independently of zero_state_bytes: 4Ψ each, divided by N where ZeRO shards it.
        const size_t full = 4 * rank.padded, shard = full / static_cast<size_t>(n);
        EXPECT_EQ(th.states.params, z == ZeroStage::three ? shard : full);
        EXPECT_EQ(th.states.grads, z >= ZeroStage::two ? shard : full);
        EXPECT_EQ(th.states.adam_m, z >= ZeroStage::one ? shard : full);
        if (z == ZeroStage::three && n > 1) {
          // At most one gathered unit at a time: peak params ≤ shard + the largest padded unit.
          const auto max_unit = static_cast<size_t>(std::max(embedding_param_count(cfg), layer_param_count(cfg)));
          EXPECT_LE(rank.mem[MemCategory::params].peak, th.states.params + (max_unit + static_cast<size_t>(n)) * 4);
        }
      }
    }
  }
}

TEST(Engines, CommunicatedBytesMatchTheory) {
  for (int m : {1, 2}) {
    for (ZeroStage z : {ZeroStage::none, ZeroStage::one, ZeroStage::two, ZeroStage::three}) {
      const TrainOptions o = tiny_options(z, 1, m);
      const auto r = run_layout(dp(2), o, 2);
      const auto th = comm_bytes(o, dp(2), 0);
      for (size_t k = 0; k < kCommKinds; ++k) {
        EXPECT_EQ(r[0].comm.by_kind[k].bytes, th[k])
            << static_cast<int>(z) << " " << comm_kind_name(static_cast<CommKind>(k));
      }
      // The ZeRO paper's per-step volumes (§7): DP all-reduces Ψ, ZeRO-1/2 reduce-scatter Ψ and
      // all-gather Ψ, ZeRO-3 all-gathers 2·m·Ψ (forward and backward of every micro-batch).
      const auto psi = static_cast<int64_t>(4 * r[0].padded);
      const auto& c = r[0].comm;
      EXPECT_EQ(c[CommKind::all_reduce].bytes, z == ZeroStage::none ? psi : 0);
      EXPECT_EQ(c[CommKind::reduce_scatter].bytes, z == ZeroStage::none ? 0 : psi);
      EXPECT_EQ(c[CommKind::all_gather].bytes, z == ZeroStage::none ? 0 : (z == ZeroStage::three ? 2 * m : 1) * psi);
      EXPECT_EQ(c[CommKind::loss_all_reduce].bytes, 8);
    }
  }
  const auto single = run_layout(dp(1), tiny_options(ZeroStage::three, 1, 1), 1);
  EXPECT_EQ(single[0].comm[CommKind::all_gather].calls, 0);
}

TEST(Engines, RingWireBytesGiveTwoPsiAndThreePsi) {
  // Per rank on the wire, n = 8, Ψ = 1000 bytes: DP 2·(7/8)Ψ; ZeRO-3 (2 AG + 1 RS) 3·(7/8)Ψ.
  const double psi = 1000.0;
  EXPECT_DOUBLE_EQ(ring_wire_bytes(CommKind::all_reduce, psi, 8), 1750.0);
  const double z3 =
      ring_wire_bytes(CommKind::all_gather, 2 * psi, 8) + ring_wire_bytes(CommKind::reduce_scatter, psi, 8);
  EXPECT_DOUBLE_EQ(z3, 2625.0);
  EXPECT_DOUBLE_EQ(ring_wire_bytes(CommKind::all_gather, psi, 1), 0.0);
}

TEST(Engines, ParallelGroupsUseMegatronOrder) {
  // 8 ranks as tp 2 × dp 2 × pp 2: rank = tp_rank + 2·(dp_rank + 2·pp_rank).
  std::mutex mu;
  std::vector<std::array<int, 6>> seen(8);
  run_ranks(8, [&](Communicator& world) {
    ParallelGroups ctx = make_parallel_groups(world, ParallelLayout{2, 2, 2});
    std::lock_guard<std::mutex> lock(mu);
    seen[static_cast<size_t>(world.rank())] = {ctx.tp_rank,    ctx.dp_rank,    ctx.pp_rank,
                                               ctx.tp->rank(), ctx.dp->rank(), ctx.pp->rank()};
  });
  for (int r = 0; r < 8; ++r) {
    const auto& s = seen[static_cast<size_t>(r)];
    EXPECT_EQ(s[0], r % 2);
    EXPECT_EQ(s[1], (r / 2) % 2);
    EXPECT_EQ(s[2], r / 4);
    EXPECT_EQ(s[3], s[0]);
    EXPECT_EQ(s[4], s[1]);
    EXPECT_EQ(s[5], s[2]);
  }
}

TEST(Engines, InvalidLayoutsAreUsageErrors) {
  EXPECT_THROW(run_ranks(2, [](Communicator& w) { make_parallel_groups(w, ParallelLayout{4, 1, 1}); }), UsageError);
  EXPECT_THROW(run_ranks(3,
                         [](Communicator& w) {
                           // tp 3 does not divide tiny's 4 heads, whatever the ZeRO stage.
                           ParallelGroups ctx = make_parallel_groups(w, ParallelLayout{1, 3, 1});
                           CpuBackend be;
                           make_training_step(be, ctx, tiny_options(ZeroStage::three, 1, 1));
                         }),
               UsageError);
}

}  // namespace
}  // namespace gcb::models
