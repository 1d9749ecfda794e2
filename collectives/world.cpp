// World: threads in one process or one process per rank (MPI launch), the launch checks, and
// fault handling (threads: ThreadWorld abort; processes: MPI_Abort).
#include "collectives/world.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <thread>

#include "collectives/factory.hpp"
#include "collectives/gpu_choice.hpp"
#include "collectives/thread_communicator.hpp"
#include "core/error.hpp"
#include "core/gpu.hpp"
#include "core/hash.hpp"
#include "gcb/config.hpp"
#if GCB_HAVE_MPI
#include <mpi.h>

#include "collectives/mpi_communicator.hpp"
#endif
#if GCB_HAVE_NCCL
#include "collectives/nccl_communicator.hpp"
#endif

namespace gcb {

namespace {

std::optional<int> env_int(const std::function<const char*(const char*)>& getenv_fn, const char* name) {
  const char* v = getenv_fn(name);
  if (v == nullptr || *v == '\0') return std::nullopt;
  char* end = nullptr;
  const long x = std::strtol(v, &end, 10);
  if (end == v || *end != '\0' || x < 0 || x > 1'000'000) return std::nullopt;
  return static_cast<int>(x);
}

// What every rank tells every other rank during the launch checks (gathered as raw bytes).
struct RankRecord {
  uint64_t args_hash = 0;
  uint64_t host_hash = 0;
  uint64_t gpu_hash = 0;   // hash of the GPU UUID (0 on CPU)
  int32_t device = -1;
  int32_t device_count = 0;
  char host[64] = {};
};
static_assert(sizeof(RankRecord) == 96, "RankRecord is exchanged as raw bytes");

std::vector<RankRecord> gather_records(Communicator& comm, const RankRecord& mine) {
  std::vector<RankRecord> all(static_cast<size_t>(comm.size()));
  comm.all_gather(&mine, all.data(), sizeof(RankRecord), DType::i8);
  return all;
}

std::string host_of(const RankRecord& r) { return std::string(r.host, strnlen(r.host, sizeof(r.host))); }

struct Placement {
  int local_rank = 0, local_size = 1, nodes = 1;
};

// Local rank = how many lower ranks share my host; nodes = distinct hosts. Only the process
// (MPI) launch needs it, so builds without MPI would otherwise warn that it is unused.
[[maybe_unused]] Placement placement_of(const std::vector<RankRecord>& all, int rank) {
  Placement p;
  std::map<uint64_t, int> per_host;
  for (const auto& r : all) ++per_host[r.host_hash];
  p.nodes = static_cast<int>(per_host.size());
  const uint64_t mine = all[static_cast<size_t>(rank)].host_hash;
  p.local_size = per_host[mine];
  p.local_rank = 0;
  for (int r = 0; r < rank; ++r) p.local_rank += all[static_cast<size_t>(r)].host_hash == mine ? 1 : 0;
  return p;
}

// The same verdict on every rank: every check reads only gathered data.
void check_arguments(const std::vector<RankRecord>& all) {
  for (size_t r = 1; r < all.size(); ++r)
    if (all[r].args_hash != all[0].args_hash)
      throw UsageError(fmt::format(
          "rank {} on host {} was started with different arguments than rank 0 on host {} (argument hash "
          "{:016x} vs {:016x}); every rank must get the same command line",
          r, host_of(all[r]), host_of(all[0]), all[r].args_hash, all[0].args_hash));
}

void check_gpus(const std::vector<RankRecord>& all) {
  std::vector<GpuClaim> claims;
  for (size_t r = 0; r < all.size(); ++r) {
    if (all[r].device < 0)
      throw UsageError(fmt::format("rank {} on host {} has no GPU: the process sees {} devices "
                                   "(check CUDA_VISIBLE_DEVICES and --ntasks-per-node/--gpus-per-node)",
                                   r, host_of(all[r]), all[r].device_count));
    claims.push_back({all[r].host_hash, all[r].gpu_hash});
  }
  if (const auto dup = duplicate_gpu(claims)) {
    const auto [q, r] = *dup;
    throw UsageError(fmt::format("duplicate GPU: rank {} and rank {} on host {} both use the same GPU "
                                 "(device {} of {} / device {} of {} visible); NCCL ≤ 2.29 refuses two ranks per GPU",
                                 q, r, host_of(all[r]), all[q].device, all[q].device_count, all[r].device,
                                 all[r].device_count));
  }
}

RankRecord my_record(uint64_t args_hash) {
  RankRecord rec;
  rec.args_hash = args_hash;
  const std::string host = host_name();
  rec.host_hash = fnv1a64(host);
  std::memcpy(rec.host, host.data(), std::min(host.size(), sizeof(rec.host) - 1));
  rec.device_count = gpu::device_count();
  return rec;
}

// Fills device + gpu_hash for a rank: device_for_local_rank (gpu_choice.hpp) of what it sees.
void choose_gpu(RankRecord& rec, int local_rank) {
  const auto& devices = gpu::runtime().devices;
  rec.device = device_for_local_rank(local_rank, static_cast<int>(devices.size()));
  if (rec.device < 0) return;
  const auto& uuid = devices[static_cast<size_t>(rec.device)].uuid;
  rec.gpu_hash = fnv1a64(uuid) ^ static_cast<uint64_t>(uuid.empty() ? local_rank + 1 : 0);
}

std::array<std::byte, 128> new_nccl_id() {
#if GCB_HAVE_NCCL
  return NcclCommunicator::new_unique_id();
#else
  throw UsageError("the nccl backend was not built into this binary");
#endif
}

// The data communicator of a device backend (one GPU per rank), joined with the id rank 0 made.
std::unique_ptr<Communicator> make_device_comm(std::string_view backend, const std::array<std::byte, 128>& id,
                                               int size, int rank, int device, std::chrono::milliseconds timeout) {
  CommunicatorSpec spec;
  spec.backend = backend;
  spec.size = size;
  spec.rank = rank;
  spec.device = device;
  spec.nccl_unique_id = id;
  spec.timeout = timeout;
  return make_communicator(spec);
}

// --- threads -----------------------------------------------------------------------------------

int run_threads(const WorldOptions& o, const std::function<int(RankContext&)>& fn) {
  const bool nccl = communicator_backend(o.backend).memory == MemorySpace::device;
  int n = o.ranks;
  if (nccl) {
    const int gpus = gpu::device_count();
    if (gpus == 0)
      throw UsageError("the nccl backend needs a GPU: " + gpu::runtime().unavailable_reason);
    if (n == 0) n = gpus;
    if (n > gpus)
      throw UsageError(fmt::format("--ranks {} with the nccl backend needs {} GPUs; this host has {} "
                                   "(NCCL ≤ 2.29 refuses two ranks per GPU)", n, n, gpus));
  }
  if (n == 0) n = 1;
  if (n < 1 || n > 1024) throw UsageError(fmt::format("--ranks must be between 1 and 1024 (got {})", n));

  ThreadWorld world(n, o.timeout);
  std::vector<std::unique_ptr<ThreadCommunicator>> comms;
  for (int r = 0; r < n; ++r) comms.push_back(world.communicator(r));
  const std::array<std::byte, 128> nccl_id = nccl ? new_nccl_id() : std::array<std::byte, 128>{};

  int rank0_code = 0;
  const std::string host = host_name();
  auto body = [&](int r) {
    Communicator& host_comm = *comms[static_cast<size_t>(r)];
    RankRecord rec = my_record(hash_arguments(o.args_of_rank ? o.args_of_rank(r) : o.args));
    if (nccl) choose_gpu(rec, r);
    const auto all = gather_records(host_comm, rec);
    check_arguments(all);
    if (nccl) check_gpus(all);
    std::unique_ptr<Communicator> data;
    if (nccl) data = make_device_comm(o.backend, nccl_id, n, r, r, o.timeout);
    RankContext ctx{r, n, r, n, 1, nccl ? r : -1, host, false, data ? *data : host_comm, host_comm};
    const int code = fn(ctx);
    if (r == 0) rank0_code = code;
  };
  struct ActAsRankZero {  // afterwards this thread reports as rank 0, failure or not
    ~ActAsRankZero() { set_error_rank(0); }
  } act_as_rank_zero;
  run_rank_threads(world, body, " on host " + host);
  return rank0_code;
}

// --- processes ---------------------------------------------------------------------------------

#if GCB_HAVE_MPI
int run_processes(const WorldOptions& o, const LauncherInfo& launcher, const std::function<int(RankContext&)>& fn) {
  if (!communicator_backend(o.backend).spans_processes)
    throw UsageError(fmt::format("started by a launcher ({}={}) but --backend {} runs all ranks as threads of "
                                 "one process; use --backend mpi or nccl under mpirun/srun",
                                 launcher.source, launcher.size, o.backend));
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) {
    // MULTIPLE: `train --overlap` runs the dp collectives on a second thread of the rank
    // (models/comm_lane.hpp) while the rank's thread goes on with its tp and pp groups.
    // MpiCommunicator::thread_support() reports what was given.
    int provided = 0;
    MPI_CHECK(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_MULTIPLE, &provided));
  }
  struct Finalizer {
    bool own;
    ~Finalizer() {
      int finalized = 0;
      MPI_Finalized(&finalized);
      if (own && !finalized) MPI_Finalize();
    }
  } finalizer{!initialized};

