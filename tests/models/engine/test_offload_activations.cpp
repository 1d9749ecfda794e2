// --offload activations (activations.hpp, engine.cpp): each layer's kept tensors go to host
// memory after its forward and come back before its backward, through two device working sets.
// On the CPU backend for layouts with several slots in flight (GPipe and 1F1B), tensor and
// sequence parallelism and every recomputation mode, and on the fake device (NaN-filled
// allocations, every copy through DeviceOps): losses, gradient norms and parameters bitwise those
// without offload; device and host activation bytes equal the theory byte for byte and the host's
// equal independent arithmetic; the bytes that cross per step equal the theory; with the
// optimizer offloaded too, both sides add up.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "collectives/thread_communicator.hpp"
#include "models/engine/engine.hpp"
#include "models/engine/parallel_groups.hpp"
#include "models/model/rank_shape.hpp"
#include "models/theory/theory.hpp"
#include "tests/models/backend/fake_device.hpp"
#include "tests/models/engine/layout_runs.hpp"

namespace gcb::models::test {
namespace {

const auto kCompute = reinterpret_cast<DeviceStream>(uintptr_t{1});
constexpr uintptr_t kFirstCommStream = 100;

struct SwapCase {
  const char* name;
  ParallelLayout lay;
  int layers, micro_batch, grad_accum;
  bool sp;
  PipeSchedule schedule;
  Recompute recompute;
  int recompute_every;
  Precision precision;
  bool saves;  // every stage's device holds less than without offload (more to swap than two sets)
};

TrainOptions options(const SwapCase& k, Offload off) {
  TrainOptions o = tiny_options(k.layers, k.micro_batch, k.grad_accum, k.precision);  // clipping on
  o.sp = k.sp;
  o.schedule = k.schedule;
  o.recompute = k.recompute;
  o.recompute_every = k.recompute_every;
  o.offload = off;
  return o;
}

const SwapCase kCases[] = {
    {"one_rank_3_layers", {1, 1, 1}, 3, 2, 2, false, PipeSchedule::gpipe, Recompute::none, 1, Precision::fp32, true},
    {"one_rank_2_layers_bf16",
     {1, 1, 1},
     2,
     2,
     1,
     false,
     PipeSchedule::gpipe,
     Recompute::none,
     1,
     Precision::bf16,
     false},
    {"one_rank_1_layer", {1, 1, 1}, 1, 2, 1, false, PipeSchedule::gpipe, Recompute::none, 1, Precision::fp32, false},
    {"selective_4_layers",
     {1, 1, 1},
     4,
     2,
     2,
     false,
     PipeSchedule::gpipe,
     Recompute::selective,
     1,
     Precision::fp32,
     true},
    {"full_4_layers", {1, 1, 1}, 4, 2, 1, false, PipeSchedule::gpipe, Recompute::full, 1, Precision::fp32, true},
    {"full_k2_5_layers", {1, 1, 1}, 5, 2, 2, false, PipeSchedule::gpipe, Recompute::full, 2, Precision::bf16, false},
    {"dp2_tp2_sp", {2, 2, 1}, 3, 2, 2, true, PipeSchedule::gpipe, Recompute::none, 1, Precision::fp32, true},
    {"pp2_gpipe_m3", {1, 1, 2}, 4, 1, 3, false, PipeSchedule::gpipe, Recompute::none, 1, Precision::fp32, true},
    {"pp2_1f1b_m4_selective",
     {1, 1, 2},
     5,
     1,
     4,
     false,
     PipeSchedule::one_f_one_b,
     Recompute::selective,
     1,
     Precision::bf16,
     false},
    {"tp2_pp2_1f1b_full_k2",
     {1, 2, 2},
     6,
     2,
     3,
     true,
     PipeSchedule::one_f_one_b,
     Recompute::full,
     2,
     Precision::fp32,
     false},
};

class SwapRuns : public ::testing::TestWithParam<SwapCase> {};

TEST_P(SwapRuns, CpuBackendEqualsNoOffloadBitwiseAndMemoryEqualsTheTheory) {
  const SwapCase& k = GetParam();
  const TrainOptions off = options(k, Offload::activations);
  const std::vector<RankOutcome> a = run_layout(k.lay, off, 3);
  const std::vector<RankOutcome> b = run_layout(k.lay, options(k, Offload::none), 3);
  const StepTheory th = step_theory(off, k.lay);
  for (size_t r = 0; r < a.size(); ++r) {
    const std::string at = std::string(k.name) + " rank " + std::to_string(r);
    EXPECT_EQ(a[r].losses, b[r].losses) << at;  // bitwise
    EXPECT_EQ(a[r].grad_norms, b[r].grad_norms) << at;
    EXPECT_EQ(a[r].params, b[r].params) << at;
    const int stage = a[r].pp_rank;
    const StageTheory& st = th.stages[static_cast<size_t>(stage)];
    // Activation memory is allocated once (current = peak), on each side equal to the formula.
    EXPECT_EQ(a[r].mem[MemCategory::activations].peak, st.activation_bytes) << at;
    EXPECT_EQ(a[r].mem[MemCategory::activations].current, st.activation_bytes) << at;
    EXPECT_EQ(a[r].host_mem[MemCategory::activations].current, st.host_activation_bytes) << at;
    EXPECT_EQ(a[r].host_mem.total.peak, st.host_activation_bytes) << at;  // nothing else on the host
    // The run without offload keeps what the two sides hold together, less the two working sets.
    const size_t before = b[r].mem[MemCategory::activations].peak;
    EXPECT_EQ(before, activation_bytes(options(k, Offload::none), k.lay, stage)) << at;
    EXPECT_EQ(b[r].host_mem.total.peak, 0u) << at;
    // What crossed in the last step: every micro-batch's host sets, once each way.
    EXPECT_EQ(a[r].offload.d2h, st.offload.d2h) << at;
    EXPECT_EQ(a[r].offload.h2d, st.offload.h2d) << at;
    EXPECT_EQ(a[r].offload.d2h, static_cast<size_t>(k.grad_accum) * st.host_activation_bytes /
                                    static_cast<size_t>(RankShape::micro_batches_in_flight(off, k.lay, stage)))
        << at;
    const bool stage_swaps = st.host_activation_bytes > 0;
    EXPECT_EQ(a[r].offload.d2h > 0, stage_swaps) << at;
    // The device's working sets: what both sides hold together beyond the run without offload.
    // At most one micro-batch's host sets (one or two layers: as many as they replace), so the
    // device never holds more than without offload, and less once there is more to swap.
    const size_t device = a[r].mem[MemCategory::activations].peak, host = st.host_activation_bytes;
    ASSERT_GE(device + host, before) << at;
    const size_t working = device + host - before;
    const auto slots = static_cast<size_t>(RankShape::micro_batches_in_flight(off, k.lay, stage));
    EXPECT_LE(working, host / slots) << at;
    EXPECT_EQ(working > 0, stage_swaps) << at;
    if (k.saves) {
      EXPECT_LT(device, before) << at;
    }
  }
}

// The fake device against the CPU backend without offload: the copies go through DeviceOps into
// NaN-filled device allocations, so a set not brought back before it is read would show.
TEST_P(SwapRuns, FakeDeviceEqualsTheCpuBackendWithoutOffloadBitwise) {
  const SwapCase& k = GetParam();
  const TrainOptions o = options(k, Offload::activations);
  const auto n = static_cast<size_t>(k.lay.world());
  std::vector<std::vector<double>> losses(n);
  std::vector<std::vector<float>> params(n);
  std::vector<MemoryStats> device(n), host(n);
  std::vector<OffloadBytes> crossed(n);
  std::vector<int> stage(n);
  run_ranks(k.lay.world(), [&](Communicator& world) {
    const auto r = static_cast<size_t>(world.rank());
    FakeRankDevice d(world, k.lay, kCompute, kFirstCommStream);
    FakeDeviceBackend be(d.ops, kCompute);
    stage[r] = d.ctx.pp_rank;
    auto engine = make_training_step(be, d.ctx, o);
    for (int s = 0; s < 3; ++s) losses[r].push_back(engine->step());
    device[r] = *be.device_memory();
    host[r] = be.host_memory();
    crossed[r] = engine->last_step_offload();
    params[r] = engine->full_params();
  });
  const std::vector<RankOutcome> cpu = run_layout(k.lay, options(k, Offload::none), 3);
  const StepTheory th = step_theory(o, k.lay);
  for (size_t r = 0; r < n; ++r) {
    const std::string at = std::string(k.name) + " rank " + std::to_string(r);
    EXPECT_EQ(losses[r], cpu[r].losses) << at;
    EXPECT_EQ(params[r], cpu[r].params) << at;
    const StageTheory& st = th.stages[static_cast<size_t>(stage[r])];
    EXPECT_EQ(device[r][MemCategory::activations].current, st.activation_bytes) << at;
    EXPECT_EQ(host[r][MemCategory::activations].current, st.host_activation_bytes) << at;
    EXPECT_EQ(crossed[r].d2h, st.offload.d2h) << at;
    EXPECT_EQ(crossed[r].h2d, st.offload.h2d) << at;
  }
}

INSTANTIATE_TEST_SUITE_P(Layouts, SwapRuns, ::testing::ValuesIn(kCases),
                         [](const ::testing::TestParamInfo<SwapCase>& i) { return std::string(i.param.name); });

// Both offloads at once: the host holds the optimizer states and the activations, the copies add
// up, the run is still the run without offload.
TEST(OffloadActivations, WithTheOptimizerOffloadedTooBothSidesAddUp) {
  const SwapCase k{"both", {2, 1, 2},       4,   1, 2, false, PipeSchedule::one_f_one_b, Recompute::none,
                   1,      Precision::bf16, true};
  TrainOptions both = options(k, Offload::optimizer_activations);
  both.zero = ZeroStage::two;
  TrainOptions plain = both;
  plain.offload = Offload::none;
  const std::vector<RankOutcome> a = run_layout(k.lay, both, 3), b = run_layout(k.lay, plain, 3);
  const StepTheory th = step_theory(both, k.lay);
  TrainOptions optimizer_only = both;
  optimizer_only.offload = Offload::optimizer;
  const StepTheory th_opt = step_theory(optimizer_only, k.lay);
  for (size_t r = 0; r < a.size(); ++r) {
    const std::string at = "rank " + std::to_string(r);
    EXPECT_EQ(a[r].losses, b[r].losses) << at;
    EXPECT_EQ(a[r].params, b[r].params) << at;
    const auto s = static_cast<size_t>(a[r].pp_rank);
    const StageTheory& st = th.stages[s];
    EXPECT_EQ(a[r].host_mem.total.current, st.host_states.total() + st.host_activation_bytes) << at;
    EXPECT_GT(st.host_activation_bytes, 0u) << at;
    EXPECT_GT(st.host_states.total(), 0u) << at;
    EXPECT_EQ(st.offload.d2h, th_opt.stages[s].offload.d2h + activation_offload_bytes(both, k.lay, a[r].pp_rank).d2h);
    EXPECT_EQ(a[r].offload.d2h, st.offload.d2h) << at;
    EXPECT_EQ(a[r].offload.h2d, st.offload.h2d) << at;
  }
}

// The formulas against arithmetic written out for one case: tiny (C = 32, 4 heads), B·T = R rows,
// fp32, 3 layers, one rank, no recomputation. A layer keeps X = 4·R·C·4 (ln1, res2, ln2, res3) +
// 12·R·C·4 (qkv, attention output, fc, GELU) + 4·(4·R) (LayerNorm statistics) + 4·R·4 (lse of 4
// heads) bytes; the host holds 3·X − y (y = R·C·4, the stage output stays), the device two working
// sets (2·X) in place of 3·X, and the stage output y.
TEST(OffloadActivations, TheoryAgainstArithmetic) {
  const SwapCase k{"x", {1, 1, 1}, 3, 2, 1, false, PipeSchedule::gpipe, Recompute::none, 1, Precision::fp32, true};
  const TrainOptions on = options(k, Offload::activations), off = options(k, Offload::none);
  const size_t C = static_cast<size_t>(on.model.hidden), R = 2 * static_cast<size_t>(on.model.seq);
  ASSERT_EQ(on.model.heads, 4);
  const size_t X = 4 * R * C * 4 + 12 * R * C * 4 + 4 * 4 * R + 4 * R * 4, y = R * C * 4;
  EXPECT_EQ(host_activation_bytes(on, k.lay, 0), 3 * X - y);
  EXPECT_EQ(activation_bytes(off, k.lay, 0) - activation_bytes(on, k.lay, 0), 3 * X - 2 * X - y);
  EXPECT_EQ(activation_offload_bytes(on, k.lay, 0).h2d, 3 * X - y);
  EXPECT_EQ(host_activation_bytes(off, k.lay, 0), 0u);
  EXPECT_EQ(activation_offload_bytes(off, k.lay, 0).d2h, 0u);
  // Full recomputation, blocks of 1: only the block outputs are kept; all but the top one go.
  TrainOptions full = on;
  full.recompute = Recompute::full;
  EXPECT_EQ(host_activation_bytes(full, k.lay, 0), 2 * y);
}

TEST(OffloadActivations, NamesAndFlags) {
  EXPECT_EQ(offload_name(Offload::optimizer_activations), "optimizer+activations");
  EXPECT_TRUE(offloads_optimizer(Offload::optimizer_activations));
  EXPECT_TRUE(offloads_activations(Offload::optimizer_activations));
  EXPECT_FALSE(offloads_activations(Offload::optimizer));
  EXPECT_FALSE(offloads_optimizer(Offload::activations));
}

}  // namespace
}  // namespace gcb::models::test
