// One process driving every GPU of a node as rank threads, on fake devices: each rank thread takes
// the device of its local rank (collectives/gpu_choice.hpp, as the World's thread mode does),
// binds it and builds its own backend, streams and communicators; the engine then issues every
// device operation from the thread bound to that device, under a layout whose dp, tp and pp groups
// are all split from the world (Megatron order). The CUDA path itself (cudaSetDevice per thread,
// ncclCommInitRank per thread with one shared id, ncclCommSplit) compiles, unvalidated.
#include <gtest/gtest.h>

#include <memory>
#include <set>
#include <vector>

#include "collectives/gpu_choice.hpp"
#include "collectives/thread_communicator.hpp"
#include "models/engine/engine.hpp"
#include "models/engine/parallel_groups.hpp"
#include "tests/models/backend/fake_device.hpp"
#include "tests/models/engine/layout_runs.hpp"

namespace gcb::models::test {
namespace {

const auto kCompute = reinterpret_cast<DeviceStream>(uintptr_t{1});
constexpr uintptr_t kFirstCommStream = 100;

struct RankSeen {
  int device = -1;
  int dp_size = 0, tp_size = 0, pp_size = 0;
  std::vector<double> losses;
  std::vector<std::string> wrong_thread;
  size_t collectives = 0;
};

TrainOptions rank_thread_options() {
  TrainOptions o = tiny_options(2, 2, 2);
  o.zero = ZeroStage::three;
  o.overlap_comm = true;
  return o;
}

// dp2 × tp2 on four rank threads of one process, four visible devices.
TEST(DeviceRankThreads, EachRankThreadDrivesTheDeviceOfItsLocalRank) {
  const ParallelLayout lay{2, 2, 1};
  const TrainOptions o = rank_thread_options();
  const int n = lay.world(), visible = 4;
  std::vector<RankSeen> seen(static_cast<size_t>(n));
  run_ranks(n, [&](Communicator& world) {
    RankSeen& me = seen[static_cast<size_t>(world.rank())];
    me.device = device_for_local_rank(world.rank(), visible);  // in a thread world, local rank = rank
    FakeDeviceOps ops(kCompute, me.device);
    auto w = FakeStreamComm::wrap(world, ops, kFirstCommStream);
    ParallelGroups ctx = make_parallel_groups(*w, lay);
    me.dp_size = ctx.dp->size();
    me.tp_size = ctx.tp->size();
    me.pp_size = ctx.pp->size();
    {
      FakeDeviceBackend be(ops, kCompute);
      auto engine = make_training_step(be, ctx, o);
      for (int s = 0; s < 2; ++s) me.losses.push_back(engine->step());
    }
    me.wrong_thread = ops.wrong_thread();
    me.collectives = ops.collectives();
  });
  const std::vector<RankOutcome> cpu = run_layout(lay, o, 2);
  std::set<int> devices;
  for (int r = 0; r < n; ++r) {
    const RankSeen& me = seen[static_cast<size_t>(r)];
    devices.insert(me.device);
    EXPECT_EQ(me.device, r);
    EXPECT_EQ(me.dp_size, 2);
    EXPECT_EQ(me.tp_size, 2);
    EXPECT_EQ(me.pp_size, 1);
    EXPECT_TRUE(me.wrong_thread.empty()) << "rank " << r << ": " << me.wrong_thread.front();
    EXPECT_GT(me.collectives, 0u);
    EXPECT_EQ(me.losses, cpu[static_cast<size_t>(r)].losses) << "rank " << r;  // bitwise
  }
  EXPECT_EQ(devices.size(), static_cast<size_t>(n)) << "no two rank threads share a device";
}

// The check bites: devices set up by one thread for all ranks (as ncclCommInitAll's single
// thread would) and then used by rank threads that never bound theirs.
TEST(DeviceRankThreads, BackendsBuiltOnAnotherThreadAreCaught) {
  const ParallelLayout lay{2, 1, 1};
  const TrainOptions o = rank_thread_options();
  const int n = lay.world();
  std::vector<std::unique_ptr<FakeDeviceOps>> ops;
  std::vector<std::unique_ptr<FakeDeviceBackend>> backends;
  for (int r = 0; r < n; ++r) {
    ops.push_back(std::make_unique<FakeDeviceOps>(kCompute, r));
    backends.push_back(std::make_unique<FakeDeviceBackend>(*ops.back(), kCompute));  // binds this thread
  }
  run_ranks(n, [&](Communicator& world) {
    const auto r = static_cast<size_t>(world.rank());
    auto w = FakeStreamComm::wrap(world, *ops[r], kFirstCommStream);
    ParallelGroups ctx = make_parallel_groups(*w, lay);
    auto engine = make_training_step(*backends[r], ctx, o);
    engine->step();
  });
  for (int r = 0; r < n; ++r) EXPECT_FALSE(ops[static_cast<size_t>(r)]->wrong_thread().empty()) << "rank " << r;
  backends.clear();
}

}  // namespace
}  // namespace gcb::models::test
