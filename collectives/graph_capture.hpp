// The NCCL-only pieces that need CUDA/NCCL headers: CUDA-graph capture of a batch of collectives
// (nccl-tests -G) and the NCCL version. Without NCCL they report why not.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "collectives/communicator.hpp"

namespace gcb {

class CollGraph {
 public:
  virtual ~CollGraph() = default;
  // Launches the captured ops once on the communicator's stream (stream-ordered).
  virtual void replay() = 0;
};

// "" when `comm` can capture graphs (an NCCL communicator in a CUDA build), else why not.
std::string graph_waived_reason(const Communicator& comm);
// Captures `ops` calls of `launch` on the NCCL communicator's stream into one CUDA graph.
std::unique_ptr<CollGraph> capture_graph(Communicator& comm, const std::function<void()>& launch, int ops);
// "2.28.3" (the NCCL library loaded), or "" when NCCL is not built.
std::string nccl_version_string();

}  // namespace gcb
