// The engine's tensor, sequence and pipeline parallelism (combined with dp and ZeRO-1/2/3) on
// `tiny`, ranks as threads, with the default optimizer groups and gradient clipping at a threshold
// below every step's norm (layout_runs.hpp kTinyGradClip: the global norm over shards and ranks
// decides every step). Every layout is compared after 3 steps with one rank on the same
// global batch:
// loss and every parameter within rtol 1e-5 (fp32; the layouts sum the same terms in a different
// order, and Adam's first steps amplify relative gradient differences to at most ~1e-6 in the
// parameters). Representative matrix rather than the Cartesian product (runtime budget):
//   tp ∈ {2, 4} with and without sp; pp ∈ {2, 4} with gpipe and 1f1b (m < p and m > p);
//   dp2×tp2, dp2×pp2, tp2×pp2 sp, dp2×tp2×pp2 (8 ranks) sp + ZeRO-1 + 1f1b; each recompute mode
//   on a tp/sp or pp or 3D layout; sp at tp 1 (a no-op).
// ZeRO-2/3 on the dp dimension: dp2×tp2 and dp2×pp2 (gpipe and 1f1b) at zero 2 and 3, dp2×tp2 sp
// zero 3 with full recompute, dp2×tp2×pp2 (8 ranks) zero 2 and 3; each also bitwise equal to
// zero 0 of the same layout (model_states.hpp explains why that holds for zero 3 too).
// Plus: gpipe and 1f1b bitwise equal, reruns bitwise, state bytes per rank equal the TP/PP
// formulas, activation bytes equal the derivation, communicated bytes equal theory, and invalid
// layouts are UsageErrors. Full recomputation in blocks of K layers: bitwise equal to none on
// dp, tp, sp, pp (GPipe and 1F1B) and ZeRO, its bytes equal theory.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "collectives/thread_communicator.hpp"
#include "core/error.hpp"
#include "models/backend/cpu/cpu_backend.hpp"
#include "models/engine/engine.hpp"
#include "models/model/rank_units.hpp"
#include "models/theory/theory.hpp"
#include "tests/models/engine/layout_runs.hpp"

