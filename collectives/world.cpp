// World: the world the host communicator's row starts (its bootstrap: threads in one process, MPI's
// launcher world, the launch's store), every communicator made from its row, the launch checks, and
// fault handling (threads: ThreadWorld abort; MPI: MPI_Abort; the store: the process exits).
#include "collectives/world.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <thread>

#include <unistd.h>

#include "collectives/factory.hpp"
#include "collectives/gpu_choice.hpp"
#include "collectives/thread_communicator.hpp"
#include "core/error.hpp"
#include "core/gpu.hpp"
#include "core/hash.hpp"
#include "core/interrupt.hpp"
#include "core/watchdog.hpp"
#include "gcb/config.hpp"
#if GCB_HAVE_MPI
#include <mpi.h>
#endif
#if GCB_HAVE_GLOO
#include <gloo/common/error.h>
#include <gloo/rendezvous/hash_store.h>
#include <gloo/transport/tcp/device.h>

#include "collectives/gloo_communicator.hpp"
#include "collectives/tcp_store.hpp"
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
  uint64_t gpu_hash = 0;  // hash of the GPU UUID (0 on CPU)
  int32_t device = -1;
  int32_t device_count = 0;
  char host[64] = {};
  int32_t pid = 0;  // for the watchdog's report on a rank that stopped answering
  int32_t unused = 0;
};
static_assert(sizeof(RankRecord) == 104, "RankRecord is exchanged as raw bytes");

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
      throw UsageError(
          fmt::format("rank {} on host {} was started with different arguments than rank 0 on host {} (argument hash "
                      "{:016x} vs {:016x}); every rank must get the same command line",
                      r, host_of(all[r]), host_of(all[0]), all[r].args_hash, all[0].args_hash));
}

void check_gpus(const std::vector<RankRecord>& all) {
  std::vector<GpuClaim> claims;
  for (size_t r = 0; r < all.size(); ++r) {
    if (all[r].device < 0)
      throw UsageError(
          fmt::format("rank {} on host {} has no GPU: the process sees {} devices "
                      "(check CUDA_VISIBLE_DEVICES and --ntasks-per-node/--gpus-per-node)",
                      r, host_of(all[r]), all[r].device_count));
    claims.push_back({all[r].host_hash, all[r].gpu_hash});
  }
  if (const auto dup = duplicate_gpu(claims)) {
    const auto [q, r] = *dup;
    throw UsageError(
        fmt::format("duplicate GPU: rank {} and rank {} on host {} both use the same GPU "
                    "(device {} of {} / device {} of {} visible); NCCL ≤ 2.29 refuses two ranks per GPU",
                    q, r, host_of(all[r]), all[q].device, all[q].device_count, all[r].device, all[r].device_count));
  }
}

