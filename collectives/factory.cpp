// The backend table. The only file that knows which backends were compiled in (GCB_HAVE_MPI /
// GCB_HAVE_NCCL come from the generated gcb/config.hpp).
#include "collectives/factory.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "collectives/thread_communicator.hpp"
#include "core/error.hpp"
#include "gcb/config.hpp"
#if GCB_HAVE_MPI
#include "collectives/mpi_communicator.hpp"
#endif
#if GCB_HAVE_GLOO
#include "collectives/gloo_communicator.hpp"
#endif
#if GCB_HAVE_NCCL
#include "collectives/nccl_communicator.hpp"
#endif
#include "collectives/world.hpp"

namespace gcb {

namespace {

std::unique_ptr<Communicator> make_threads(const CommunicatorSpec& spec) {
  if (spec.thread_world == nullptr)
    throw UsageError("the threads backend needs a ThreadWorld shared by all rank threads");
  return spec.thread_world->communicator(spec.rank);
}

#if GCB_HAVE_MPI
std::unique_ptr<Communicator> make_mpi(const CommunicatorSpec& spec) {
  return std::make_unique<MpiCommunicator>(MPI_COMM_WORLD, false, spec.reduction_order);
}
#else
constexpr std::unique_ptr<Communicator> (*make_mpi)(const CommunicatorSpec&) = nullptr;
#endif

#if GCB_HAVE_GLOO
std::unique_ptr<Communicator> make_gloo(const CommunicatorSpec& spec) {
  if (!spec.gloo_world) throw UsageError("the gloo backend needs its world's store and transport device");
  return std::make_unique<GlooCommunicator>(spec.gloo_world, spec.gloo_prefix, spec.rank, spec.size,
                                            spec.reduction_order);
}
#else
constexpr std::unique_ptr<Communicator> (*make_gloo)(const CommunicatorSpec&) = nullptr;
#endif

#if GCB_HAVE_NCCL
std::unique_ptr<Communicator> make_nccl(const CommunicatorSpec& spec) {
  return std::make_unique<NcclCommunicator>(spec.nccl_unique_id, spec.size, spec.rank, spec.device, spec.timeout);
}
#else
constexpr std::unique_ptr<Communicator> (*make_nccl)(const CommunicatorSpec&) = nullptr;
#endif

}  // namespace

// How each row's ranks find each other (its bootstrap; a later column of the table):
//   threads  in-process: the ThreadWorld all rank threads share;
//   mpi      the launcher's world: MPI_Init under mpirun/srun, MPI_COMM_WORLD;
//   gloo     an out-of-band store: rank 0 serves it at MASTER_ADDR:MASTER_PORT (torchrun,
//            Kubernetes, srun without MPI; collectives/tcp_store.hpp), Gloo's full mesh through it;
//   nccl     an id over the host communicator: rank 0's ncclUniqueId broadcast over MPI, or set
//            in the store under a launch without MPI (collectives/world.cpp).
// mpi stays before gloo so that mpirun/srun with MPI keep their MPI default; under a launch
// without MPI communicator_for skips the rows that need MPI's world.
const std::vector<CommunicatorBackend>& communicator_backends() {
  static const std::vector<CommunicatorBackend> table = {
      {"threads", MemorySpace::host, false, false, "memcpy through the ThreadCommunicator in one process (not a link)",
       "threads (in-process, shared memory)", "", make_threads},
      {"mpi", MemorySpace::host, true, true, "MPI, host memory", "MPI", "MPI", make_mpi},
      {"gloo", MemorySpace::host, true, true, "Gloo over TCP, host memory", "Gloo", "Gloo (libgloo-dev)", make_gloo},
      {"nccl", MemorySpace::device, true, false, "NCCL send/recv, device memory", "NCCL", "CUDA and NCCL", make_nccl},
  };
  return table;
}

// The stand-in for the bootstrap column: this table is the one place that names backends.
bool communicator_needs_mpi_launch(std::string_view name) { return communicator_backend(name).name == "mpi"; }

std::string communicator_backend_names() {
  std::vector<std::string_view> known;
  for (const auto& b : communicator_backends()) known.push_back(b.name);
  return fmt::format("{}", fmt::join(known, ", "));
}

bool communicator_backend_known(std::string_view name) {
  const auto& table = communicator_backends();
  return std::any_of(table.begin(), table.end(), [name](const auto& b) { return b.name == name; });
}

const CommunicatorBackend& communicator_backend(std::string_view name) {
  const auto& table = communicator_backends();
  const auto it = std::find_if(table.begin(), table.end(), [name](const auto& b) { return b.name == name; });
  if (it == table.end())
    throw UsageError(fmt::format("unknown communicator backend '{}' (known: {})", name, communicator_backend_names()));
  return *it;
}

std::string library_label(std::string_view library, std::string_view version) {
  if (version.empty()) return std::string(library);
  if (version.find(library) != std::string_view::npos) return std::string(version);
  return fmt::format("{} {}", library, version);
}

std::vector<std::string_view> built_communicator_backends() {
  std::vector<std::string_view> names;
  for (const auto& b : communicator_backends())
    if (b.built()) names.push_back(b.name);
  return names;
}

bool communicator_backend_built(std::string_view name) {
  const auto& table = communicator_backends();
  return std::any_of(table.begin(), table.end(), [name](const auto& b) { return b.name == name && b.built(); });
}

std::unique_ptr<Communicator> make_communicator(const CommunicatorSpec& spec) {
  const CommunicatorBackend& b = communicator_backend(spec.backend);
  if (!b.built())
    throw UsageError(
        fmt::format("communicator backend '{}' was not built into this binary (built: {}); "
                    "reconfigure with {} available",
                    spec.backend, fmt::join(built_communicator_backends(), ", "), b.needs));
  return b.make(spec);
}

std::string_view communicator_for(MemorySpace memory, bool processes) {
  const bool without_mpi = processes && world_launched_without_mpi();
  for (const CommunicatorBackend& b : communicator_backends()) {
    if (without_mpi && communicator_needs_mpi_launch(b.name)) continue;
    if (b.built() && b.memory == memory && (processes ? b.spans_processes : !b.needs_processes)) return b.name;
  }
  throw UsageError(fmt::format("no communicator backend built into this binary moves {} memory {}",
                               memory_space_name(memory), processes ? "between processes" : "within one process"));
}

}  // namespace gcb
