// CUDA-graph capture of NCCL collectives (compiles here; validated only on a GPU machine).
#include "collectives/graph_capture.hpp"

#include <fmt/format.h>

#include "core/error.hpp"
#include "gcb/config.hpp"

#if GCB_HAVE_NCCL
#include <cuda_runtime.h>
#include <nccl.h>
#endif

namespace gcb {

void capture_in_order(Communicator& comm, const std::function<void()>& launch, int ops, const CaptureHooks& hooks) {
  launch();  // eager: NCCL connects what this op needs here, not inside the capture
  comm.synchronize();
  hooks.begin();
  for (int i = 0; i < ops; ++i) launch();
  hooks.end();
}

#if GCB_HAVE_NCCL
namespace {

class NcclGraph final : public CollGraph {
 public:
  NcclGraph(cudaStream_t stream, cudaGraphExec_t exec) : stream_(stream), exec_(exec) {}
  ~NcclGraph() override { cudaGraphExecDestroy(exec_); }
  void replay() override { CUDA_CHECK(cudaGraphLaunch(exec_, stream_)); }

 private:
  cudaStream_t stream_;
  cudaGraphExec_t exec_;
};

}  // namespace

std::string graph_waived_reason(const Communicator& comm) {
  if (comm.stream() == nullptr)
    return fmt::format("graph mode replays CUDA graphs of NCCL calls; the {} backend has no CUDA stream to capture",
                       comm.backend());
  return {};
}

std::unique_ptr<CollGraph> capture_graph(Communicator& comm, const std::function<void()>& launch, int ops) {
  GCB_CHECK(comm.stream() != nullptr, graph_waived_reason(comm));
  // A communicator's stream handle is a cudaStream_t (communicator.hpp).
  const auto stream = static_cast<cudaStream_t>(comm.stream());
  cudaGraph_t graph = nullptr;
  // Thread-local capture: other rank threads of this process capture their own streams.
  capture_in_order(comm, launch, ops,
                   {[stream] { CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal)); },
                    [stream, &graph] { CUDA_CHECK(cudaStreamEndCapture(stream, &graph)); }});
  cudaGraphExec_t exec = nullptr;
  const cudaError_t err = cudaGraphInstantiate(&exec, graph, 0);
  cudaGraphDestroy(graph);
  CUDA_CHECK(err);
  return std::make_unique<NcclGraph>(stream, exec);
}

std::string nccl_version_string() {
  int v = 0;
  if (ncclGetVersion(&v) != ncclSuccess) return {};
  // NCCL ≥ 2.9 encodes major·10000 + minor·100 + patch.
  return fmt::format("{}.{}.{}", v / 10000, (v % 10000) / 100, v % 100);
}

#else

std::string graph_waived_reason(const Communicator& comm) {
  return fmt::format(
      "graph mode replays CUDA graphs of NCCL calls; this binary was built without NCCL "
      "(backend {})",
      comm.backend());
}

std::unique_ptr<CollGraph> capture_graph(Communicator& comm, const std::function<void()>&, int) {
  throw UsageError(graph_waived_reason(comm));
}

std::string nccl_version_string() { return {}; }

#endif

}  // namespace gcb
