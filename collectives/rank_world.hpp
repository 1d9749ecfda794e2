// The World of the families that measure ranks against each other (collectives, rank pairs): the
// backend a run gets by default, and a World started with its refusals checked up front.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "collectives/world.hpp"

namespace gcb {

// The backend a run gets when --backend is not given: nccl where GPUs exist, else mpi when
// started under mpirun/srun, else threads.
std::string default_coll_backend();

// Rank threads of an in-process host backend when --ranks is not given: the CPUs this process
// may run on (sched_getaffinity), at least 2 and at most 4 — more threads than cores measure the
// scheduler (4 rank threads on 2 vCPUs made an 8 B all_reduce 22 µs against 0.6 µs with 2).
int default_host_rank_threads();

// The World of `backend` ("" = default_coll_backend()), `ranks` (0 = default_host_rank_threads()
// for an in-process host backend, else the launcher's or one per GPU), the fault timeout and the
// argument hash. fn returns this rank's count of wrong elements; the exit code is
// kExitVerifyFailed when rank 0 saw any, else kExitOk.
int run_checked_world(const std::string& backend, int ranks, double timeout_s, const std::vector<std::string>& args,
                      const std::function<uint64_t(RankContext&)>& fn);
// The number of ranks run_checked_world(backend, ranks, ...) would start, after every refusal the
// World would make (planned_world_size): for checks that must come before any output exists.
int checked_world_size(const std::string& backend, int ranks);

}  // namespace gcb
