// The one place Communicator backends are named ("threads", "mpi", "gloo", "nccl"): a table of what each
// backend is, how its ranks find each other (its bootstrap) and how to make one. Adding a backend
// means: its file pair, one row in the table (factory.cpp, with its make function under its
// GCB_HAVE_ switch) and one block in collectives/CMakeLists.txt; the World (world.cpp) makes every
// communicator from its row. Callers ask the table (or the communicator itself) about properties;
// none compares backend names.
#pragma once

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

// How a backend's ranks find each other. The first three start a world of their own, whose
// communicator is then also the world's host communicator (control traffic); an over_host backend
// is made inside a world that one of them started.
enum class Bootstrap {
  // Ranks are threads of this process sharing one in-process world (spec.thread_world, made once
  // for all rank threads): the threads backend.
  in_process,
  // The world an MPI launcher started (mpirun, srun with PMI): MPI_Init, then MPI_COMM_WORLD. It
  // cannot run where the ranks were started without MPI (torchrun / Kubernetes / srun --mpi=none).
  launcher_world,
  // The launch's store: rank 0 serves it at MASTER_ADDR:MASTER_PORT (any launcher; alone, an
  // in-memory store), every rank connects through it (spec.gloo_world under spec.gloo_prefix;
  // collectives/tcp_store.hpp).
  launch_store,
  // Made over the host communicator of whatever world the launch starts (spec.host): an id that
  // rank 0 makes and broadcasts through it (NCCL's ncclUniqueId), or an out-of-band exchange
  // through it (UCC's OOB all-gather). Any launch the row's memory and processes columns allow.
  over_host,
};
std::string_view bootstrap_name(Bootstrap b);

// What one rank needs to join its world. Which fields a backend reads follows its bootstrap.
struct CommunicatorSpec {
  std::string_view backend = "threads";
  int rank = 0;
  int size = 1;
  // This rank's CUDA device (device-memory rows).
  int device = 0;
  // in_process: the shared world (created once for all rank threads); size comes from it.
  ThreadWorld* thread_world = nullptr;
  // launcher_world: MPI must already be initialised; the communicator wraps MPI_COMM_WORLD, rank
  // and size come from it.
  // launch_store: the world's store, transport device and timeout (collectives/gloo_communicator.hpp),
  // and the store prefix every rank of this communicator shares; rank and size as given.
  std::shared_ptr<GlooWorld> gloo_world;
  std::string gloo_prefix;
  // over_host: the world's host communicator over the same ranks (rank and size come from it);
  // collective: every rank makes its communicator at the same point.
  Communicator* host = nullptr;
  // Host rows: rank-ordered host reductions (bitwise = threads) or the library's collectives.
  ReductionOrder reduction_order = ReductionOrder::rank_ordered;
  std::chrono::milliseconds timeout{300'000};
};

// One row of the backend table.
struct CommunicatorBackend {
  std::string_view name;
  MemorySpace memory;     // where its buffers live (device: one GPU per rank)
  Bootstrap bootstrap;    // how its ranks find each other (above)
  bool spans_processes;   // can join ranks of different processes
  bool needs_processes;   // runs only with one process per rank (MPI's world, the store's)
  std::string_view link;  // what a transfer through it is, for result labels
  // The library it measures, for console headers ("NCCL"; the threads backend is no library and
  // says what it is instead); with the communicator's library_version() in library_label().
  std::string_view library;
  std::string_view needs;  // what to reconfigure with when it is not built
  // Null when this binary was built without the backend.
  std::unique_ptr<Communicator> (*make)(const CommunicatorSpec&);
  bool built() const { return make != nullptr; }
  // Whether it starts a world of its own (and is then that world's host communicator too).
  bool starts_world() const { return bootstrap != Bootstrap::over_host; }
  // Whether it runs where the ranks were started without MPI (torchrun / Kubernetes / srun
  // variables): everything but the launcher's MPI world.
  bool runs_without_mpi() const { return bootstrap != Bootstrap::launcher_world; }
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

// gcb::UsageError for an unknown name, or a known one that this binary was built without (the
// row's `needs` says what to reconfigure with). A spec missing what the row's bootstrap reads is
// the caller's error (gcb::Fault).
std::unique_ptr<Communicator> make_communicator(const CommunicatorSpec& spec);
// The same refusal without making anything: for checks before a world starts.
void require_built(const CommunicatorBackend& b);

// The first built backend, in table order, that moves `memory` and fits the launch (one that spans
// processes when ranks are processes, else one of this process; under a launch without MPI, one
// that does not need MPI's world); gcb::UsageError when none does.
std::string_view communicator_for(MemorySpace memory, bool processes);

// The host communicator's row of a world whose data communicator is `data`: `data` itself when
// it starts its world, else the first built host-memory row that starts one and fits the launch
// (`processes`: ranks are processes; `without_mpi`: they were started without MPI).
// gcb::UsageError when none does, naming the row the launch would need and what to build it with.
const CommunicatorBackend& host_communicator_for(const CommunicatorBackend& data, bool processes, bool without_mpi);

// "gloo or nccl": the built rows that can join ranks of different processes under this launch
// (started without MPI: those that run without it), for messages.
std::string backends_for_processes(bool without_mpi);

}  // namespace gcb
