// The planner's memory and communication against the engine itself: every layout kind runs two
// steps on `tiny` (ranks as threads), and each rank's peak bytes per memory category and calls and
// bytes per communication kind must equal the planner's figures for its stage exactly — the
// engine is deterministic, so there is no tolerance.
#include <gtest/gtest.h>
#include <fmt/format.h>

#include "models/planner/memory_model.hpp"
#include "models/planner/predict.hpp"
#include "models/planner/step_work.hpp"
#include "tests/models/engine/layout_runs.hpp"

namespace gcb::models::planner {
namespace {

struct Case {
  test::LayoutCase run;
  bool overlap;
  Precision precision;
};

class PlanAgainstEngine : public ::testing::TestWithParam<Case> {};

// The planner's device peak of every category equals the engine's measured one. Not workspace: its
// peak in these runs includes full_params()'s gathered copy, which the test harness reads and a
// training run does not (the train CLI test checks that peak; the steady workspace is compared
// where it is known).
void expect_device_peaks_equal(const StageMemory& mem, const test::RankOutcome& r, const std::string& at) {
  for (size_t c = 0; c < kMemCategories; ++c) {
    if (static_cast<MemCategory>(c) == MemCategory::workspace) continue;
    EXPECT_EQ(mem.peak[c], static_cast<double>(r.mem.by_category[c].peak))
        << at << " rank dp" << r.dp_rank << " tp" << r.tp_rank << " pp" << r.pp_rank << " "
        << mem_category_name(static_cast<MemCategory>(c));
  }
}

TEST_P(PlanAgainstEngine, MemoryPeaksAndCommunicationEqualTheEngine) {
  const test::LayoutCase& k = GetParam().run;
  TrainOptions o = test::case_options(k, GetParam().precision);
  o.overlap_comm = GetParam().overlap;
  const std::vector<test::RankOutcome> ranks = test::run_layout(k.lay, o, 2);
  for (const test::RankOutcome& r : ranks) {
    const StageMemory mem = stage_memory(o, k.lay, r.pp_rank);
    expect_device_peaks_equal(mem, r, k.name);
    EXPECT_EQ(mem.workspace_steady, static_cast<double>(r.mem[MemCategory::workspace].current)) << k.name;
    const StageWork w = stage_work(o, k.lay, r.pp_rank);
    for (size_t c = 0; c < kCommKinds; ++c) {
      const auto kind = static_cast<CommKind>(c);
      EXPECT_EQ(step_comm_calls(w, kind, o.grad_accum), static_cast<double>(r.comm[kind].calls))
          << k.name << " pp" << r.pp_rank << " calls " << comm_kind_name(kind);
      EXPECT_EQ(step_comm_bytes(w, kind, o.grad_accum), static_cast<double>(r.comm[kind].bytes))
          << k.name << " pp" << r.pp_rank << " bytes " << comm_kind_name(kind);
    }
  }
}

using PS = PipeSchedule;
using RC = Recompute;
using Z = ZeroStage;
constexpr Precision f32 = Precision::fp32, bf16 = Precision::bf16;

INSTANTIATE_TEST_SUITE_P(
    Layouts, PlanAgainstEngine,
    ::testing::Values(
        Case{{"dp2", {2, 1, 1}, 2, 2, 2, false, Z::none, PS::one_f_one_b, RC::none}, false, f32},
        Case{{"dp2_zero1", {2, 1, 1}, 2, 2, 1, false, Z::one, PS::one_f_one_b, RC::none}, false, f32},
        Case{{"dp2_zero2_m1", {2, 1, 1}, 3, 1, 1, false, Z::two, PS::one_f_one_b, RC::none}, false, f32},
        Case{{"dp2_zero2_m2", {2, 1, 1}, 2, 1, 2, false, Z::two, PS::one_f_one_b, RC::none}, false, bf16},
        Case{{"dp2_zero3_m1", {2, 1, 1}, 2, 2, 1, false, Z::three, PS::one_f_one_b, RC::full}, false, f32},
        Case{{"dp2_zero3_m3", {2, 1, 1}, 2, 1, 3, false, Z::three, PS::one_f_one_b, RC::selective}, false, bf16},
        Case{{"dp2_zero2_overlap", {2, 1, 1}, 2, 1, 1, false, Z::two, PS::one_f_one_b, RC::none}, true, f32},
        Case{{"tp2", {1, 2, 1}, 2, 2, 2, false, Z::none, PS::one_f_one_b, RC::full}, false, f32},
        Case{{"tp2_sp", {1, 2, 1}, 2, 2, 1, true, Z::none, PS::one_f_one_b, RC::none}, false, bf16},
        Case{{"tp2_sp_full", {1, 2, 1}, 2, 1, 2, true, Z::none, PS::one_f_one_b, RC::full}, false, f32},
        Case{{"pp2_1f1b", {1, 1, 2}, 3, 1, 4, false, Z::none, PS::one_f_one_b, RC::none}, false, f32},
        Case{{"pp2_gpipe", {1, 1, 2}, 2, 2, 3, false, Z::none, PS::gpipe, RC::selective}, false, bf16},
        Case{{"pp3_1f1b_m2", {1, 1, 3}, 4, 1, 2, false, Z::none, PS::one_f_one_b, RC::none}, false, f32},
        Case{{"dp2_pp2_zero2_m1", {2, 1, 2}, 2, 1, 1, false, Z::two, PS::one_f_one_b, RC::none}, false, f32},
        Case{{"dp2_tp2_zero3", {2, 2, 1}, 2, 2, 2, true, Z::three, PS::one_f_one_b, RC::none}, false, f32},
        Case{{"dp2_tp2_pp2", {2, 2, 2}, 2, 2, 2, true, Z::one, PS::one_f_one_b, RC::full}, true, bf16},
        // Full recomputation in blocks of K layers (5 layers: a shorter last block).
        Case{{"dp2_zero3_k2", {2, 1, 1}, 5, 1, 2, false, Z::three, PS::one_f_one_b, RC::full, 2}, false, f32},
        Case{{"tp2_sp_k3", {1, 2, 1}, 5, 2, 1, true, Z::none, PS::one_f_one_b, RC::full, 3}, false, bf16},
        Case{{"pp2_gpipe_k2", {1, 1, 2}, 5, 1, 3, false, Z::none, PS::gpipe, RC::full, 2}, false, f32}),
    [](const ::testing::TestParamInfo<Case>& i) { return std::string(i.param.run.name); });

// --offload optimizer: the planner's device peaks per category, its host bytes and the bytes its
// step copies out and back equal what the engine allocated and copied, at every ZeRO stage with
// gradient accumulation, in fp32 and bf16 (pp 2 for a stage without the embedding).
TEST(PlanAgainstEngine, OffloadMemoryAndCopiesEqualTheEngine) {
  for (ZeroStage z : {ZeroStage::none, ZeroStage::one, ZeroStage::two, ZeroStage::three}) {
    for (Precision p : {Precision::fp32, Precision::bf16}) {
      const test::LayoutCase k{"dp2_pp2", {2, 1, 2}, 2, 2, 2, false, z, PipeSchedule::one_f_one_b, Recompute::none};
      TrainOptions o = test::case_options(k, p);
      o.offload = Offload::optimizer;
      const std::string at = fmt::format("zero {} {}", static_cast<int>(z), precision_name(p));
      for (const test::RankOutcome& r : test::run_layout(k.lay, o, 2)) {
        const StageMemory mem = stage_memory(o, k.lay, r.pp_rank);
        expect_device_peaks_equal(mem, r, at);
        EXPECT_EQ(mem.at(MemCategory::master) + mem.at(MemCategory::adam_m) + mem.at(MemCategory::adam_v), 0.0) << at;
        EXPECT_EQ(mem.host, static_cast<double>(r.host_mem.total.peak)) << at << " pp" << r.pp_rank;
        EXPECT_GT(mem.host, 0.0) << at;
        const StageWork w = stage_work(o, k.lay, r.pp_rank);
        EXPECT_EQ(w.offload_d2h, static_cast<double>(r.offload.d2h)) << at << " pp" << r.pp_rank;
        EXPECT_EQ(w.offload_h2d, static_cast<double>(r.offload.h2d)) << at << " pp" << r.pp_rank;
        for (const EwCall& e : w.optimizer) EXPECT_NE(e.op, EwOp::adamw) << at;  // AdamW left the device
      }
    }
  }
}

// --offload activations, alone and with the optimizer: the planner's device peaks (the two working
// sets in place of the slots' sets), its host bytes and the copies of its step equal the engine's,
// with recomputation none, selective and full in blocks of 2 and a GPipe stage holding 3 slots.
TEST(PlanAgainstEngine, ActivationOffloadMemoryAndCopiesEqualTheEngine) {
  for (Offload off : {Offload::activations, Offload::optimizer_activations}) {
    for (Recompute rc : {Recompute::none, Recompute::selective, Recompute::full}) {
      const test::LayoutCase k{
          "dp2_pp2", {2, 1, 2}, 6, 1, 3, false, ZeroStage::one, PipeSchedule::gpipe, rc, rc == Recompute::full ? 2 : 1};
      TrainOptions o = test::case_options(k, Precision::bf16);
      o.offload = off;
      const std::string at = fmt::format("{} {}", offload_name(off), recompute_name(rc));
      for (const test::RankOutcome& r : test::run_layout(k.lay, o, 2)) {
        const StageMemory mem = stage_memory(o, k.lay, r.pp_rank);
        expect_device_peaks_equal(mem, r, at);
        EXPECT_EQ(mem.host, static_cast<double>(r.host_mem.total.peak)) << at << " pp" << r.pp_rank;
        EXPECT_GT(r.host_mem[MemCategory::activations].peak, 0u) << at;
        const StageWork w = stage_work(o, k.lay, r.pp_rank);
        EXPECT_EQ(w.offload_d2h + w.swap_d2h, static_cast<double>(r.offload.d2h)) << at << " pp" << r.pp_rank;
        EXPECT_EQ(w.offload_h2d + w.swap_h2d, static_cast<double>(r.offload.h2d)) << at << " pp" << r.pp_rank;
        EXPECT_GT(w.swap_d2h, 0.0) << at;
      }
    }
  }
}

}  // namespace
}  // namespace gcb::models::planner