RankRecord my_record(uint64_t args_hash) {
  RankRecord rec;
  rec.args_hash = args_hash;
  const std::string host = host_name();
  rec.host_hash = fnv1a64(host);
  std::memcpy(rec.host, host.data(), std::min(host.size(), sizeof(rec.host) - 1));
  rec.device_count = gpu::device_count();
  rec.pid = static_cast<int32_t>(getpid());
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

// The data communicator of a world whose host communicator is `host`: none when the data row is
// the one that started the world (the host communicator is then the data communicator too), else
// made from its row over `host` (its bootstrap is over_host: an id or an exchange through it).
std::unique_ptr<Communicator> make_data_comm(const CommunicatorBackend& data, Communicator& host, int device,
                                             const WorldOptions& o) {
  if (data.starts_world()) return nullptr;
  CommunicatorSpec spec;
  spec.backend = data.name;
  spec.rank = host.rank();
  spec.size = host.size();
  spec.device = device;
  spec.host = &host;
  spec.reduction_order = o.reduction_order;
  spec.timeout = o.timeout;
  return make_communicator(spec);
}

// Arms the process watchdog for the lifetime of one World.
struct WatchdogArming {
  WatchdogArming(std::chrono::milliseconds timeout, std::function<void(const WatchExpiry&)> action) {
    arm_watchdog(timeout, std::move(action));
  }
  ~WatchdogArming() { disarm_watchdog(); }
  WatchdogArming(const WatchdogArming&) = delete;
  WatchdogArming& operator=(const WatchdogArming&) = delete;
};

// The state of a process on this host from /proc/<pid>/stat ("" when it is running or sleeping).
[[maybe_unused]] std::string unusual_state(int pid) {
  std::FILE* f = std::fopen(fmt::format("/proc/{}/stat", pid).c_str(), "r");
  if (f == nullptr) return "has exited";
  char buf[512] = {};
  const size_t n = std::fread(buf, 1, sizeof(buf) - 1, f);
  std::fclose(f);
  const std::string stat(buf, n);
  const size_t paren = stat.rfind(')');  // the command name may hold spaces and parentheses
  const char state = paren != std::string::npos && paren + 2 < stat.size() ? stat[paren + 2] : '?';
  switch (state) {
    case 'T': return "is stopped (SIGSTOP)";
    case 't': return "is stopped by a debugger";
    case 'Z':
    case 'X': return "has exited";
    case 'D': return "is blocked in uninterruptible I/O";
    default: return "";
  }
}

// Which ranks the others are waiting for, as far as this host can see: same-host ranks that are
// stopped or gone (by /proc), and how many ranks live on other hosts (not inspected). A killed
// rank's sockets reset while the kernel is still tearing it down, before /proc shows it as a
// zombie: a peer that reads the reset first looks again for up to a second before it says that
// no rank is gone.
[[maybe_unused]] std::string describe_peers(const std::vector<RankRecord>& all, int me) {
  std::string found, remote;
  const uint64_t my_host = all[static_cast<size_t>(me)].host_hash;
  int remote_count = 0;
  for (int look = 0; look < 50 && found.empty(); ++look) {
    if (look > 0) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    remote_count = 0;
    for (size_t r = 0; r < all.size(); ++r) {
      if (static_cast<int>(r) == me) continue;
      if (all[r].host_hash != my_host) {
        ++remote_count;
        continue;
      }
      const std::string state = unusual_state(all[r].pid);
      if (!state.empty())
        found += fmt::format("{}rank {} (pid {}) {}", found.empty() ? "" : ", ", r, all[r].pid, state);
    }
  }
  if (found.empty()) found = "no rank on this host is stopped or gone (a rank is slow, deadlocked or elsewhere)";
  if (remote_count > 0) remote = fmt::format("; {} rank(s) on other hosts were not inspected", remote_count);
  return found + remote;
}

#if GCB_HAVE_MPI
// MPI may be initialised once per process and never again after MPI_Finalize, so the first
// World initialises it and the process finalises it at exit: every World of a sweep or a suite
// (train --sweep, run --suite) shares the one MPI_COMM_WORLD. A process that found MPI already
// initialised (a test's own main) leaves finalising to its owner.
void ensure_mpi_initialized() {
  static std::once_flag once;
  std::call_once(once, [] {
    int initialized = 0;
    MPI_Initialized(&initialized);
    if (initialized) return;
    // MULTIPLE: `train --overlap` runs the dp collectives on a second thread of the rank
    // (models/engine/comm/comm_lane.hpp) while the rank's thread goes on with its tp and pp groups.
    // MpiCommunicator::thread_support() reports what was given.
    int provided = 0;
    MPI_CHECK(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_MULTIPLE, &provided));
    std::atexit([] {
      int finalized = 0;
      MPI_Finalized(&finalized);
      if (!finalized) MPI_Finalize();
    });
  });
}

// The MPI watchdog's expiry action: the timeout line with `detail` on stderr, then MPI_Abort (the
// launcher ends every rank), or _exit while MPI is not up (the launcher then ends the others).
[[noreturn]] void end_every_rank(const WatchExpiry& e, const std::string& detail) {
  const std::string line = watchdog_message(e) + "; " + detail + "; ending every rank\n";
  std::fflush(stdout);
  std::fputs(line.c_str(), stderr);
  std::fflush(stderr);
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (initialized && !finalized) MPI_Abort(MPI_COMM_WORLD, kExitFault);
  _exit(kExitFault);
}

