// The host side of the CUDA backend (models/backend/device/device_backend.hpp) on a fake device
// (fake_device.hpp), without a GPU: the ordering plan against communicators' streams under the
// real engine for ZeRO 0–3 with and without --overlap, tp/sp and pp; that the checks catch a plan
// missing either half; stream-ordered allocation, zeroed only where asked (AllocInit), with every
// engine run on NaN-filled memory so that a buffer read before it is written fails the losses;
// asynchronous small uploads; the event timeline.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "collectives/thread_communicator.hpp"
#include "core/phase_timer.hpp"
#include "models/engine/engine.hpp"
#include "models/engine/parallel_groups.hpp"
#include "models/theory/theory.hpp"
#include "tests/models/backend/fake_device.hpp"
#include "tests/models/engine/layout_runs.hpp"

namespace gcb::models::test {
namespace {

const auto kCompute = reinterpret_cast<DeviceStream>(uintptr_t{1});
constexpr uintptr_t kFirstCommStream = 100;

std::string joined(const std::vector<std::string>& v) {
  std::string s;
  for (size_t i = 0; i < v.size() && i < 5; ++i) s += v[i] + "\n";
  return s;
}

// One collective between two kernels, then the buffer freed: what every gradient bucket does.
struct OneCollective {
  std::vector<std::string> missing_compute, racing_frees;
  bool later_kernel_after_collective = false;
};
OneCollective one_collective(FakeDeviceBackend::Broken broken) {
  OneCollective out;
  run_ranks(1, [&](Communicator& world) {
    FakeDeviceOps ops(kCompute);
    auto comm = FakeStreamComm::wrap(world, ops, kFirstCommStream);
    {
      FakeDeviceBackend be(ops, kCompute, broken);
      Buffer b = be.alloc(MemCategory::grads, DType::f32, 64);
      be.fill(b.view(), 64, 1.0f);
      ordered_collective(be, *comm, [&] { comm->all_reduce(b.data(), b.data(), 64, DType::f32, ReduceOp::sum); });
      be.scale(b.view(), 0.5, 64);
      b.reset();
      be.synchronize();
    }
    out.missing_compute = ops.collectives_missing_compute();
    out.racing_frees = ops.frees_racing_collectives();
    const auto& log = ops.log();
    for (size_t i = 0; i < log.size(); ++i) {
      if (log[i].kind != FakeDeviceOps::Op::collective) continue;
      for (size_t j = i + 1; j < log.size(); ++j) {
        if (log[j].what != "scale") continue;
        const auto it = log[j].ts.find(log[i].stream);
        out.later_kernel_after_collective = it != log[j].ts.end() && it->second >= log[i].ts.at(log[i].stream);
      }
    }
  });
  return out;
}

TEST(DeviceBackend, ComputeAndCollectivesAreOrderedBothWays) {
  const OneCollective ok = one_collective(FakeDeviceBackend::Broken::none);
  EXPECT_TRUE(ok.missing_compute.empty()) << joined(ok.missing_compute);
  EXPECT_TRUE(ok.racing_frees.empty()) << joined(ok.racing_frees);
  EXPECT_TRUE(ok.later_kernel_after_collective);
}

TEST(DeviceBackend, TheChecksCatchAPlanMissingEitherHalf) {
  const OneCollective no_begin = one_collective(FakeDeviceBackend::Broken::comm_begin);
  EXPECT_FALSE(no_begin.missing_compute.empty());
  const OneCollective no_end = one_collective(FakeDeviceBackend::Broken::comm_end);
  EXPECT_FALSE(no_end.racing_frees.empty());
  EXPECT_FALSE(no_end.later_kernel_after_collective);
}

// The real engine on the fake device: every collective sees the compute before it, nothing is
// freed under a running collective, and the losses equal the CPU backend's bit for bit (the
// bookkeeping — staged uploads, allocations zeroed only where AllocInit::zeros asks, stream-ordered
// frees — changes no value). The fake device's memory is NaN until written (fake_device.hpp), so
// the equality also says that no AllocInit::unset buffer is read before it is written, under each
// layout, recomputation and head chunking below.
struct EngineCase {
  const char* name;
  ParallelLayout lay;
  ZeroStage zero;
  bool overlap, sp;
  PipeSchedule schedule = PipeSchedule::one_f_one_b;
  FakeDeviceBackend::Broken broken = FakeDeviceBackend::Broken::none;  // must be caught
  Recompute recompute = Recompute::none;
  int logit_rows = 0;
  Precision precision = Precision::fp32;
  int vocab = 0;            // > 0: tiny's vocabulary replaced (one tp does not divide: padded rows of wte)
  int recompute_every = 1;  // full: layers per recomputed block
  int layers = 2;
};

class DeviceBackendEngine : public ::testing::TestWithParam<EngineCase> {};

TEST_P(DeviceBackendEngine, OrderingHoldsAndLossesEqualTheCpuBackend) {
  const EngineCase& k = GetParam();
  TrainOptions o = tiny_options(k.layers, 2, 2, k.precision);
  o.zero = k.zero;
  o.overlap_comm = k.overlap;
  o.sp = k.sp;
  o.schedule = k.schedule;
  o.recompute = k.recompute;
  o.recompute_every = k.recompute_every;
  o.logit_rows = k.logit_rows;
  if (k.vocab > 0) o.model.vocab = k.vocab;
  const int n = k.lay.world();
  std::vector<std::vector<double>> losses(static_cast<size_t>(n));
  std::vector<std::vector<std::string>> missing(static_cast<size_t>(n)), racing(static_cast<size_t>(n));
  std::vector<size_t> collectives(static_cast<size_t>(n)), adamw_launches(static_cast<size_t>(n));
  run_ranks(n, [&](Communicator& world) {
    const auto r = static_cast<size_t>(world.rank());
    FakeDeviceOps ops(kCompute);
    auto w = FakeStreamComm::wrap(world, ops, kFirstCommStream);
    ParallelGroups ctx = make_parallel_groups(*w, k.lay);
    {
      FakeDeviceBackend be(ops, kCompute, k.broken);
      auto engine = make_training_step(be, ctx, o);
      for (int s = 0; s < 2; ++s) losses[r].push_back(engine->step());
    }
    missing[r] = ops.collectives_missing_compute();
    racing[r] = ops.frees_racing_collectives();
    collectives[r] = ops.collectives();
    for (const auto& op : ops.log()) adamw_launches[r] += op.what == "adamw_multi" ? 1 : 0;
  });
  if (k.broken != FakeDeviceBackend::Broken::none) {
    bool caught = false;
    for (const auto& v : k.broken == FakeDeviceBackend::Broken::comm_end ? racing : missing)
      caught = caught || !v.empty();
    EXPECT_TRUE(caught) << "a plan missing half of its ordering must be caught";
    return;
  }
  const std::vector<RankOutcome> cpu = run_layout(k.lay, o, 2);
  for (int r = 0; r < n; ++r) {
    const auto i = static_cast<size_t>(r);
    EXPECT_TRUE(missing[i].empty()) << "rank " << r << "\n" << joined(missing[i]);
    EXPECT_TRUE(racing[i].empty()) << "rank " << r << "\n" << joined(racing[i]);
    EXPECT_GT(collectives[i], 0u) << "rank " << r;
    EXPECT_EQ(losses[i], cpu[i].losses) << "rank " << r;  // bitwise
    // The optimizer ran as multi-tensor launches walking the kernel's table (the fake's small
    // limits give several per step), and the second step's loss above depends on the first update.
    EXPECT_GT(adamw_launches[i], 2u) << "rank " << r;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Layouts, DeviceBackendEngine,
    ::testing::Values(EngineCase{"dp2", {2, 1, 1}, ZeroStage::none, false, false},
                      EngineCase{"dp2_zero0_overlap", {2, 1, 1}, ZeroStage::none, true, false},
                      EngineCase{"dp2_zero1_overlap", {2, 1, 1}, ZeroStage::one, true, false},
                      EngineCase{"dp2_zero2_overlap", {2, 1, 1}, ZeroStage::two, true, false},
                      EngineCase{"dp2_zero3", {2, 1, 1}, ZeroStage::three, false, false},
                      EngineCase{"dp2_zero3_overlap", {2, 1, 1}, ZeroStage::three, true, false},
                      EngineCase{"tp2_sp", {1, 2, 1}, ZeroStage::none, false, true},
                      EngineCase{"pp2_1f1b", {1, 1, 2}, ZeroStage::none, false, false},
                      EngineCase{"pp2_gpipe", {1, 1, 2}, ZeroStage::none, false, false, PipeSchedule::gpipe},
                      EngineCase{"dp2_tp2_zero3_overlap", {2, 2, 1}, ZeroStage::three, true, false},
                      EngineCase{"dp2_pp2_zero2_overlap", {2, 1, 2}, ZeroStage::two, true, false},
                      EngineCase{"tp2_selective_recompute",
                                 {1, 2, 1},
                                 ZeroStage::none,
                                 false,
                                 false,
                                 PipeSchedule::one_f_one_b,
                                 FakeDeviceBackend::Broken::none,
                                 Recompute::selective},
                      EngineCase{"pp2_full_recompute_chunked_logits",
                                 {1, 1, 2},
                                 ZeroStage::none,
                                 false,
                                 false,
                                 PipeSchedule::one_f_one_b,
                                 FakeDeviceBackend::Broken::none,
                                 Recompute::full,
                                 3},
                      // Blocks of 2 of 5 layers (stages of 3 and 2 under pp 2): a shorter last block.
                      EngineCase{"pp2_1f1b_full_recompute_blocks_of_2",
                                 {1, 1, 2},
                                 ZeroStage::none,
                                 false,
                                 false,
                                 PipeSchedule::one_f_one_b,
                                 FakeDeviceBackend::Broken::none,
                                 Recompute::full,
                                 0,
                                 Precision::fp32,
                                 0,
                                 2,
                                 5},
                      EngineCase{"dp2_zero3_overlap_full_recompute_blocks_of_2",
                                 {2, 1, 1},
                                 ZeroStage::three,
                                 true,
                                 false,
                                 PipeSchedule::one_f_one_b,
                                 FakeDeviceBackend::Broken::none,
                                 Recompute::full,
                                 0,
                                 Precision::bf16,
                                 0,
                                 2,
                                 5},
                      EngineCase{"dp2_tp2_zero1_padded_vocab",
                                 {2, 2, 1},
                                 ZeroStage::one,
                                 true,
                                 false,
                                 PipeSchedule::one_f_one_b,
                                 FakeDeviceBackend::Broken::none,
                                 Recompute::none,
                                 0,
                                 Precision::fp32,
                                 65},
                      EngineCase{"dp2_zero3_bf16",
                                 {2, 1, 1},
                                 ZeroStage::three,
                                 true,
                                 false,
                                 PipeSchedule::one_f_one_b,
                                 FakeDeviceBackend::Broken::none,
                                 Recompute::none,
                                 0,
                                 Precision::bf16},
                      EngineCase{"dp2_zero2_tp2_sp_bf16",
                                 {2, 2, 1},
                                 ZeroStage::two,
                                 false,
                                 true,
                                 PipeSchedule::one_f_one_b,
                                 FakeDeviceBackend::Broken::none,
                                 Recompute::none,
                                 0,
                                 Precision::bf16},
                      EngineCase{"dp2_zero3_overlap_without_comm_end",
                                 {2, 1, 1},
                                 ZeroStage::three,
                                 true,
                                 false,
                                 PipeSchedule::one_f_one_b,
                                 FakeDeviceBackend::Broken::comm_end},
                      EngineCase{"tp2_sp_without_comm_begin",
                                 {1, 2, 1},
                                 ZeroStage::none,
                                 false,
                                 true,
                                 PipeSchedule::one_f_one_b,
                                 FakeDeviceBackend::Broken::comm_begin}),
    [](const ::testing::TestParamInfo<EngineCase>& i) { return std::string(i.param.name); });

// The control for the NaN fill: the same engine with every memset dropped (Adam's moments, ZeRO-2
// gradient buckets and the padded units of initialisation then keep their NaN) no longer matches
// the CPU backend, so a buffer that needs zeros but were allocated AllocInit::unset would be caught.
TEST(DeviceBackend, ABufferThatNeedsZerosButMissesThemIsCaught) {
  TrainOptions o = tiny_options(2, 2, 2);
  o.zero = ZeroStage::two;
  const ParallelLayout lay{2, 1, 1};
  for (bool skip : {false, true}) {
    std::vector<std::vector<double>> losses(2);
    run_ranks(lay.world(), [&](Communicator& world) {
      FakeRankDevice d(world, lay, kCompute, kFirstCommStream);
      d.ops.skip_zeroing = skip;
      FakeDeviceBackend be(d.ops, kCompute);
      auto engine = make_training_step(be, d.ctx, o);
      for (int s = 0; s < 2; ++s) losses[static_cast<size_t>(world.rank())].push_back(engine->step());
    });
    const std::vector<RankOutcome> cpu = run_layout(lay, o, 2);
    for (size_t r = 0; r < 2; ++r) {
      if (skip) {
        EXPECT_NE(losses[r], cpu[r].losses) << "rank " << r << ": the NaN fill must reach the losses";
      } else {
        EXPECT_EQ(losses[r], cpu[r].losses) << "rank " << r;  // bitwise
      }
    }
  }
}

// AllocInit::unset enqueues no memset: the allocation holds what the device left there (the fake's NaN).
TEST(DeviceBackend, UnsetAllocationsAreNotZeroed) {
  FakeDeviceOps ops(kCompute);
  FakeDeviceBackend be(ops, kCompute);
  {
    Buffer b = be.alloc(MemCategory::activations, DType::f32, 3, AllocInit::unset);
    std::vector<float> host(3, 0.0f);
    be.copy_to_host(host.data(), b.data(), sizeof(float) * 3);
    for (float x : host) EXPECT_TRUE(std::isnan(x));
  }
  std::vector<std::string> order;
  for (const auto& op : ops.log())
    if (op.stream == kCompute) order.push_back(op.what);
  EXPECT_EQ(order, (std::vector<std::string>{"alloc", "copy", "free"}));
}

TEST(DeviceBackend, AllocationsAreZeroedInStreamOrderAndFreedOnTheComputeStream) {
  FakeDeviceOps ops(kCompute);
  FakeDeviceBackend be(ops, kCompute);
  {
    Buffer b = be.alloc(MemCategory::activations, DType::bf16, 5);
    std::vector<unsigned char> host(10, 0xFF);
    be.copy_to_host(host.data(), b.data(), 10);
    EXPECT_EQ(host, std::vector<unsigned char>(10, 0));
    EXPECT_EQ(be.memory()[MemCategory::activations].current, 10u);  // the accounting counts requested bytes
  }
  EXPECT_EQ(be.memory()[MemCategory::activations].current, 0u);
  std::vector<std::string> order;
  for (const auto& op : ops.log())
    if (op.stream == kCompute) order.push_back(op.what);
  EXPECT_EQ(order, (std::vector<std::string>{"alloc", "zero", "copy", "free"}));
}

// Each allocation is charged to its category with what the device pool's used counter grew by:
// here a pool that hands out 256-byte units, under DeviceBackend's own 16-byte rounding.
TEST(DeviceBackend, DeviceBytesPerCategoryAreWhatThePoolTookForEachAllocation) {
  FakeDeviceOps ops(kCompute);
  ops.granularity = 256;
  FakeDeviceBackend be(ops, kCompute);
  ASSERT_NE(be.device_memory(), nullptr);
  const MemoryStats& dev = *be.device_memory();
  {
    Buffer a = be.alloc(MemCategory::activations, DType::bf16, 5);  // 10 bytes → 16 → one 256-byte unit
    Buffer p = be.alloc(MemCategory::params, DType::f32, 100);      // 400 bytes → 512
    Buffer q = be.alloc(MemCategory::params, DType::bf16, 128);     // 256 bytes → 256
    {
      Buffer w = be.alloc(MemCategory::workspace, DType::i8, 0);  // empty: still one 16-byte vector → 256
      EXPECT_EQ(dev[MemCategory::workspace].current, 256u);
    }
    EXPECT_EQ(dev[MemCategory::activations].current, 256u);
    EXPECT_EQ(dev[MemCategory::params].current, 768u);
    EXPECT_EQ(dev[MemCategory::workspace].current, 0u);
    EXPECT_EQ(dev[MemCategory::workspace].peak, 256u);
    EXPECT_EQ(dev.total.current, ops.pool_used());              // every byte the pool holds is in a category
    EXPECT_EQ(be.memory()[MemCategory::params].current, 656u);  // requested: 400 + 256
  }
  EXPECT_EQ(dev.total.current, 0u);
  EXPECT_EQ(dev[MemCategory::params].peak, 768u);
  EXPECT_EQ(dev.total.peak, 1280u);
  be.reset_peaks();
  EXPECT_EQ(dev[MemCategory::params].peak, 0u);
  EXPECT_EQ(ops.memory_info().total - ops.memory_info().free, 0u);
  CpuBackend cpu;
  EXPECT_EQ(cpu.device_memory(), nullptr);  // host memory: nothing measured on a device
}

// The engine's model states as the device took them equal the ZeRO formulas (zero_state_bytes,
// each state one buffer, rounded up to DeviceBackend's 16 bytes), per stage, in bf16 + fp32
// master; between steps every device byte is in some category; after the engine, none is left.
TEST(DeviceBackend, ModelStatesOnTheDeviceEqualTheFormulas) {
  for (ZeroStage z : {ZeroStage::none, ZeroStage::one, ZeroStage::two, ZeroStage::three}) {
    TrainOptions o = tiny_options(2, 2, 2, Precision::bf16);
    o.zero = z;
    const ParallelLayout lay{2, 1, 1};
    std::vector<MemoryStats> device(2), requested(2);
    std::vector<size_t> pool_used(2), padded(2), left(2);
    run_ranks(lay.world(), [&](Communicator& world) {
      const auto r = static_cast<size_t>(world.rank());
      FakeRankDevice d(world, lay, kCompute, kFirstCommStream);
      FakeDeviceBackend be(d.ops, kCompute);
      {
        auto engine = make_training_step(be, d.ctx, o);
        engine->step();
        device[r] = *be.device_memory();
        requested[r] = be.memory();
        pool_used[r] = d.ops.pool_used();
        padded[r] = engine->padded_params();
      }
      left[r] = be.device_memory()->total.current;
    });
    const auto round16 = [](size_t b) { return (b + 15) / 16 * 16; };
    for (size_t r = 0; r < 2; ++r) {
      const StateBytes f = zero_state_bytes(z, padded[r], lay.dp, precision_policy(o.precision));
      const std::string at = "zero " + std::to_string(static_cast<int>(z)) + " rank " + std::to_string(r);
      EXPECT_EQ(device[r][MemCategory::params].current, round16(f.params)) << at;
      EXPECT_EQ(device[r][MemCategory::grads].current, round16(f.grads)) << at;
      EXPECT_EQ(device[r][MemCategory::master].current, round16(f.master)) << at;
      EXPECT_EQ(device[r][MemCategory::adam_m].current, round16(f.adam_m)) << at;
      EXPECT_EQ(device[r][MemCategory::adam_v].current, round16(f.adam_v)) << at;
      EXPECT_EQ(requested[r][MemCategory::params].current, f.params) << at;
      EXPECT_GE(device[r][MemCategory::activations].peak, requested[r][MemCategory::activations].peak) << at;
      EXPECT_GT(device[r][MemCategory::activations].peak, 0u) << at;
      EXPECT_EQ(device[r].total.current, pool_used[r]) << at;
      EXPECT_EQ(left[r], 0u) << at;
    }
  }
}

TEST(DeviceBackend, SmallUploadsAreStagedWithoutWaitingAndLargeOnesSynchronise) {
  FakeDeviceOps ops(kCompute);
  FakeDeviceBackend be(ops, kCompute);
  Buffer b = be.alloc(MemCategory::workspace, DType::i32, 64);
  std::vector<int32_t> src(64);
  for (int round = 0; round < 2 * static_cast<int>(DeviceBackend::kStagingSlots); ++round) {
    for (size_t i = 0; i < src.size(); ++i) src[i] = round * 100 + static_cast<int>(i);
    be.copy_from_host(b.data(), src.data(), src.size() * sizeof(int32_t));
    src.assign(64, -1);  // the caller may reuse its buffer at once
  }
  EXPECT_EQ(ops.syncs, 0);  // no upload drained the stream
  std::vector<int32_t> back(64);
  be.copy_to_host(back.data(), b.data(), back.size() * sizeof(int32_t));
  EXPECT_EQ(back[5], 7 * 100 + 5);
  EXPECT_EQ(ops.syncs, 1);
  Buffer big = be.alloc(MemCategory::params, DType::i8, DeviceBackend::kStagingBytes + 1);
  std::vector<char> large(DeviceBackend::kStagingBytes + 1, 3);
  be.copy_from_host(big.data(), large.data(), large.size());
  EXPECT_EQ(ops.syncs, 2);
}

TEST(DeviceBackend, TimelineMarksAreEventsReusedAfterClear) {
  FakeDeviceOps ops(kCompute);
  FakeDeviceBackend be(ops, kCompute);
  Timeline& tl = be.timeline();
  EXPECT_EQ(tl.kind(), "cuda events on the compute stream");
  const size_t a = tl.mark(), b = tl.mark(), c = tl.mark();
  EXPECT_DOUBLE_EQ(tl.seconds(a, c), 2e-3);  // the fake advances 1 ms per record
  EXPECT_DOUBLE_EQ(tl.seconds(a, b), 1e-3);
  const uint64_t records = ops.records;
  tl.clear();
  EXPECT_EQ(tl.mark(), 0u);
  EXPECT_EQ(ops.records, records + 1);
  PhaseTimer phases(tl);  // the phase split reads the same events
  phases.push("forward");
  phases.pop();
  EXPECT_GT(phases.exclusive().at("forward"), 0.0);
}

}  // namespace
}  // namespace gcb::models::test
