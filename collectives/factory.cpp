// Backend selection by name. The only file that knows which backends were compiled in
// (GCB_HAVE_MPI / GCB_HAVE_NCCL come from collectives/CMakeLists.txt).
#include "collectives/factory.hpp"

#include <algorithm>
#include <fmt/format.h>

#include "collectives/thread_communicator.hpp"
#include "core/error.hpp"
#if GCB_HAVE_MPI
#include "collectives/mpi_communicator.hpp"
#endif
#if GCB_HAVE_NCCL
#include "collectives/nccl_communicator.hpp"
#endif

namespace gcb {

namespace {

constexpr std::array<std::string_view, 3> kKnownBackends{"threads", "mpi", "nccl"};

std::string known_list() { return fmt::format("{}", fmt::join(kKnownBackends, ", ")); }

}  // namespace

std::vector<std::string_view> built_communicator_backends() {
  std::vector<std::string_view> names{"threads"};
#if GCB_HAVE_MPI
  names.emplace_back("mpi");
#endif
#if GCB_HAVE_NCCL
  names.emplace_back("nccl");
#endif
  return names;
}

bool communicator_backend_built(std::string_view name) {
  const auto built = built_communicator_backends();
  return std::find(built.begin(), built.end(), name) != built.end();
}

std::unique_ptr<Communicator> make_communicator(const CommunicatorSpec& spec) {
  if (std::find(kKnownBackends.begin(), kKnownBackends.end(), spec.backend) == kKnownBackends.end())
    throw UsageError(fmt::format("unknown communicator backend '{}' (known: {})", spec.backend, known_list()));
  if (!communicator_backend_built(spec.backend))
    throw UsageError(fmt::format("communicator backend '{}' was not built into this binary (built: {}); "
                                 "reconfigure with {} available",
                                 spec.backend, fmt::join(built_communicator_backends(), ", "),
                                 spec.backend == "mpi" ? "MPI" : "CUDA and NCCL"));
  if (spec.backend == "threads") {
    if (spec.thread_world == nullptr)
      throw UsageError("the threads backend needs a ThreadWorld shared by all rank threads");
    return spec.thread_world->communicator(spec.rank);
  }
#if GCB_HAVE_MPI
  if (spec.backend == "mpi") return std::make_unique<MpiCommunicator>(MPI_COMM_WORLD, false, spec.reduction_order);
#endif
#if GCB_HAVE_NCCL
  if (spec.backend == "nccl")
    return std::make_unique<NcclCommunicator>(spec.nccl_unique_id, spec.size, spec.rank, spec.device,
                                              spec.timeout);
#endif
  throw UsageError(fmt::format("communicator backend '{}' is not available", spec.backend));
}

}  // namespace gcb