#endif

// --- threads -----------------------------------------------------------------------------------

int thread_world_size(const WorldOptions& o) {
  int n = o.ranks;
  if (communicator_backend(o.backend).memory == MemorySpace::device) {
    const int gpus = gpu::device_count();
    if (gpus == 0)
      throw UsageError(fmt::format("the {} backend needs a GPU: {}", o.backend, gpu::runtime().unavailable_reason));
    if (n == 0) n = gpus;
    if (n > gpus)
      throw UsageError(
          fmt::format("--ranks {} with the {} backend needs {} GPUs, one per rank; this host has {} "
                      "(NCCL ≤ 2.29 refuses two ranks per GPU)",
                      n, o.backend, n, gpus));
  }
  if (n == 0) n = 1;
  if (n < 1 || n > 1024) throw UsageError(fmt::format("--ranks must be between 1 and 1024 (got {})", n));
  return n;
}

// The world of an in_process host row: its shared state, made once, and one host communicator
// per rank thread from the row.
int run_threads(const WorldOptions& o, const CommunicatorBackend& host_row,
                const std::function<int(RankContext&)>& fn) {
  const CommunicatorBackend& data_row = communicator_backend(o.backend);
  const bool on_gpus = data_row.memory == MemorySpace::device;
  const int n = thread_world_size(o);
  ThreadWorld world(n, o.timeout);
  std::vector<std::unique_ptr<Communicator>> comms;
  for (int r = 0; r < n; ++r) {
    CommunicatorSpec spec;
    spec.backend = host_row.name;
    spec.rank = r;
    spec.size = n;
    spec.thread_world = &world;
    spec.reduction_order = o.reduction_order;
    spec.timeout = o.timeout;
    comms.push_back(make_communicator(spec));
  }

  int rank0_code = 0;
  const std::string host = host_name();
  auto body = [&](int r) {
    Communicator& host_comm = *comms[static_cast<size_t>(r)];
    RankRecord rec = my_record(hash_arguments(o.args_of_rank ? o.args_of_rank(r) : o.args));
    if (on_gpus) choose_gpu(rec, r);
    const auto all = gather_records(host_comm, rec);
    check_arguments(all);
    if (on_gpus) check_gpus(all);
    // One GPU per rank thread (the local rank's, gpu_choice.hpp): each thread makes its own data
    // communicator over the host one (NCCL: ncclCommInitRank with the id rank 0 broadcast) — NCCL
    // user guide, "Examples: One Device per Process or Thread" and "Creating a Communicator"
    // (ncclCommInitAll would make every rank's communicator on one thread; "Thread Safety" wants
    // one communicator per thread anyway).
    const std::unique_ptr<Communicator> data = make_data_comm(data_row, host_comm, rec.device, o);
    RankContext ctx{r, n, r, n, 1, on_gpus ? rec.device : -1, host, false, data ? *data : host_comm, host_comm};
    spread_rank_threads(host_comm);
    const int code = fn(ctx);
    if (r == 0) rank0_code = code;
  };
  struct ActAsRankZero {  // afterwards this thread reports as rank 0, failure or not
    ~ActAsRankZero() { set_error_rank(0); }
  } act_as_rank_zero;
  const WatchdogArming watchdog(o.timeout, [](const WatchExpiry& e) { exit_on_expiry(e); });
  run_rank_threads(world, body, " on host " + host);
  return rank0_code;
}

// --- processes ---------------------------------------------------------------------------------

