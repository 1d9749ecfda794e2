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
// Captures `ops` calls of `launch` on the NCCL communicator's stream into one CUDA graph, in the
// order of capture_in_order.
std::unique_ptr<CollGraph> capture_graph(Communicator& comm, const std::function<void()>& launch, int ops);

// The order capture_graph follows, apart from its CUDA calls (so it is tested without a GPU): one
// eager `launch`, `comm` synchronised, then `ops` launches between begin and end of the capture.
// NCCL ≥ 2.22 connects a communicator's peers lazily, at the first collective that needs them
// (NCCL user guide, Environment Variables: NCCL_RUNTIME_CONNECT, default 1), and that setup
// allocates and copies device memory, which a stream capture does not allow; the eager call makes
// the connections before the capture, as nccl-tests' eager warm-up iterations precede its graph
// capture (NVIDIA/nccl-tests src/common.cu, BenchTime).
struct CaptureHooks {
  std::function<void()> begin, end;
};
void capture_in_order(Communicator& comm, const std::function<void()>& launch, int ops, const CaptureHooks& hooks);
// "2.28.3" (the NCCL library loaded), or "" when NCCL is not built.
std::string nccl_version_string();

}  // namespace gcb
