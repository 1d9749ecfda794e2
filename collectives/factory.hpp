// The one place a Communicator backend is chosen by name ("threads", "mpi", "nccl"). Adding a
// backend means: its file pair, one case here, one line in collectives/CMakeLists.txt.
#pragma once

#include <array>
#include <chrono>
#include <cstddef>
#include <memory>
#include <string_view>
#include <vector>

#include "collectives/communicator.hpp"

namespace gcb {

class ThreadWorld;

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
  // mpi: rank-ordered host reductions (bitwise = threads) or the MPI library's collectives.
  ReductionOrder reduction_order = ReductionOrder::rank_ordered;
  std::chrono::milliseconds timeout{300'000};
};

// Names of the backends compiled into this binary, in a fixed order.
std::vector<std::string_view> built_communicator_backends();
bool communicator_backend_built(std::string_view name);

// gcb::UsageError for an unknown name, or a known one that this binary was built without.
std::unique_ptr<Communicator> make_communicator(const CommunicatorSpec& spec);

}  // namespace gcb
