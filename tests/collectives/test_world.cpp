// The World in threads mode: rank contexts, launcher detection, the argument check and fault
// handling (a failing rank ends every rank promptly with its rank and host named).
#include "collectives/world.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <set>
#include <string>

#include "collectives/factory.hpp"
#include "core/error.hpp"
#include "gcb/config.hpp"
#include "core/gpu.hpp"

namespace gcb {
namespace {

using Env = std::map<std::string, std::string>;

LauncherInfo detect(const Env& env) {
  return detect_launcher([&env](const char* name) -> const char* {
    const auto it = env.find(name);
    return it == env.end() ? nullptr : it->second.c_str();
  });
}

TEST(Launcher, NothingSetMeansNotLaunched) { EXPECT_FALSE(detect({}).launched); }

TEST(Launcher, OpenMpiVariables) {
  const auto l = detect({{"OMPI_COMM_WORLD_SIZE", "4"},
                         {"OMPI_COMM_WORLD_RANK", "3"},
                         {"OMPI_COMM_WORLD_LOCAL_RANK", "1"},
                         {"OMPI_COMM_WORLD_LOCAL_SIZE", "2"}});
  EXPECT_TRUE(l.launched);
  EXPECT_EQ(l.size, 4);
  EXPECT_EQ(l.rank, 3);
  EXPECT_EQ(l.local_rank, 1);
  EXPECT_EQ(l.local_size, 2);
  EXPECT_EQ(l.source, "OMPI_COMM_WORLD_SIZE");
}

TEST(Launcher, PmiVariables) {
  const auto l = detect({{"PMI_SIZE", "8"}, {"PMI_RANK", "5"}});
  EXPECT_TRUE(l.launched);
  EXPECT_EQ(l.size, 8);
  EXPECT_EQ(l.rank, 5);
  EXPECT_EQ(l.local_rank, -1);
}

TEST(Launcher, SrunTaskButNotABatchScript) {
  // A plain command in an sbatch script sees SLURM_NTASKS/SLURM_PROCID but no task step.
  EXPECT_FALSE(detect({{"SLURM_NTASKS", "16"}, {"SLURM_PROCID", "0"}}).launched);
  const auto l =
      detect({{"SLURM_NTASKS", "16"}, {"SLURM_PROCID", "9"}, {"SLURM_STEP_ID", "0"}, {"SLURM_LOCALID", "1"}});
  EXPECT_TRUE(l.launched);
  EXPECT_EQ(l.size, 16);
  EXPECT_EQ(l.rank, 9);
  EXPECT_EQ(l.local_rank, 1);
}

TEST(Launcher, MalformedValuesAreIgnored) {
  EXPECT_FALSE(detect({{"OMPI_COMM_WORLD_SIZE", "four"}, {"OMPI_COMM_WORLD_RANK", "0"}}).launched);
}

TEST(Launcher, TorchrunVariablesAreALaunchWithoutMpi) {
  const auto l = detect({{"WORLD_SIZE", "8"},
                         {"RANK", "5"},
                         {"LOCAL_RANK", "1"},
                         {"LOCAL_WORLD_SIZE", "4"},
                         {"MASTER_ADDR", "head-0.jobs"},
                         {"MASTER_PORT", "23456"}});
  EXPECT_TRUE(l.launched);
  EXPECT_TRUE(l.without_mpi);
  EXPECT_EQ(l.size, 8);
  EXPECT_EQ(l.rank, 5);
  EXPECT_EQ(l.local_rank, 1);
  EXPECT_EQ(l.local_size, 4);
  EXPECT_EQ(l.source, "WORLD_SIZE");
  EXPECT_EQ(l.store_host, "head-0.jobs");
  EXPECT_EQ(l.store_port, 23456);
  // torchrun's default port when MASTER_PORT is not set; no MASTER_ADDR: no store address.
  const auto bare = detect({{"WORLD_SIZE", "2"}, {"RANK", "0"}});
  EXPECT_EQ(bare.store_port, 29500);
  EXPECT_EQ(bare.store_host, "");
  // mpirun's own variables win over an exported RANK/WORLD_SIZE.
  const auto both =
      detect({{"OMPI_COMM_WORLD_SIZE", "2"}, {"OMPI_COMM_WORLD_RANK", "1"}, {"WORLD_SIZE", "9"}, {"RANK", "7"}});
  EXPECT_EQ(both.size, 2);
  EXPECT_EQ(both.source, "OMPI_COMM_WORLD_SIZE");
  EXPECT_EQ(both.without_mpi, !GCB_HAVE_MPI);
}

TEST(Launcher, SrunStoreIsTheJobsFirstHost) {
  const auto l = detect({{"SLURM_NTASKS", "16"},
                         {"SLURM_PROCID", "9"},
                         {"SLURM_STEP_ID", "0"},
                         {"SLURM_JOB_ID", "123456"},
                         {"SLURM_JOB_NODELIST", "gpu[007-009,012],login1"}});
  EXPECT_EQ(l.store_host, "gpu007");
  EXPECT_EQ(l.store_port, 29500 + 456);
  EXPECT_EQ(l.without_mpi, !GCB_HAVE_MPI);
  EXPECT_TRUE(detect({{"SLURM_NTASKS", "2"}, {"SLURM_PROCID", "1"}, {"SLURM_STEP_ID", "0"}, {"SLURM_MPI_TYPE", "none"}})
                  .without_mpi);
  EXPECT_EQ(detect({{"SLURM_NTASKS", "2"},
                    {"SLURM_PROCID", "1"},
                    {"SLURM_STEP_ID", "0"},
                    {"MASTER_ADDR", "n5"},
                    {"MASTER_PORT", "4000"},
                    {"SLURM_JOB_NODELIST", "n[1-2]"}})
                .store_host,
            "n5");
}

TEST(Launcher, FirstSlurmHost) {
  EXPECT_EQ(first_slurm_host("node[07-09,12],gpu3"), "node07");
  EXPECT_EQ(first_slurm_host("a1,b2"), "a1");
  EXPECT_EQ(first_slurm_host("solo"), "solo");
  EXPECT_EQ(first_slurm_host("rack[2-3]-n[5-6]"), "rack2-n5");
  EXPECT_EQ(first_slurm_host(""), "");
}

TEST(World, HashOfArgumentsSeparatesArguments) {
  EXPECT_EQ(hash_arguments({"coll", "-b", "8"}), hash_arguments({"coll", "-b", "8"}));
  EXPECT_NE(hash_arguments({"coll", "-b", "8"}), hash_arguments({"coll", "-b8"}));
  EXPECT_NE(hash_arguments({"coll", "-b", "8"}), hash_arguments({"coll", "-b", "8", "-n", "3"}));
}

TEST(World, ThreadsGiveEveryRankItsContext) {
  WorldOptions o;
  o.ranks = 4;
  o.args = {"coll"};
  std::atomic<int> seen{0};
  const int code = run_world(o, [&](RankContext& ctx) {
    EXPECT_EQ(ctx.size, 4);
    EXPECT_EQ(ctx.world_comm.rank(), ctx.rank);
    EXPECT_EQ(ctx.local_rank, ctx.rank);
    EXPECT_EQ(ctx.local_size, 4);
    EXPECT_EQ(ctx.nodes, 1);
    EXPECT_EQ(ctx.device, -1);
    EXPECT_FALSE(ctx.processes);
    EXPECT_EQ(ctx.host, host_name());
    EXPECT_EQ(&ctx.world_comm, &ctx.host_comm);
    int one = 1, sum = 0;
    ctx.world_comm.all_reduce(&one, &sum, 1, DType::i32, ReduceOp::sum);
    EXPECT_EQ(sum, 4);
    seen.fetch_add(1);
    return ctx.rank == 0 ? 7 : 0;  // rank 0's value is the world's
  });
  EXPECT_EQ(code, 7);
  EXPECT_EQ(seen.load(), 4);
}

TEST(World, MismatchedArgumentsAreRefused) {
  WorldOptions o;
  o.ranks = 4;
  o.args = {"coll", "-b", "8"};
  o.args_of_rank = [&o](int rank) {
    auto a = o.args;
    if (rank == 2) a.push_back("--iters=3");
    return a;
  };
  std::atomic<int> ran{0};
  try {
    run_world(o, [&](RankContext&) {
      ran.fetch_add(1);
      return 0;
    });
    FAIL() << "mismatched arguments were accepted";
  } catch (const UsageError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("rank 2 on host " + host_name()), std::string::npos) << what;
    EXPECT_NE(what.find("different arguments"), std::string::npos) << what;
  }
  EXPECT_EQ(ran.load(), 0) << "rank code ran although the launch check failed";
}

TEST(World, FailingRankEndsEveryRankWithinTheTimeout) {
  WorldOptions o;
  o.ranks = 4;
  o.timeout = std::chrono::milliseconds(5000);
  const auto start = std::chrono::steady_clock::now();
  try {
    run_world(o, [](RankContext& ctx) {
      if (ctx.rank == 2) throw std::runtime_error("disk on fire");
      ctx.world_comm.barrier();  // the others wait for rank 2, which never comes
      return 0;
    });
    FAIL() << "a failing rank did not fail the run";
  } catch (const Fault& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("rank 2 on host " + host_name() + " failed: disk on fire"), std::string::npos) << what;
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  // The abort wakes the waiting ranks at once; well below the 5 s timeout even on a loaded box.
  EXPECT_LT(seconds, 2.5);
}

TEST(World, StuckRankTimesOut) {
  WorldOptions o;
  o.ranks = 2;
  o.timeout = std::chrono::milliseconds(200);
  const auto start = std::chrono::steady_clock::now();
  EXPECT_THROW(run_world(o,
                         [](RankContext& ctx) {
                           if (ctx.rank == 0) ctx.world_comm.barrier();  // rank 1 never joins
                           return 0;
                         }),
               Fault);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_LT(seconds, 3.0);  // 0.2 s timeout plus scheduling slack on a shared 2-core machine
}

TEST(World, UnknownBackendIsAUsageError) {
  WorldOptions o;
  o.backend = "carrier-pigeon";
  EXPECT_THROW(run_world(o, [](RankContext&) { return 0; }), UsageError);
}

TEST(World, PlannedSizeRefusesWhatRunWorldWouldBeforeAnythingStarts) {
  WorldOptions o;
  o.ranks = 3;
  EXPECT_EQ(planned_world_size(o), 3);
  o.ranks = 0;
  EXPECT_EQ(planned_world_size(o), 1);
  o.ranks = 2000;
  EXPECT_THROW(planned_world_size(o), UsageError);
  o.ranks = 2;
  o.backend = "carrier-pigeon";
  EXPECT_THROW(planned_world_size(o), UsageError);
  if (gpu::device_count() == 0) {
    o.backend = "nccl";
    EXPECT_THROW(planned_world_size(o), UsageError);
  }
}

// The World makes the data communicator of the row it was asked for, whatever that row's
// bootstrap: a host row that is not the world's own host communicator once ran on it instead
// (a new host backend passed every check and measured MPI or Gloo). Every built row this process
// can start alone: in-process, the launch's store (one rank, an in-memory store), over the host
// communicator (device rows only with GPUs); MPI's launcher world is checked under mpirun
// (test_mpi_communicator).
TEST(World, EveryRowGivesItsOwnDataCommunicator) {
  int checked = 0;
  for (const CommunicatorBackend& b : communicator_backends()) {
    if (!b.built() || b.bootstrap == Bootstrap::launcher_world) continue;
    if (b.memory == MemorySpace::device && gpu::device_count() == 0) continue;
    WorldOptions o;
    o.backend = std::string(b.name);
    o.ranks = b.needs_processes ? 0 : 2;
    o.timeout = std::chrono::milliseconds(30'000);
    std::mutex m;
    std::set<std::string> data_backends, host_backends;
    std::set<int> data_memory, host_memory;
    run_world(o, [&](RankContext& ctx) {
      const std::lock_guard lock(m);
      data_backends.insert(std::string(ctx.world_comm.backend()));
      host_backends.insert(std::string(ctx.host_comm.backend()));
      data_memory.insert(static_cast<int>(ctx.world_comm.memory()));
      host_memory.insert(static_cast<int>(ctx.host_comm.memory()));
      return 0;
    });
    EXPECT_EQ(data_backends, std::set<std::string>{std::string(b.name)}) << b.name;
    EXPECT_EQ(data_memory, std::set<int>{static_cast<int>(b.memory)}) << b.name;
    EXPECT_EQ(host_memory, std::set<int>{static_cast<int>(MemorySpace::host)}) << b.name;
    // The host communicator is the row that started the world: the data row itself, or the one
    // an over_host row was made over.
    const std::string host_row(host_communicator_for(b, b.needs_processes, false).name);
    EXPECT_EQ(host_backends, std::set<std::string>{host_row}) << b.name;
    ++checked;
  }
  EXPECT_GE(checked, 1);  // the in-process row is always built
}

// What a refusal says comes from the table: the row's name, never another backend's.
TEST(World, MessagesNameTheRequestedRow) {
  if (gpu::device_count() > 0) GTEST_SKIP() << "a GPU exists: device rows are not refused";
  for (const CommunicatorBackend& b : communicator_backends()) {
    if (!b.built() || b.memory != MemorySpace::device) continue;
    WorldOptions o;
    o.backend = std::string(b.name);
    try {
      planned_world_size(o);
      ADD_FAILURE() << b.name << " planned without a GPU";
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find(fmt::format("the {} backend needs a GPU", b.name)), std::string::npos)
          << e.what();
    }
  }
}

}  // namespace
}  // namespace gcb
