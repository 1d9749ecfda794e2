// The World of the rank-against-rank families (rank_world.hpp): default_coll_backend, the default number of rank
// threads, and World options and sizes checked before anything starts.
#include "collectives/rank_world.hpp"

#include <sched.h>

#include <algorithm>
#include <chrono>
#include <thread>

#include "collectives/factory.hpp"
#include "core/error.hpp"
#include "core/gpu.hpp"

namespace gcb {

// Device memory when GPUs exist and a device backend is built, else host memory; one that spans
// processes under a launcher, else one of this process.
std::string default_coll_backend() {
  const bool processes = world_is_processes();
  if (gpu::device_count() > 0) {
    try {
      return std::string(communicator_for(MemorySpace::device, processes));
    } catch (const UsageError&) {  // no device backend built: measure host memory
    }
  }
  try {
    return std::string(communicator_for(MemorySpace::host, processes));
  } catch (const UsageError&) {  // under a launcher without MPI: the World says why
    return std::string(communicator_backends().front().name);
  }
}

int default_host_rank_threads() {
  int cpus = 0;
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0) cpus = CPU_COUNT(&set);
  if (cpus <= 0) cpus = static_cast<int>(std::thread::hardware_concurrency());
  return std::clamp(cpus, 2, 4);
}

namespace {

WorldOptions checked_world_options(const std::string& backend, int ranks, double timeout_s) {
  WorldOptions w;
  w.backend = backend.empty() ? default_coll_backend() : backend;
  w.ranks = ranks;
  // An in-process host backend has no launcher or GPU count to size it: default_host_rank_threads.
  const CommunicatorBackend& b = communicator_backend(w.backend);
  if (w.ranks == 0 && !b.spans_processes && b.memory == MemorySpace::host) w.ranks = default_host_rank_threads();
  w.timeout = std::chrono::milliseconds(static_cast<long long>(timeout_s * 1e3));
  return w;
}

}  // namespace

int checked_world_size(const std::string& backend, int ranks) {
  return planned_world_size(checked_world_options(backend, ranks, 1));
}

int run_checked_world(const std::string& backend, int ranks, double timeout_s, const std::vector<std::string>& args,
                      const std::function<uint64_t(RankContext&)>& fn) {
  WorldOptions w = checked_world_options(backend, ranks, timeout_s);
  w.args = args;
  // The MPI library's own collectives are what a user of these families measures; their inputs
  // are small integers, so any summation order gives the exact reference (verifiable_case.hpp).
  w.reduction_order = ReductionOrder::library;
  return run_world(w, [&](RankContext& ctx) { return fn(ctx) > 0 ? kExitVerifyFailed : kExitOk; });
}

}  // namespace gcb