  int size = 1, rank = 0;
  MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
  MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
  set_error_rank(rank);
  if (launcher.launched && size != launcher.size)
    throw UsageError(fmt::format(
        "the launcher started {} ranks ({}={}) but MPI sees {}: {}", launcher.size, launcher.source, launcher.size,
        size,
        size == 1 ? "every rank thinks it is rank 0 — gcbench was built against a different MPI than the one "
                    "running it (rebuild with the launcher's MPI, or use srun --mpi=pmix with a PMIx-enabled MPI)"
                  : "the launcher and the MPI library disagree"));

  MpiCommunicator host_comm(MPI_COMM_WORLD, false, o.reduction_order);
  std::unique_ptr<Communicator> data;
  RankRecord rec = my_record(hash_arguments(o.args));
  auto all = gather_records(host_comm, rec);
  check_arguments(all);
  const Placement p = placement_of(all, rank);
  const bool nccl = communicator_backend(o.backend).memory == MemorySpace::device;
  if (nccl) {
    choose_gpu(rec, p.local_rank);
    all = gather_records(host_comm, rec);
    check_gpus(all);
    std::array<std::byte, 128> id{};
    if (rank == 0) id = new_nccl_id();
    host_comm.broadcast(id.data(), id.data(), id.size(), DType::i8, 0);
    data = make_device_comm(o.backend, id, size, rank, rec.device, o.timeout);
  }
  RankContext ctx{rank, size, p.local_rank, p.local_size, p.nodes, nccl ? rec.device : -1, host_name(), true,
                  data ? *data : host_comm, host_comm};
  int code = 0;
  try {
    code = fn(ctx);
  } catch (const std::exception& e) {
    // One rank failing must end every rank now, not when the others time out.
    const bool usage = dynamic_cast<const UsageError*>(&e) != nullptr;
    std::fprintf(stderr, "gcbench: rank %d on host %s failed: %s\n", rank, ctx.host.c_str(), e.what());
    std::fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, usage ? kExitUsage : kExitFault);
  }
  // Every rank exits with rank 0's verdict.
  int32_t shared = code;
  host_comm.broadcast(&shared, &shared, 1, DType::i32, 0);
  data.reset();
  return shared;
}
#endif

}  // namespace

