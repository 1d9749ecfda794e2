// --offload optimizer (ZeRO-Offload, Ren et al. 2021 §4; model_states.hpp): master weights and Adam
// moments in host memory, gradients copied out, AdamW on the host, parameters copied back. On the
// CPU backend and on the fake device (fake_device.hpp, the CUDA backend's host side): losses,
// gradient norms and parameters bitwise those without offload for dp 1 and 2 at ZeRO 0–3, fp32 and
// bf16, with clipping on, and on dp2×tp2×pp2 with SP (CPU); device and host memory per category equal to the theory
// byte for byte; the bytes that cross per step equal the theory.
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "collectives/thread_communicator.hpp"
#include "models/engine/engine.hpp"
#include "models/engine/parallel_groups.hpp"
#include "models/theory/theory.hpp"
#include "models/model/train_option_names.hpp"
#include "tests/models/backend/fake_device.hpp"
#include "tests/models/engine/layout_runs.hpp"

namespace gcb::models::test {
namespace {

const auto kCompute = reinterpret_cast<DeviceStream>(uintptr_t{1});
constexpr uintptr_t kFirstCommStream = 100;

struct OffloadCase {
  int dp;
  ZeroStage zero;
  Precision precision;
};

std::string name(const OffloadCase& k) {
  return "dp" + std::to_string(k.dp) + "_zero" + std::to_string(static_cast<int>(k.zero)) + "_" +
         std::string(precision_name(k.precision));
}

TrainOptions options(const OffloadCase& k, Offload off) {
  TrainOptions o = tiny_options(2, 2, 2, k.precision);  // clipping on (kTinyGradClip)
  o.zero = k.zero;
  o.offload = off;
  return o;
}

std::vector<OffloadCase> cases() {
  std::vector<OffloadCase> v;
  for (int dp : {1, 2})
    for (ZeroStage z : {ZeroStage::none, ZeroStage::one, ZeroStage::two, ZeroStage::three})
      for (Precision p : {Precision::fp32, Precision::bf16}) v.push_back({dp, z, p});
  return v;
}

// The theory's device and host bytes of a rank with Ψ = padded, against independent arithmetic:
// the n elements a rank updates (Ψ, or Ψ/dp from ZeRO 1) hold 4 + 4 + 4 bytes on the host plus the
// gradients' G and (mixed precision) the parameters' P; the device keeps params and grads only.
void expect_states(const MemoryStats& device, const MemoryStats& host, size_t padded, const OffloadCase& k,
                   const std::string& at) {
  const PrecisionPolicy p = precision_policy(k.precision);
  const StateBytes dev = zero_state_bytes(k.zero, padded, k.dp, p, Offload::optimizer);
  const StateBytes hst = host_state_bytes(k.zero, padded, k.dp, p, Offload::optimizer);
  const MemCategory cats[] = {MemCategory::params, MemCategory::grads, MemCategory::master, MemCategory::adam_m,
                              MemCategory::adam_v};
  const size_t want_dev[] = {dev.params, dev.grads, dev.master, dev.adam_m, dev.adam_v};
  const size_t want_host[] = {hst.params, hst.grads, hst.master, hst.adam_m, hst.adam_v};
  for (size_t c = 0; c < 5; ++c) {
    EXPECT_EQ(device[cats[c]].current, want_dev[c]) << at << " device " << mem_category_name(cats[c]);
    EXPECT_EQ(host[cats[c]].current, want_host[c]) << at << " host " << mem_category_name(cats[c]);
  }
  // Everything on the host is a model state; nothing else goes there.
  EXPECT_EQ(host.total.current, hst.total()) << at;
  EXPECT_EQ(host.total.peak, hst.total()) << at;
  const size_t n = k.zero >= ZeroStage::one ? padded / static_cast<size_t>(k.dp) : padded;
  const size_t G = k.precision == Precision::bf16 ? 2 : 4;
  EXPECT_EQ(hst.master + hst.adam_m + hst.adam_v, 12 * n) << at;
  EXPECT_EQ(hst.grads, G * n) << at;
  EXPECT_EQ(hst.params, k.precision == Precision::bf16 ? 2 * n : 0) << at;
  EXPECT_EQ(dev.master + dev.adam_m + dev.adam_v, 0u) << at;
}

class OffloadRuns : public ::testing::TestWithParam<OffloadCase> {};

TEST_P(OffloadRuns, CpuBackendEqualsNoOffloadBitwiseAndMemoryEqualsTheTheory) {
  const OffloadCase& k = GetParam();
  const ParallelLayout lay{k.dp, 1, 1};
  const std::vector<RankOutcome> off = run_layout(lay, options(k, Offload::optimizer), 3);
  const std::vector<RankOutcome> on = run_layout(lay, options(k, Offload::none), 3);
  const StepTheory th = step_theory(options(k, Offload::optimizer), lay);
  for (size_t r = 0; r < off.size(); ++r) {
    const std::string at = name(k) + " rank " + std::to_string(r);
    EXPECT_EQ(off[r].losses, on[r].losses) << at;  // bitwise
    EXPECT_EQ(off[r].grad_norms, on[r].grad_norms) << at;
    EXPECT_EQ(off[r].params, on[r].params) << at;
    // The run learned (the update reached the device's parameters): the second loss differs.
    EXPECT_NE(off[r].losses[0], off[r].losses[1]) << at;
    expect_states(off[r].mem, off[r].host_mem, off[r].padded, k, at);
    EXPECT_EQ(off[r].mem[MemCategory::params].current, th.stages[0].states.params) << at;
    EXPECT_EQ(off[r].host_mem[MemCategory::master].current, th.stages[0].host_states.master) << at;
    // What crossed in the last step: the gradients out, the parameters back.
    EXPECT_EQ(off[r].offload.d2h, th.stages[0].offload.d2h) << at;
    EXPECT_EQ(off[r].offload.h2d, th.stages[0].offload.h2d) << at;
    EXPECT_GT(off[r].offload.d2h, 0u) << at;
    // Without offload nothing is on the host and nothing crosses.
    EXPECT_EQ(on[r].host_mem.total.peak, 0u) << at;
    EXPECT_EQ(on[r].offload.d2h + on[r].offload.h2d, 0u) << at;
  }
}

// The fake device (NaN-filled allocations, every copy through DeviceOps) against the CPU backend
// without offload: the device AdamW (the multi-tensor kernel's CPU reference) and the host AdamW
// give the same bits; the device's allocator took nothing for master, m and v.
TEST_P(OffloadRuns, FakeDeviceEqualsTheCpuBackendWithoutOffloadBitwise) {
  const OffloadCase& k = GetParam();
  const ParallelLayout lay{k.dp, 1, 1};
  const TrainOptions o = options(k, Offload::optimizer);
  const size_t n = static_cast<size_t>(k.dp);
  std::vector<std::vector<double>> losses(n), norms(n);
  std::vector<std::vector<float>> params(n);
  std::vector<MemoryStats> device(n), requested(n), host(n);
  std::vector<OffloadBytes> crossed(n);
  std::vector<size_t> padded(n), left(n);
  run_ranks(lay.world(), [&](Communicator& world) {
    const auto r = static_cast<size_t>(world.rank());
    FakeRankDevice d(world, lay, kCompute, kFirstCommStream);
    FakeDeviceBackend be(d.ops, kCompute);
    {
      auto engine = make_training_step(be, d.ctx, o);
      for (int s = 0; s < 3; ++s) {
        losses[r].push_back(engine->step());
        norms[r].push_back(engine->last_grad_norm());
      }
      device[r] = *be.device_memory();
      requested[r] = be.memory();
      host[r] = be.host_memory();
      crossed[r] = engine->last_step_offload();
      padded[r] = engine->padded_params();
      params[r] = engine->full_params();
    }
    left[r] = be.host_memory().total.current;
  });
  const std::vector<RankOutcome> cpu = run_layout(lay, options(k, Offload::none), 3);
  const StepTheory th = step_theory(o, lay);
  for (size_t r = 0; r < n; ++r) {
    const std::string at = name(k) + " rank " + std::to_string(r);
    EXPECT_EQ(losses[r], cpu[r].losses) << at;  // bitwise
    EXPECT_EQ(norms[r], cpu[r].grad_norms) << at;
    EXPECT_EQ(params[r], cpu[r].params) << at;
    expect_states(requested[r], host[r], padded[r], k, at);
    for (MemCategory c : {MemCategory::master, MemCategory::adam_m, MemCategory::adam_v})
      EXPECT_EQ(device[r][c].current, 0u) << at << " " << mem_category_name(c);
    EXPECT_EQ(crossed[r].d2h, th.stages[0].offload.d2h) << at;
    EXPECT_EQ(crossed[r].h2d, th.stages[0].offload.h2d) << at;
    EXPECT_EQ(left[r], 0u) << at;  // the host memory went with the engine
  }
}

INSTANTIATE_TEST_SUITE_P(Layouts, OffloadRuns, ::testing::ValuesIn(cases()),
                         [](const ::testing::TestParamInfo<OffloadCase>& i) { return name(i.param); });

// With tp, sp and pp (the tied embedding on both ends, replicated pieces, the norm over three
// groups) the offloaded run is still the run without offload, bit for bit, on every rank.
TEST(Offload, ThreeDimensionalLayoutsEqualNoOffloadBitwise) {
  for (ZeroStage z : {ZeroStage::one, ZeroStage::three}) {
    TrainOptions o = tiny_options(2, 2, 2, Precision::bf16);
    o.zero = z;
    o.sp = true;
    const ParallelLayout lay{2, 2, 2};
    TrainOptions off = o;
    off.offload = Offload::optimizer;
    const std::vector<RankOutcome> a = run_layout(lay, off, 3), b = run_layout(lay, o, 3);
    const StepTheory th = step_theory(off, lay);
    for (size_t r = 0; r < a.size(); ++r) {
      const std::string at = "zero " + std::to_string(static_cast<int>(z)) + " rank " + std::to_string(r);
      EXPECT_EQ(a[r].losses, b[r].losses) << at;
      EXPECT_EQ(a[r].grad_norms, b[r].grad_norms) << at;
      EXPECT_EQ(a[r].params, b[r].params) << at;
      const StageTheory& st = th.stages[static_cast<size_t>(a[r].pp_rank)];
      EXPECT_EQ(a[r].host_mem.total.current, st.host_states.total()) << at;
      EXPECT_EQ(a[r].offload.d2h, st.offload.d2h) << at;
      EXPECT_EQ(a[r].offload.h2d, st.offload.h2d) << at;
    }
  }
}

// The offloaded step waits for the device once (after every unit's gradients are enqueued out)
// and enqueues the copies back unit by unit without waiting, so that a device copies unit i while
// the host updates unit i + 1: per step exactly one synchronisation more than without offload,
// whatever the number of units (an engine that waits per unit would add 2 per unit).
TEST(Offload, OneWaitPerStepWhateverTheUnits) {
  for (int layers : {2, 5}) {
    size_t extra = 0;
    for (Offload off : {Offload::none, Offload::optimizer}) {
      TrainOptions o = tiny_options(layers, 1, 1, Precision::bf16);
      o.offload = off;
      const ParallelLayout lay{1, 1, 1};
      size_t syncs = 0;
      run_ranks(1, [&](Communicator& world) {
        FakeRankDevice d(world, lay, kCompute, kFirstCommStream);
        FakeDeviceBackend be(d.ops, kCompute);
        auto engine = make_training_step(be, d.ctx, o);
        engine->step();
        const size_t before = d.ops.syncs;
        engine->step();
        syncs = d.ops.syncs - before;
      });
      extra = off == Offload::none ? syncs : syncs - extra;
    }
    EXPECT_EQ(extra, 1u) << layers << " layers";
  }
}

TEST(Offload, TheoryMovesTheOptimizerStatesToTheHost) {
  // ZeRO-Offload §4 with the ZeRO paper's Ψ = 7.5B, N_d = 64, mixed precision: the device keeps
  // 2Ψ + 2Ψ at ZeRO 0 and 1 (30 GB) instead of 120 and 31.4 GB; the host 12Ψ/N_d + 2Ψ/N_d + 2Ψ/N_d.
  const size_t psi = 7'500'000'000, n = 64;
  const PrecisionPolicy mixed = precision_policy(Precision::bf16);
  EXPECT_EQ(zero_state_bytes(ZeroStage::none, psi, n, mixed, Offload::optimizer).total(), 4 * psi);
  EXPECT_EQ(zero_state_bytes(ZeroStage::one, psi, n, mixed, Offload::optimizer).total(), 4 * psi);
  EXPECT_EQ(zero_state_bytes(ZeroStage::two, psi, n, mixed, Offload::optimizer).total(), 2 * psi + 2 * psi / n);
  EXPECT_EQ(host_state_bytes(ZeroStage::one, psi, n, mixed, Offload::optimizer).total(), 16 * psi / n);
  EXPECT_EQ(host_state_bytes(ZeroStage::none, psi, n, mixed, Offload::optimizer).total(), 16 * psi);
  EXPECT_EQ(host_state_bytes(ZeroStage::one, psi, n, mixed, Offload::none).total(), 0u);
  const OffloadBytes b = offload_bytes(ZeroStage::two, psi, n, mixed, Offload::optimizer);
  EXPECT_EQ(b.d2h, 2 * psi / n);
  EXPECT_EQ(b.h2d, 2 * psi / n);
  // fp32: the host keeps the weights' copy (4), m and v, the fp32 gradients (4); nothing to round.
  const PrecisionPolicy fp32 = precision_policy(Precision::fp32);
  EXPECT_EQ(host_state_bytes(ZeroStage::three, 640, 64, fp32, Offload::optimizer).total(), 16u * 10);
  EXPECT_EQ(offload_bytes(ZeroStage::none, 640, 64, fp32, Offload::optimizer).h2d, 4u * 640);
  // Without offload the formulas are ZeRO's.
  EXPECT_EQ(zero_state_bytes(ZeroStage::one, 640, 64, mixed, Offload::none).total(),
            zero_state_bytes(ZeroStage::one, 640, 64, mixed).total());
}

// --offload's names (train_option_names.hpp, what the command line reads): each value's name, and
// nothing for a name it does not know.
std::optional<Offload> offload_named(std::string_view name) {
  for (const auto& [n, o] : offload_names())
    if (n == name) return o;
  return std::nullopt;
}

TEST(Offload, NamesParse) {
  EXPECT_EQ(offload_named("none"), Offload::none);
  EXPECT_EQ(offload_named("optimizer"), Offload::optimizer);
  EXPECT_EQ(offload_named("activations"), Offload::activations);
  EXPECT_EQ(offload_named("optimizer+activations"), Offload::optimizer_activations);
  EXPECT_EQ(offload_named("activations+optimizer"), Offload::optimizer_activations);
  EXPECT_EQ(offload_named("all"), std::nullopt);
  EXPECT_EQ(offload_name(Offload::optimizer), "optimizer");
  EXPECT_EQ(name_in(offload_names(), Offload::optimizer_activations), "optimizer+activations");
}

}  // namespace
}  // namespace gcb::models::test
