// The one place Communicator backends are named ("threads", "mpi", "gloo", "nccl"): a table of what each
// backend is and how to make one. Adding a backend means: its file pair, one row in the table
// (factory.cpp), one line in collectives/CMakeLists.txt. Callers ask the table (or the
// communicator itself) about properties; none compares backend names.
#pragma once

#include <array>
#include <chrono>
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "collectives/communicator.hpp"

namespace gcb {

class ThreadWorld;
struct GlooWorld;

// What one rank needs to join its world; each backend reads only its own fields.
struct CommunicatorSpec {
  std::string_view backend = "threads";
  int rank = 0;
  // threads: the shared world (created once for all rank threads); size comes from it.
  ThreadWorld* thread_world = nullptr;
  // mpi: MPI must already be initialised; the communicator wraps MPI_COMM_WORLD, rank and size
  // come from it.
  // nccl: world size, this rank's CUDA device and the ncclUniqueId (NCCL_UNIQUE_ID_BYTES) that
  // rank 0 created and the launcher distributed.
  int size = 1;
  int device = 0;
  std::array<std::byte, 128> nccl_unique_id{};
  // mpi, gloo: rank-ordered host reductions (bitwise = threads) or the library's collectives.
  ReductionOrder reduction_order = ReductionOrder::rank_ordered;
  // gloo: the world's store, transport device and timeout (collectives/gloo_communicator.hpp),
  // and the store prefix every rank of this communicator shares; rank and size as nccl's.
  std::shared_ptr<GlooWorld> gloo_world;
  std::string gloo_prefix;
  std::chrono::milliseconds timeout{300'000};
};

// One row of the backend table.
struct CommunicatorBackend {
  std::string_view name;
  MemorySpace memory;     // where its buffers live (device: one GPU per rank)
  bool spans_processes;   // can join ranks of different processes
  bool needs_processes;   // runs only with one process per rank (MPI's world)
  std::string_view link;  // what a transfer through it is, for result labels
  // The library it measures, for console headers ("NCCL"; the threads backend is no library and
  // says what it is instead); with the communicator's library_version() in library_label().
  std::string_view library;
  std::string_view needs;  // what to reconfigure with when it is not built
  // Null when this binary was built without the backend.
  std::unique_ptr<Communicator> (*make)(const CommunicatorSpec&);
  bool built() const { return make != nullptr; }
};

// Every known backend, built or not, in a fixed order.
const std::vector<CommunicatorBackend>& communicator_backends();
// "threads, mpi, nccl": every known name, for messages.
std::string communicator_backend_names();
bool communicator_backend_known(std::string_view name);
// The row of `name`; gcb::UsageError naming the known backends for anything else.
const CommunicatorBackend& communicator_backend(std::string_view name);
// What a console header names as the measured library: `library` (a row's column) and `version`
// (Communicator::library_version(), recorded in results as "<backend>_version"): "NCCL 2.21.5",
// "Gloo 0.5.0"; a version text that already names its library (MPI_Get_library_version's first
// line, "Open MPI v4.1.6", "MPICH Version: 4.2.0") alone; `library` alone when there is no version.
std::string library_label(std::string_view library, std::string_view version);
// Names of the backends compiled into this binary, in table order.
std::vector<std::string_view> built_communicator_backends();
bool communicator_backend_built(std::string_view name);

// gcb::UsageError for an unknown name, or a known one that this binary was built without.
std::unique_ptr<Communicator> make_communicator(const CommunicatorSpec& spec);

// The first built backend, in table order, that moves `memory` and fits the launch (one that spans
// processes when ranks are processes, else one of this process; under a launch without MPI, one
// that does not need MPI's world); gcb::UsageError when none does.
std::string_view communicator_for(MemorySpace memory, bool processes);

// Whether `name` (a known backend) starts its world through MPI's launcher world, so that it
// cannot run where the ranks were started without MPI (torchrun / Kubernetes / srun variables).
// Today a property of the mpi row only; see the bootstrap comment on the table (factory.cpp).
bool communicator_needs_mpi_launch(std::string_view name);

}  // namespace gcb