uint64_t hash_arguments(const std::vector<std::string>& args) {
  uint64_t h = kFnv1a64Basis;
  for (const auto& a : args) h = fnv1a64(std::string_view(a.c_str(), a.size() + 1), h);
  return h;
}

LauncherInfo detect_launcher(const std::function<const char*(const char*)>& getenv_fn) {
  LauncherInfo info;
  struct Source {
    const char* size;
    const char* rank;
    const char* local_rank;
    const char* local_size;
  };
  // Order: the most specific launcher first (Open MPI's mpirun, then PMI/PMIx, then srun).
  static constexpr Source kSources[] = {
      {"OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_SIZE"},
      {"PMI_SIZE", "PMI_RANK", "MPI_LOCALRANKID", "MPI_LOCALNRANKS"},
      {"SLURM_STEP_NUM_TASKS", "SLURM_PROCID", "SLURM_LOCALID", "SLURM_STEP_TASKS_PER_NODE"},
      {"SLURM_NTASKS", "SLURM_PROCID", "SLURM_LOCALID", "SLURM_NTASKS_PER_NODE"},
  };
  for (const auto& s : kSources) {
    const auto size = env_int(getenv_fn, s.size);
    const auto rank = env_int(getenv_fn, s.rank);
    if (!size || !rank || *size < 1) continue;
    // srun sets SLURM_PROCID only for the tasks it starts: a plain command inside an sbatch
    // script has SLURM_NTASKS but no SLURM_STEP_ID of a task step.
    if (std::string_view(s.size).starts_with("SLURM") && getenv_fn("SLURM_STEP_ID") == nullptr) continue;
    info.launched = true;
    info.size = *size;
    info.rank = *rank;
    info.local_rank = env_int(getenv_fn, s.local_rank).value_or(-1);
    info.local_size = env_int(getenv_fn, s.local_size).value_or(-1);
    info.source = s.size;
    return info;
  }
  return info;
}

LauncherInfo detect_launcher() {
  return detect_launcher([](const char* name) -> const char* { return std::getenv(name); });
}

bool world_is_processes() { return detect_launcher().launched; }

int run_world(const WorldOptions& o, const std::function<int(RankContext&)>& fn) {
  const CommunicatorBackend& backend = communicator_backend(o.backend);  // unknown: UsageError
  if (!backend.built()) throw UsageError(fmt::format("backend '{}' was not built into this binary", o.backend));
  const LauncherInfo launcher = detect_launcher();
  const bool processes = launcher.launched || backend.needs_processes;
#if GCB_HAVE_MPI
  if (processes) return run_processes(o, launcher, fn);
#else
  if (launcher.launched && launcher.size > 1)
    throw UsageError(fmt::format("started by a launcher with {} ranks ({}) but this gcbench was built without MPI: "
                                 "every rank would run alone; rebuild with MPI",
                                 launcher.size, launcher.source));
#endif
  (void)processes;
  return run_threads(o, fn);
}

}  // namespace gcb