#if GCB_HAVE_MPI
// The world of a launcher_world host row (MPI's): MPI_Init, then the host communicator from the row.
int run_processes(const WorldOptions& o, const CommunicatorBackend& host_row, const LauncherInfo& launcher,
                  const std::function<int(RankContext&)>& fn) {
  const CommunicatorBackend& data_row = communicator_backend(o.backend);
  GCB_CHECK(data_row.spans_processes, "planned_world_size refuses an in-process backend under a launcher");
  // Until every rank has joined (MPI_Init, then the exchange of rank records) no rank knows its
  // peers' pids: a peer stopped or lost that early is reported as such, and the rank ends itself
  // (MPI_Abort once MPI is up, _exit before; the launcher then ends the others).
  if (launcher.launched) set_error_rank(launcher.rank);
  const WatchdogArming watchdog(o.timeout, [](const WatchExpiry& e) {
    end_every_rank(e, "not every rank joined (one is stopped, gone or slow to start)");
  });
  {
    const WatchScope watch("MPI_Init");
    ensure_mpi_initialized();
  }
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

  CommunicatorSpec host_spec;
  host_spec.backend = host_row.name;
  host_spec.rank = rank;
  host_spec.size = size;
  host_spec.reduction_order = o.reduction_order;
  host_spec.timeout = o.timeout;
  const std::unique_ptr<Communicator> host = make_communicator(host_spec);
  Communicator& host_comm = *host;
  RankRecord rec = my_record(hash_arguments(o.args));
  auto all = gather_records(host_comm, rec);
  check_arguments(all);
  const Placement p = placement_of(all, rank);
  const bool on_gpus = data_row.memory == MemorySpace::device;
  if (on_gpus) {
    choose_gpu(rec, p.local_rank);
    all = gather_records(host_comm, rec);
    check_gpus(all);
  }
  std::unique_ptr<Communicator> data = make_data_comm(data_row, host_comm, rec.device, o);
  RankContext ctx{rank,         size,    p.local_rank,
                  p.local_size, p.nodes, on_gpus ? rec.device : -1,
                  host_name(),  true,    data ? *data : host_comm,
                  host_comm};
  // From here a rank blocked in MPI longer than the timeout ends every rank, naming the ranks on
  // this host that stopped or exited: MPI itself would wait forever for a stopped peer.
  arm_watchdog(o.timeout, [all, rank](const WatchExpiry& e) { end_every_rank(e, describe_peers(all, rank)); });
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

// --- processes started without MPI: the store ---------------------------------------------------

#if GCB_HAVE_GLOO
// One store and one Gloo transport device per process, for every World of a sweep or a suite;
// each World connects its meshes under a prefix of its own ("world0", "world1", ...), so every
// rank must start the same Worlds in the same order (the same command line, checked). Left to
// the process's end: rank 0's server answers until the last rank is done with it.
struct StoreLaunch {
  std::shared_ptr<GlooWorld> world;
  int worlds = 0;
};

StoreLaunch* g_store_launch = nullptr;

StoreLaunch* store_launch_if_started() { return g_store_launch; }

StoreLaunch& store_launch(const LauncherInfo& l, std::chrono::milliseconds timeout) {
  StoreLaunch*& launch = g_store_launch;
  if (launch != nullptr) return *launch;
  auto w = std::make_shared<GlooWorld>();
  w->timeout = timeout;
  std::string address = "127.0.0.1";
  if (l.size <= 1) {
    w->store = std::make_shared<gloo::rendezvous::HashStore>();
  } else {
    if (l.store_host.empty())
      throw UsageError(
          fmt::format("{} ranks started without MPI ({}={}) but no store address: set MASTER_ADDR (and "
                      "MASTER_PORT) to rank 0's host on every rank",
                      l.size, l.source, l.size));
    w->store = std::make_shared<TcpStore>(l.store_host, l.store_port, l.rank == 0, timeout);
    // Gloo listens where this host reaches the store from, so peers on the store's network reach
    // it too; GLOO_SOCKET_IFNAME (PyTorch's variable) names an interface instead.
    if (const std::string towards = local_address_towards(l.store_host); !towards.empty()) address = towards;
  }
  const char* iface = std::getenv("GLOO_SOCKET_IFNAME");
  if (iface != nullptr && *iface != '\0') {
    gloo::transport::tcp::attr attr;
    attr.iface = iface;
    try {
      w->device = gloo::transport::tcp::CreateDevice(attr);
    } catch (const gloo::Exception& e) {
      throw UsageError(fmt::format("GLOO_SOCKET_IFNAME={}: {}", iface, e.what()));
    }
  } else {
    w->device = gloo_tcp_device(address);
  }
  launch = new StoreLaunch{std::move(w), 0};
  return *launch;
}

// The world of a launch_store host row: the launch's store, then the host communicator from the row.
int run_store_processes(const WorldOptions& o, const CommunicatorBackend& host_row, const LauncherInfo& launcher,
                        const std::function<int(RankContext&)>& fn) {
  const int size = launcher.launched ? launcher.size : 1, rank = launcher.launched ? launcher.rank : 0;
  set_error_rank(rank);
  // Until every rank has joined no rank knows its peers' pids: one that is stopped or lost that
  // early leaves the others waiting at the store or in Gloo's connect, which the watchdog ends.
  const WatchdogArming watchdog(o.timeout, [](const WatchExpiry& e) {
    exit_on_expiry(e, "; not every rank joined the store (one is stopped, gone or slow to start)");
  });
  LauncherInfo l = launcher;
  l.size = size;
  l.rank = rank;
  StoreLaunch& launch = store_launch(l, o.timeout);
  const std::string prefix = fmt::format("world{}", launch.worlds++);
  std::unique_ptr<Communicator> host;
  {
    const WatchScope watch("the store rendezvous");
    CommunicatorSpec host_spec;
    host_spec.backend = host_row.name;
    host_spec.rank = rank;
    host_spec.size = size;
    host_spec.gloo_world = launch.world;
    host_spec.gloo_prefix = prefix;
    host_spec.reduction_order = o.reduction_order;
    host_spec.timeout = o.timeout;
    host = make_communicator(host_spec);
  }
  Communicator& host_comm = *host;
  RankRecord rec = my_record(hash_arguments(o.args));
  auto all = gather_records(host_comm, rec);
  check_arguments(all);
  const Placement p = placement_of(all, rank);
  const CommunicatorBackend& data_row = communicator_backend(o.backend);
  const bool on_gpus = data_row.memory == MemorySpace::device;
  if (on_gpus) {
    choose_gpu(rec, p.local_rank);
    all = gather_records(host_comm, rec);
    check_gpus(all);
  }
  std::unique_ptr<Communicator> data = make_data_comm(data_row, host_comm, rec.device, o);
  RankContext ctx{rank,         size,    p.local_rank,
                  p.local_size, p.nodes, on_gpus ? rec.device : -1,
                  host_name(),  true,    data ? *data : host_comm,
                  host_comm};
  // From here a rank blocked longer than the timeout ends its process, naming the ranks on this
  // host that stopped or exited; its closed connections end the others.
  arm_watchdog(o.timeout, [all, rank](const WatchExpiry& e) { exit_on_expiry(e, "; " + describe_peers(all, rank)); });
  int code = 0;
  try {
    code = fn(ctx);
  } catch (const std::exception& e) {
    // Ending this process closes its connections, which ends every peer's next Gloo call.
    const bool usage = dynamic_cast<const UsageError*>(&e) != nullptr;
    const std::string peers = usage ? std::string() : "; " + describe_peers(all, rank);
    std::fflush(stdout);
    std::fprintf(stderr, "gcbench: rank %d on host %s failed: %s%s\n", rank, ctx.host.c_str(), e.what(), peers.c_str());
    std::fflush(stderr);
    _exit(usage ? kExitUsage : kExitFault);
  }
  int32_t shared = code;
  host_comm.broadcast(&shared, &shared, 1, DType::i32, 0);
  host_comm.barrier();
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
  // Order: the most specific launcher first (Open MPI's mpirun, then PMI/PMIx, then srun), and
  // torchrun's variables last: MPI launchers do not set them, but a user may export RANK.
  static constexpr Source kSources[] = {
      {"OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_SIZE"},
      {"PMI_SIZE", "PMI_RANK", "MPI_LOCALRANKID", "MPI_LOCALNRANKS"},
      {"SLURM_STEP_NUM_TASKS", "SLURM_PROCID", "SLURM_LOCALID", "SLURM_STEP_TASKS_PER_NODE"},
      {"SLURM_NTASKS", "SLURM_PROCID", "SLURM_LOCALID", "SLURM_NTASKS_PER_NODE"},
      {"WORLD_SIZE", "RANK", "LOCAL_RANK", "LOCAL_WORLD_SIZE"},
  };
  for (const auto& s : kSources) {
    const auto size = env_int(getenv_fn, s.size);
    const auto rank = env_int(getenv_fn, s.rank);
    if (!size || !rank || *size < 1) continue;
    // srun sets SLURM_PROCID only for the tasks it starts: a plain command inside an sbatch
    // script has SLURM_NTASKS but no SLURM_STEP_ID of a task step.
    const bool slurm = std::string_view(s.size).starts_with("SLURM");
    if (slurm && getenv_fn("SLURM_STEP_ID") == nullptr) continue;
    info.launched = true;
    info.size = *size;
    info.rank = *rank;
    info.local_rank = env_int(getenv_fn, s.local_rank).value_or(-1);
    info.local_size = env_int(getenv_fn, s.local_size).value_or(-1);
    info.source = s.size;
    // srun --mpi=none exports SLURM_MPI_TYPE=none to its tasks (srun(1), "--mpi"): no PMI to
    // bootstrap MPI from, so such tasks meet through the store too.
    const char* mpi_type = getenv_fn("SLURM_MPI_TYPE");
    const bool srun_without_mpi = slurm && mpi_type != nullptr && std::string_view(mpi_type) == "none";
    info.without_mpi = std::string_view(s.size) == "WORLD_SIZE" || srun_without_mpi || !GCB_HAVE_MPI;
    // The store of a launch without MPI (also what --backend gloo meets through under mpirun):
    // torchrun's MASTER_ADDR/MASTER_PORT; under srun the first host of the job and a port of the
    // job, so two jobs sharing a first node do not collide.
    const char* addr = getenv_fn("MASTER_ADDR");
    if (addr != nullptr && *addr != '\0') {
      info.store_host = addr;
    } else if (slurm) {
      const char* nodes = getenv_fn("SLURM_STEP_NODELIST");
      if (nodes == nullptr) nodes = getenv_fn("SLURM_JOB_NODELIST");
      if (nodes != nullptr) info.store_host = first_slurm_host(nodes);
    }
    info.store_port = env_int(getenv_fn, "MASTER_PORT").value_or(29500);
    if (getenv_fn("MASTER_PORT") == nullptr && slurm)
      info.store_port = 29500 + env_int(getenv_fn, "SLURM_JOB_ID").value_or(0) % 1000;
    return info;
  }
  return info;
}

std::string first_slurm_host(const std::string& nodelist) {
  // The first entry ends at a comma outside brackets; a bracket's first range starts with the
  // first number, kept with its leading zeros ("node[07-09]" -> "node07").
  std::string out;
  for (size_t i = 0; i < nodelist.size(); ++i) {
    const char c = nodelist[i];
    if (c == ',') break;
    if (c == '[') {
      size_t j = i + 1;
      while (j < nodelist.size() && std::isdigit(static_cast<unsigned char>(nodelist[j]))) out += nodelist[j++];
      const size_t close = nodelist.find(']', i);
      if (close == std::string::npos) return out;
      i = close;
      continue;
    }
    out += c;
  }
  return out;
}

bool world_launched_without_mpi() { return detect_launcher().without_mpi; }

LauncherInfo detect_launcher() {
  return detect_launcher([](const char* name) -> const char* { return std::getenv(name); });
}

bool world_is_processes() { return detect_launcher().launched; }

namespace {

// The host communicator's row of the world run_world would start for `o` under `launcher`.
const CommunicatorBackend& host_row_of(const WorldOptions& o, const LauncherInfo& launcher) {
  const CommunicatorBackend& data = communicator_backend(o.backend);
  return host_communicator_for(data, launcher.launched || data.needs_processes, launcher.without_mpi);
}

}  // namespace

int planned_world_size(const WorldOptions& o) {
  const CommunicatorBackend& backend = communicator_backend(o.backend);  // unknown: UsageError
  require_built(backend);
  const LauncherInfo launcher = detect_launcher();
  if (launcher.launched && !backend.spans_processes)
    throw UsageError(
        fmt::format("started by a launcher ({}={}) but --backend {} runs all ranks as threads of one "
                    "process; use --backend {}",
                    launcher.source, launcher.size, o.backend, backends_for_processes(launcher.without_mpi)));
  if (launcher.without_mpi && !backend.runs_without_mpi())
    throw UsageError(fmt::format(
        "--backend {} meets through {}, which needs mpirun or srun with MPI; these ranks were started "
        "without MPI ({}={}): use --backend {}",
        o.backend, bootstrap_name(backend.bootstrap), launcher.source, launcher.size, backends_for_processes(true)));
  const CommunicatorBackend& host = host_row_of(o, launcher);  // none built that fits: UsageError
  switch (host.bootstrap) {
    case Bootstrap::in_process: return thread_world_size(o);
    case Bootstrap::launcher_world: return launcher.launched ? launcher.size : 1;
    case Bootstrap::launch_store:
      if (launcher.launched && launcher.size > 1 && launcher.store_host.empty())
        throw UsageError(
            fmt::format("{} ranks started ({}={}) but no store address: set MASTER_ADDR (and MASTER_PORT) "
                        "to rank 0's host on every rank",
                        launcher.size, launcher.source, launcher.size));
      return launcher.launched ? launcher.size : 1;
    case Bootstrap::over_host: break;
  }
  GCB_CHECK(false, "host_communicator_for returns a row that starts its world");
  return 0;
}

#if GCB_HAVE_MPI
// MPI_COMM_WORLD's size while MPI runs; 0 before MPI_Init and after MPI_Finalize.
static int running_mpi_world_size() {
  int initialized = 0, finalized = 0, size = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (initialized && !finalized) MPI_Comm_size(MPI_COMM_WORLD, &size);
  return size;
}
#endif

int run_world(const WorldOptions& o, const std::function<int(RankContext&)>& fn) {
  (void)planned_world_size(o);  // every refusal before anything starts
  const LauncherInfo launcher = detect_launcher();
  // The world is the one the host communicator's row starts; the data communicator is made from
  // its own row inside it (make_data_comm).
  const CommunicatorBackend& host = host_row_of(o, launcher);
  switch (host.bootstrap) {
    case Bootstrap::in_process: return run_threads(o, host, fn);
    case Bootstrap::launcher_world:
#if GCB_HAVE_MPI
      return run_processes(o, host, launcher, fn);
#else
      break;
#endif
    case Bootstrap::launch_store:
#if GCB_HAVE_GLOO
      return run_store_processes(o, host, launcher, fn);
#else
      break;
#endif
    case Bootstrap::over_host: break;
  }
  GCB_CHECK(false, fmt::format("no world for the host row '{}' in this build", host.name));
  return 0;
}

void wait_for_writer_before_exit() {
#if GCB_HAVE_GLOO
  if (StoreLaunch* launch = store_launch_if_started(); launch != nullptr) {
    const LauncherInfo l = detect_launcher();
    if (!l.launched || l.size <= 1) return;
    try {
      if (l.rank == 0)
        launch->world->store->set("written", {1});
      else
        launch->world->store->wait({"written"});
    } catch (const std::exception&) {  // rank 0 gone or silent: nothing more to wait for
    }
    return;
  }
#endif
#if GCB_HAVE_MPI
  if (running_mpi_world_size() > 1) MPI_Barrier(MPI_COMM_WORLD);
#endif
}

int agreed_interrupt(RankContext& ctx, const std::string& running) {
  const int32_t mine = interrupt_signal();
  int32_t signo = 0;
  ctx.host_comm.all_reduce(&mine, &signo, 1, DType::i32, ReduceOp::max);
  if (signo != 0) record_stop(signo, running);  // on every rank: each one's Session exits 128 + signo
  return signo;
}

void abort_world_after_error(int exit_code) {
#if GCB_HAVE_MPI
  if (running_mpi_world_size() > 1) MPI_Abort(MPI_COMM_WORLD, exit_code);
#else
  (void)exit_code;
#endif
}

}  // namespace gcb
