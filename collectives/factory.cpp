// The backend table. The only file that knows which backends were compiled in (GCB_HAVE_MPI /
// GCB_HAVE_NCCL come from the generated gcb/config.hpp).
#include "collectives/factory.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>

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
  GCB_CHECK(spec.thread_world != nullptr, "the threads backend needs a ThreadWorld shared by all rank threads");
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
  GCB_CHECK(spec.gloo_world != nullptr, "the gloo backend needs its world's store and transport device");
  return std::make_unique<GlooCommunicator>(spec.gloo_world, spec.gloo_prefix, spec.rank, spec.size,
                                            spec.reduction_order);
}
#else
constexpr std::unique_ptr<Communicator> (*make_gloo)(const CommunicatorSpec&) = nullptr;
#endif

#if GCB_HAVE_NCCL
// Rank 0 makes the ncclUniqueId and broadcasts it over the host communicator; every rank then
// joins with ncclCommInitRank (NCCL user guide, "Creating a Communicator").
std::unique_ptr<Communicator> make_nccl(const CommunicatorSpec& spec) {
  GCB_CHECK(spec.host != nullptr, "the nccl backend needs the world's host communicator to share its id");
  Communicator& host = *spec.host;
  std::array<std::byte, 128> id{};
  if (host.rank() == 0) id = NcclCommunicator::new_unique_id();
  host.broadcast(id.data(), id.data(), id.size(), DType::i8, 0);
  return std::make_unique<NcclCommunicator>(id, host.size(), host.rank(), spec.device, spec.timeout);
}
#else
constexpr std::unique_ptr<Communicator> (*make_nccl)(const CommunicatorSpec&) = nullptr;
#endif

}  // namespace

// mpi stays before gloo so that mpirun/srun with MPI keep their MPI default (and MPI as the host
// communicator of device rows); under a launch without MPI the rows that need MPI's world are
// skipped. The bootstrap column says how each row's ranks find each other (factory.hpp).
const std::vector<CommunicatorBackend>& communicator_backends() {
  static const std::vector<CommunicatorBackend> table = {
      {"threads", MemorySpace::host, Bootstrap::in_process, false, false,
       "memcpy through the ThreadCommunicator in one process (not a link)", "threads (in-process, shared memory)", "",
       make_threads},
      {"mpi", MemorySpace::host, Bootstrap::launcher_world, true, true, "MPI, host memory", "MPI", "MPI", make_mpi},
      {"gloo", MemorySpace::host, Bootstrap::launch_store, true, true, "Gloo over TCP, host memory", "Gloo",
       "Gloo (libgloo-dev)", make_gloo},
      {"nccl", MemorySpace::device, Bootstrap::over_host, true, false, "NCCL send/recv, device memory", "NCCL",
       "CUDA and NCCL", make_nccl},
  };
  return table;
}

std::string_view bootstrap_name(Bootstrap b) {
  switch (b) {
    case Bootstrap::in_process: return "in-process";
    case Bootstrap::launcher_world: return "the launcher's MPI world";
    case Bootstrap::launch_store: return "the launch's store";
    case Bootstrap::over_host: return "over the host communicator";
  }
  GCB_CHECK(false, "unknown Bootstrap value");
  return "";
}

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

void require_built(const CommunicatorBackend& b) {
  if (!b.built())
    throw UsageError(
        fmt::format("communicator backend '{}' was not built into this binary (built: {}); "
                    "reconfigure with {} available",
                    b.name, fmt::join(built_communicator_backends(), ", "), b.needs));
}

std::unique_ptr<Communicator> make_communicator(const CommunicatorSpec& spec) {
  const CommunicatorBackend& b = communicator_backend(spec.backend);
  require_built(b);
  GCB_CHECK(b.bootstrap != Bootstrap::over_host || spec.host == nullptr || spec.host->memory() == MemorySpace::host,
            "the host communicator of a spec moves host memory");
  return b.make(spec);
}

std::string_view communicator_for(MemorySpace memory, bool processes) {
  const bool without_mpi = processes && world_launched_without_mpi();
  for (const CommunicatorBackend& b : communicator_backends()) {
    if (without_mpi && !b.runs_without_mpi()) continue;
    if (b.built() && b.memory == memory && (processes ? b.spans_processes : !b.needs_processes)) return b.name;
  }
  throw UsageError(fmt::format("no communicator backend built into this binary moves {} memory {}",
                               memory_space_name(memory), processes ? "between processes" : "within one process"));
}

const CommunicatorBackend& host_communicator_for(const CommunicatorBackend& data, bool processes, bool without_mpi) {
  if (data.starts_world()) return data;
  const auto fits = [&](const CommunicatorBackend& b) {
    return b.starts_world() && b.memory == MemorySpace::host && (processes ? b.spans_processes : !b.needs_processes) &&
           (!without_mpi || b.runs_without_mpi());
  };
  for (const CommunicatorBackend& b : communicator_backends())
    if (b.built() && fits(b)) return b;
  // None built: the rows that could have been the host, and what to reconfigure with.
  std::vector<std::string> could;
  for (const CommunicatorBackend& b : communicator_backends())
    if (fits(b)) could.push_back(fmt::format("{} ({}; needs {})", b.name, bootstrap_name(b.bootstrap), b.needs));
  throw UsageError(fmt::format(
      "--backend {} meets {} over a host communicator, but this gcbench was built with none that fits the launch{}; "
      "reconfigure with one of: {}",
      data.name, processes ? "ranks of different processes" : "its rank threads",
      without_mpi ? " (started without MPI)" : "",
      could.empty() ? std::string("none known") : fmt::format("{}", fmt::join(could, ", "))));
}

std::string backends_for_processes(bool without_mpi) {
  std::vector<std::string_view> names;
  for (const CommunicatorBackend& b : communicator_backends())
    if (b.built() && b.spans_processes && (!without_mpi || b.runs_without_mpi())) names.push_back(b.name);
  return fmt::format("{}", fmt::join(names, " or "));
}

}  // namespace gcb