namespace gcb::models {
namespace {

using test::RankOutcome;

std::vector<RankOutcome> run(const ParallelLayout& lay, const TrainOptions& o, int steps = 3) {
  return test::run_layout(lay, o, steps);
}

using Case = test::LayoutCase;
using test::case_options;

constexpr auto G = PipeSchedule::gpipe, F = PipeSchedule::one_f_one_b;
constexpr auto Z0 = ZeroStage::none, Z1 = ZeroStage::one, Z2 = ZeroStage::two, Z3 = ZeroStage::three;
constexpr auto RN = Recompute::none, RS = Recompute::selective, RF = Recompute::full;

std::vector<RankOutcome> check_case(const Case& k) {
  const TrainOptions o = case_options(k);
  auto got = run(k.lay, o);
  const RankOutcome want = test::single_rank_reference(k.lay, o);
  test::expect_close(got[0], want, o.model, test::Tolerance{}, k.name);
  for (const auto& r : got) EXPECT_EQ(r.params, got[0].params) << k.name << ": ranks disagree";
  for (const auto& r : got) EXPECT_EQ(r.losses, got[0].losses) << k.name << ": losses disagree";
  return got;
}

TEST(Parallel, TensorParallelMatchesSingleRank) {
  for (const Case& k :
       {Case{"tp2", {1, 2, 1}, 2, 2, 1, false, Z0, G, RN}, Case{"tp4", {1, 4, 1}, 2, 2, 1, false, Z0, G, RN},
        Case{"tp2-sp", {1, 2, 1}, 2, 2, 2, true, Z0, G, RN}, Case{"tp4-sp", {1, 4, 1}, 2, 1, 1, true, Z0, G, RN},
        Case{"sp-tp1-dp2", {2, 1, 1}, 2, 2, 1, true, Z0, G, RN}}) {
    check_case(k);
  }
}

TEST(Parallel, PipelineParallelMatchesSingleRank) {
  for (const Case& k :
       {Case{"pp2-gpipe", {1, 1, 2}, 2, 1, 4, false, Z0, G, RN}, Case{"pp2-1f1b", {1, 1, 2}, 3, 1, 4, false, Z0, F, RN},
        Case{"pp4-1f1b", {1, 1, 4}, 4, 1, 6, false, Z0, F, RN},
        Case{"pp4-gpipe-m2", {1, 1, 4}, 4, 2, 2, false, Z0, G, RN}}) {
    check_case(k);
  }
}

TEST(Parallel, CombinationsMatchSingleRank) {
  for (const Case& k : {Case{"dp2-tp2-zero1", {2, 2, 1}, 2, 1, 2, false, Z1, G, RN},
                        Case{"dp2-pp2-1f1b", {2, 1, 2}, 2, 1, 3, false, Z0, F, RN},
                        Case{"tp2-pp2-sp-1f1b", {1, 2, 2}, 2, 2, 3, true, Z0, F, RN},
                        Case{"dp2-tp2-pp2-sp-zero1-1f1b", {2, 2, 2}, 2, 1, 3, true, Z1, F, RN}}) {
    check_case(k);
  }
}

// ZeRO-2/3 with tp, sp and pp: within rtol of the single rank, and bitwise equal to zero 0 of the
// same layout (every stage reduces the same accumulated unit gradient in the same order; the
// reduce-scatter gives the all-reduce's elements and ZeRO-3's gathers copy exact values).
TEST(Parallel, Zero2And3MatchSingleRankAndAreBitwiseEqualToZero0) {
  for (const Case& k : {Case{"dp2-tp2-zero2", {2, 2, 1}, 2, 1, 2, false, Z2, G, RN},
                        Case{"dp2-tp2-zero3", {2, 2, 1}, 2, 2, 1, false, Z3, G, RN},
                        Case{"dp2-pp2-zero2-gpipe", {2, 1, 2}, 2, 1, 2, false, Z2, G, RN},
                        Case{"dp2-pp2-zero2-1f1b", {2, 1, 2}, 3, 1, 3, false, Z2, F, RN},
                        Case{"dp2-pp2-zero3-gpipe", {2, 1, 2}, 2, 1, 2, false, Z3, G, RN},
                        Case{"dp2-pp2-zero3-1f1b", {2, 1, 2}, 3, 1, 3, false, Z3, F, RN},
                        Case{"dp2-tp2-sp-zero3-full", {2, 2, 1}, 2, 2, 2, true, Z3, G, RF},
                        Case{"dp2-tp2-pp2-sp-zero2-1f1b", {2, 2, 2}, 2, 1, 2, true, Z2, F, RN},
                        Case{"dp2-tp2-pp2-zero3-1f1b-sel", {2, 2, 2}, 2, 1, 3, false, Z3, F, RS}}) {
    const auto got = check_case(k);
    Case z0 = k;
    z0.zero = Z0;
    const auto base = run(z0.lay, case_options(z0));
    EXPECT_EQ(got[0].params, base[0].params) << k.name << " vs zero 0";
    EXPECT_EQ(got[0].losses, base[0].losses) << k.name << " vs zero 0";
    EXPECT_EQ(got[0].grad_norms, base[0].grad_norms) << k.name << " vs zero 0: the clip's norm";
    // ZeRO ran on dp: the gradient reduction is a reduce-scatter.
    EXPECT_GT(got[0].comm[CommKind::reduce_scatter].calls, 0) << k.name;
  }
}

TEST(Parallel, RecomputationMatchesSingleRank) {
  for (const Case& k : {Case{"tp2-sp-selective", {1, 2, 1}, 2, 2, 1, true, Z0, G, RS},
                        Case{"tp2-full", {1, 2, 1}, 2, 2, 1, false, Z0, G, RF},
                        Case{"pp2-1f1b-full", {1, 1, 2}, 2, 1, 3, false, Z0, F, RF},
                        Case{"dp2-tp2-pp2-sp-selective", {2, 2, 2}, 2, 1, 2, true, Z0, G, RS}}) {
    check_case(k);
  }
}

// Full recomputation in blocks of K layers (Chen et al. 2016 §3–4; --recompute-every): on every
// layout kind bitwise equal to no recomputation and within rtol of one rank, with 5 layers so that
// K does not divide a stage's layers (pp 2: stages of 3 and 2, the last block shorter); each
// rank's activation and communicated bytes (ZeRO-3 gathers a block's layers again) equal theory.
TEST(Parallel, RecomputationInBlocksIsBitwiseEqualToNoneAndMatchesTheory) {
  for (const Case& k : {Case{"dp2-k1", {2, 1, 1}, 5, 2, 1, false, Z0, G, RF, 1},
                        Case{"dp2-k2", {2, 1, 1}, 5, 2, 1, false, Z0, G, RF, 2},
                        Case{"dp2-zero3-m2-k3", {2, 1, 1}, 5, 1, 2, false, Z3, G, RF, 3},
                        Case{"tp2-k3", {1, 2, 1}, 5, 2, 1, false, Z0, G, RF, 3},
                        Case{"tp2-sp-k2", {1, 2, 1}, 5, 2, 2, true, Z0, G, RF, 2},
                        Case{"pp2-gpipe-k2", {1, 1, 2}, 5, 1, 3, false, Z0, G, RF, 2},
                        Case{"pp2-1f1b-k2", {1, 1, 2}, 5, 1, 4, false, Z0, F, RF, 2},
                        Case{"dp2-pp2-zero3-1f1b-k2", {2, 1, 2}, 5, 1, 3, false, Z3, F, RF, 2},
                        Case{"dp2-tp2-pp2-sp-zero1-1f1b-k2", {2, 2, 2}, 5, 1, 3, true, Z1, F, RF, 2}}) {
    const auto got = check_case(k);
    Case none = k;
    none.recompute = RN;
    none.recompute_every = 1;
    const auto base = run(none.lay, case_options(none));
    EXPECT_EQ(got[0].params, base[0].params) << k.name << " vs no recomputation";
    EXPECT_EQ(got[0].losses, base[0].losses) << k.name << " vs no recomputation";
    const TrainOptions o = case_options(k);
    for (const auto& r : got) {
      EXPECT_EQ(r.mem[MemCategory::activations].peak, activation_bytes(o, k.lay, r.pp_rank))
          << k.name << " stage " << r.pp_rank;
      const auto th = comm_bytes(o, k.lay, r.pp_rank);
      for (size_t i = 0; i < kCommKinds; ++i) {
        EXPECT_EQ(r.comm.by_kind[i].bytes, th[i])
            << k.name << " stage " << r.pp_rank << " " << comm_kind_name(static_cast<CommKind>(i));
      }
    }
  }
}

TEST(Parallel, GpipeAnd1f1bAndRecomputeAreBitwiseEqualAndRerunsAreBitwise) {
  const Case k{"tp2-pp2", {1, 2, 2}, 4, 1, 4, true, Z0, G, RN};
  TrainOptions o = case_options(k);
  const auto gpipe = run(k.lay, o);
  const auto again = run(k.lay, o);
  EXPECT_EQ(again[0].params, gpipe[0].params) << "rerun";
  EXPECT_EQ(again[0].losses, gpipe[0].losses) << "rerun";
  o.schedule = PipeSchedule::one_f_one_b;
  const auto f1b = run(k.lay, o);
  EXPECT_EQ(f1b[0].params, gpipe[0].params) << "1f1b vs gpipe";
  EXPECT_EQ(f1b[0].losses, gpipe[0].losses) << "1f1b vs gpipe";
  o.recompute = Recompute::full;
  const auto full = run(k.lay, o);
  EXPECT_EQ(full[0].params, gpipe[0].params) << "full recompute";
}

TEST(Parallel, StateAndActivationBytesMatchFormulas) {
  for (const Case& k :
       {Case{"tp2", {1, 2, 1}, 2, 2, 1, false, Z0, G, RN}, Case{"tp4-sp-sel", {1, 4, 1}, 2, 1, 2, true, Z0, G, RS},
        Case{"pp2-1f1b", {1, 1, 2}, 3, 1, 4, false, Z0, F, RN},
        Case{"pp4-gpipe-full", {1, 1, 4}, 4, 1, 3, false, Z0, G, RF},
        Case{"dp2-tp2-pp2-zero1-sp", {2, 2, 2}, 2, 1, 3, true, Z1, F, RN},
        Case{"dp2-tp2-zero2", {2, 2, 1}, 2, 1, 2, false, Z2, G, RN},
        Case{"dp2-pp2-zero3-1f1b", {2, 1, 2}, 3, 1, 3, false, Z3, F, RF},
        Case{"dp2-tp2-pp2-zero3-sp", {2, 2, 2}, 2, 1, 2, true, Z3, G, RN}}) {
    const TrainOptions o = case_options(k);
    const auto got = run(k.lay, o, 1);
    const GptConfig& c = o.model;
    const size_t C = static_cast<size_t>(c.hidden), t = static_cast<size_t>(k.lay.tp);
    for (const auto& r : got) {
      const StageTheory th = step_theory(o, k.lay).stages[static_cast<size_t>(r.pp_rank)];
      const StateBytes& want = th.states;
      EXPECT_EQ(r.mem[MemCategory::params].current, want.params) << k.name;
      EXPECT_EQ(r.mem[MemCategory::grads].current, want.grads) << k.name;
      EXPECT_EQ(r.mem[MemCategory::adam_m].current, want.adam_m) << k.name;
      EXPECT_EQ(r.mem[MemCategory::adam_v].current, want.adam_v) << k.name;
      // Independent check of the formula for dp = 1: a layer's matrices are divided by t, its
      // six C-vectors replicated; the ends of the pipeline hold the embedding unit.
      if (k.lay.dp == 1) {
        const size_t Ls = static_cast<size_t>(stage_layers(c.layers, k.lay.pp, r.pp_rank));
        const bool ends = r.pp_rank == 0 || r.pp_rank == k.lay.pp - 1;
        const size_t psi = Ls * (12 * C * C / t + 7 * C / t + 6 * C) +
                           (ends ? static_cast<size_t>(padded_vocab(c.vocab, k.lay.tp)) * C / t +
                                       static_cast<size_t>(c.seq) * C + 2 * C
                                 : 0);
        EXPECT_EQ(want.params, 4 * psi) << k.name;
      }
      EXPECT_EQ(r.mem[MemCategory::activations].peak, th.activation_bytes) << k.name << " stage " << r.pp_rank;
      // Sharded categories are exactly 1/dp of the unsharded ones (each unit padded to a
      // multiple of dp), independently of zero_state_bytes.
      TrainOptions o0 = o;
      o0.zero = Z0;
      const StateBytes full = step_theory(o0, k.lay).stages[static_cast<size_t>(r.pp_rank)].states;
      const size_t d = static_cast<size_t>(k.lay.dp);
      EXPECT_EQ(want.grads * (k.zero >= Z2 ? d : 1), full.grads) << k.name;
      EXPECT_EQ(want.params * (k.zero == Z3 ? d : 1), full.params) << k.name;
      EXPECT_EQ(want.adam_m * (k.zero >= Z1 ? d : 1), full.adam_m) << k.name;
      if (k.zero >= Z2) {
        // Transients: zero 2/3 buckets and zero 3 gathers live within a step. Gradient peak ≤
        // the stage's full gradient (GPipe holds every bucket of the stage during backward).
        EXPECT_GT(r.mem[MemCategory::grads].peak, want.grads) << k.name;
        EXPECT_LE(r.mem[MemCategory::grads].peak, want.grads + full.grads) << k.name;
      }
      if (k.zero == Z3) {
        // At most one gathered unit at a time: peak params ≤ shard + the largest padded unit.
        const size_t emb = static_cast<size_t>(c.vocab) * C / t + static_cast<size_t>(c.seq) * C + 2 * C;
        const size_t lay = (12 * C * C + 7 * C) / t + 6 * C;
        EXPECT_GT(r.mem[MemCategory::params].peak, want.params) << k.name;
        EXPECT_LE(r.mem[MemCategory::params].peak, want.params + 4 * (std::max(emb, lay) + d)) << k.name;
      }
    }
  }
}

TEST(Parallel, CommunicatedBytesMatchTheory) {
  for (const Case& k :
       {Case{"tp2", {1, 2, 1}, 2, 2, 2, false, Z0, G, RN}, Case{"tp2-full", {1, 2, 1}, 2, 2, 1, false, Z0, G, RF},
        Case{"tp4-sp", {1, 4, 1}, 2, 1, 2, true, Z0, G, RN}, Case{"pp4-1f1b", {1, 1, 4}, 4, 1, 3, false, Z0, F, RN},
        Case{"dp2-tp2-pp2-sp-zero1", {2, 2, 2}, 2, 1, 2, true, Z1, F, RN},
        Case{"dp2-tp2-zero2-m2", {2, 2, 1}, 2, 1, 2, false, Z2, G, RN},
        Case{"dp2-tp2-sp-zero3-m2-full", {2, 2, 1}, 2, 1, 2, true, Z3, G, RF},
        Case{"dp2-pp2-zero3-1f1b-m3", {2, 1, 2}, 3, 1, 3, false, Z3, F, RN},
        Case{"dp2-tp2-pp2-zero2", {2, 2, 2}, 2, 1, 2, false, Z2, G, RN}}) {
    const TrainOptions o = case_options(k);
    const auto got = run(k.lay, o, 1);
    for (const auto& r : got) {
      const auto th = comm_bytes(o, k.lay, r.pp_rank);
      for (size_t i = 0; i < kCommKinds; ++i) {
        EXPECT_EQ(r.comm.by_kind[i].bytes, th[i])
            << k.name << " stage " << r.pp_rank << " " << comm_kind_name(static_cast<CommKind>(i));
      }
    }
  }
  // The headline numbers: 4·b·s·h per layer for TP, b·s·h per stage boundary for PP (fp32 bytes).
  const TrainOptions o = test::tiny_options(4, 2, 1);
  const int64_t bsh = 2 * 16 * 32;
  EXPECT_EQ(comm_bytes(o, {1, 2, 1}, 0)[static_cast<size_t>(CommKind::tp_all_reduce)],
            4 * (4 * 4 * bsh + bsh + bsh + 3 * 2 * 16));  // + embedding, head and loss statistics
  EXPECT_EQ(comm_bytes(o, {1, 1, 2}, 0)[static_cast<size_t>(CommKind::pp_send)], 4 * bsh);
  // ZeRO on dp (ZeRO paper §7): zero 2 reduce-scatters Ψ and all-gathers Ψ once per step; zero 3
  // all-gathers every layer twice per micro-batch, so 2·m·Ψ at pp = 1 (+ Ψ reduce-scattered).
  const auto idx = [](CommKind k) { return static_cast<size_t>(k); };
  TrainOptions z = test::tiny_options(4, 1, 3);
  z.zero = ZeroStage::two;
  const ParallelLayout dp2tp2{2, 2, 1}, dp2pp2{2, 1, 2};
  const auto psi = 4 * static_cast<int64_t>(stage_padded_params(z.model, dp2tp2, 0));
  EXPECT_EQ(comm_bytes(z, dp2tp2, 0)[idx(CommKind::reduce_scatter)], psi);
  EXPECT_EQ(comm_bytes(z, dp2tp2, 0)[idx(CommKind::all_gather)], psi);
  z.zero = ZeroStage::three;
  EXPECT_EQ(comm_bytes(z, dp2tp2, 0)[idx(CommKind::reduce_scatter)], psi);
  EXPECT_EQ(comm_bytes(z, dp2tp2, 0)[idx(CommKind::all_gather)], 2 * 3 * psi);
  // pp 2, stage 0: 2 layers twice, the embedding unit once (its backward needs no parameters).
  // tiny's vocabulary 64 padded to 128 (config.hpp padded_vocab).
  const int64_t C = 32, layer = 12 * C * C + 13 * C, embed = 128 * C + 16 * C + 2 * C;
  EXPECT_EQ(comm_bytes(z, dp2pp2, 0)[idx(CommKind::all_gather)], 4 * 3 * (2 * 2 * layer + embed));
  EXPECT_EQ(static_cast<int64_t>(stage_padded_params(z.model, dp2pp2, 0)), 2 * layer + embed);
}

TEST(Parallel, InvalidLayoutsAreRefusedBeforeAllocation) {
  const TrainOptions o = test::tiny_options(2, 1, 1);
  EXPECT_NE(layout_error(o, {1, 3, 1}).find("heads"), std::string::npos);
  EXPECT_NE(layout_error(o, {1, 1, 3}).find("pp 3 > layers 2"), std::string::npos);
  // Blocks of K recomputed layers: K ≥ 1, only under full recomputation, at most a stage's layers
  // (5 layers on 2 stages: 3 and 2).
  TrainOptions k = test::tiny_options(5, 1, 1);
  k.recompute = Recompute::full;
  k.recompute_every = 0;
  EXPECT_NE(layout_error(k, {1, 1, 1}).find("expected ≥ 1"), std::string::npos);
  k.recompute_every = 2;
  EXPECT_EQ(layout_error(k, {1, 1, 2}), "");
  k.recompute_every = 3;
  EXPECT_NE(layout_error(k, {1, 1, 2}).find("--recompute-every 3 > 2 layers of the smallest pipeline stage"),
            std::string::npos);
  EXPECT_EQ(layout_error(k, {1, 1, 1}), "");
  k.recompute = Recompute::selective;
  EXPECT_NE(layout_error(k, {1, 1, 1}).find("needs --recompute full"), std::string::npos);
  TrainOptions z = o;
  z.zero = ZeroStage::three;  // every ZeRO stage combines with tp, sp and pp
  z.sp = true;
  EXPECT_EQ(layout_error(z, {2, 2, 2}), "");
  EXPECT_EQ(layout_error(z, {2, 1, 1}), "");
  TrainOptions v = o;
  v.model.vocab = 66;  // tp 4 does not divide it: padded to 512 rows (test_vocab_padding), not refused
  EXPECT_EQ(layout_error(v, {1, 4, 1}), "");
  EXPECT_THROW(run(ParallelLayout{1, 3, 1}, o, 1), UsageError);
}

}  // namespace
}  // namespace gcb::models
