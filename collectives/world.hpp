// The World decides how ranks come to exist (docs/design.md "World"): threads of one process, or one
// process per rank when mpirun/srun started us. Rank code is written once as a function of a
// RankContext and runs unchanged in both modes. Before any rank code runs, the World checks the
// launch (local rank -> GPU mapping, duplicate GPUs, a misbuilt MPI where every rank is rank 0,
// identical arguments on every rank); each failure is one clear gcb::UsageError.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "collectives/communicator.hpp"

namespace gcb {

struct RankContext {
  int rank = 0;
  int size = 1;
  int local_rank = 0;  // rank among the ranks on this host
  int local_size = 1;
  int nodes = 1;    // distinct hosts in the world
  int device = -1;  // CUDA device of this rank; -1 on CPU backends
  std::string host;
  bool processes = false;  // true: one process per rank (MPI launch); false: threads
  // The data communicator of the chosen backend, made from its row of communicator_backends()
  // (its memory() says where its buffers live: a device row's are on this rank's GPU).
  Communicator& world_comm;
  // A host-memory communicator over the same ranks, for control traffic: time samples, verdicts,
  // error counts; the one of the row that started the world (host_communicator_for, factory.hpp).
  // When that is the chosen backend itself (every row that starts a world) it is world_comm.
  Communicator& host_comm;
};

// What the environment says about the launcher, read before MPI is initialised.
struct LauncherInfo {
  bool launched = false;                 // started by mpirun/srun/torchrun with rank variables set
  int size = 1, rank = 0;                // from the variables below
  int local_rank = -1, local_size = -1;  // -1 when the launcher does not say
  std::string source;                    // "OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_NTASKS", "WORLD_SIZE"
  // Started without MPI (torchrun / Kubernetes variables, srun --mpi=none, or any launcher when
  // this build has no MPI): the ranks meet through the store rank 0 serves at store_host:store_port.
  bool without_mpi = false;
  std::string store_host;  // MASTER_ADDR, else the first host of SLURM_JOB_NODELIST; "" unknown
  int store_port = 0;      // MASTER_PORT, else 29500 (+ SLURM_JOB_ID % 1000 under Slurm)
};
// Reads OMPI_COMM_WORLD_{SIZE,RANK,LOCAL_RANK,LOCAL_SIZE}, PMI_SIZE/PMI_RANK (MPICH, srun
// --mpi=pmi2), PMIX_RANK + SLURM_*, SLURM_STEP_NUM_TASKS/SLURM_NTASKS + SLURM_PROCID (srun), and
// last torchrun's WORLD_SIZE/RANK/LOCAL_RANK/LOCAL_WORLD_SIZE (PyTorch docs, "torchrun (Elastic
// Launch)", environment variables; a Kubernetes Job sets the same), which mark a launch without
// MPI; MASTER_ADDR/MASTER_PORT name its store. `getenv` is injectable for tests.
LauncherInfo detect_launcher(const std::function<const char*(const char*)>& getenv_fn);
LauncherInfo detect_launcher();

// The first host of a Slurm host list ("node[07-09,12],gpu3" -> "node07"), "" for an empty one
// (Slurm's hostlist syntax, slurm.conf(5) "NodeName"; scontrol show hostnames prints them all).
std::string first_slurm_host(const std::string& nodelist);

// Whether the ranks of this process's launch meet without MPI (detect_launcher().without_mpi).
bool world_launched_without_mpi();

struct WorldOptions {
  std::string backend = "threads";  // a row of communicator_backends()
  int ranks = 0;                    // threads mode: number of rank threads (0 = 1 on CPU, one per GPU for nccl)
  std::chrono::milliseconds timeout{300'000};
  // How host rows other than threads reduce (threads are always rank ordered): training asks for
  // rank_ordered (bitwise equal to threads), measurements of the MPI library for library.
  ReductionOrder reduction_order = ReductionOrder::rank_ordered;
  // The arguments (without argv[0]) every rank must share; their hash is compared across ranks.
  std::vector<std::string> args;
  // Test hook (threads mode): the arguments rank r claims to have; default `args` for all.
  std::function<std::vector<std::string>(int rank)> args_of_rank;
};

// 64-bit FNV-1a over the arguments, each terminated by a NUL byte.
uint64_t hash_arguments(const std::vector<std::string>& args);

// Whether run_world would start one process per rank (a launcher was detected).
bool world_is_processes();

// The number of ranks run_world(options, ...) would start, after every refusal it would make
// about the launch (unknown or unbuilt backend, nccl without enough GPUs, a launcher with the
// threads backend, --ranks out of range): call it to validate before creating any output.
int planned_world_size(const WorldOptions& options);

// Ends every rank of an MPI world now (MPI_Abort) when this process is one of several MPI ranks
// and leaves with an error outside run_world: the others would wait for it forever. No-op in
// thread worlds and after MPI_Finalize.
void abort_world_after_error(int exit_code);

// Called by every process of a multi-process launch when the run was stopped by a signal, after the
// writing process wrote its outputs: the others return only once it has (an MPI barrier, or a
// key in the store; bounded by the store's timeout). mpirun and torchrun's agent end the whole
// job when the first rank exits non-zero, which would otherwise kill the writer mid-write.
// No-op in thread worlds and single processes.
void wait_for_writer_before_exit();

// Runs fn on every rank and returns when all ranks have finished. The world is the one the host
// communicator's row starts (its bootstrap: in-process threads, MPI's launcher world, the launch's
// store); the data communicator is made from the chosen backend's row inside it (over the host
// communicator when its bootstrap is over_host). Processes started without MPI
// (torchrun-style variables) meet through the store (collectives/tcp_store.hpp): Gloo is their
// host communicator, and a failing rank prints its message and ends its process, whose closed
// connections end the others (each naming the ranks on its host that exited or stopped). Threads: the first failing
// rank aborts the others (each blocked collective ends within `timeout`), then gcb::Fault
// "rank R on host H failed: ..." is thrown (gcb::UsageError is rethrown as is). Processes:
// MPI_Init_thread on first use (MPI_Finalize at process exit), the launch checks, fn; a failing
// rank prints the same message and calls MPI_Abort so that every rank ends now. A launch-check
// failure is a gcb::UsageError on every rank. `fn`'s return value (rank 0's) is returned on
// every rank. While fn runs, the process watchdog (core/watchdog.hpp) is armed with `timeout`:
// a rank blocked in an MPI call, or in any other watched scope, for longer ends every rank
// (MPI_Abort) or the process (threads), naming what it waited in and, for processes, the ranks
// on this host that are stopped or gone.
int run_world(const WorldOptions& options, const std::function<int(RankContext&)>& fn);

// A safe point of a multi-rank run (core/interrupt.hpp): every rank calls it at the same place of
// the same program, and every rank gets the same answer, the stop signal any rank has received
// (the largest signal number when several did), 0 when none has. It costs one 4-byte all_reduce
// over the host communicator, so it sits between cases, sizes or layouts, never in a timed loop.
// A rank that gets a signal a moment after its peers passed a safe point stops at the next one,
// with them. The writing rank records `running` (what is skipped) with core's record_stop.
int agreed_interrupt(RankContext& ctx, const std::string& running);

}  // namespace gcb
