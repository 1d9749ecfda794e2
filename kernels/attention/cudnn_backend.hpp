// Lowering of an SdpaGraph description (sdpa_graph.hpp) to cuDNN backend descriptors and its
// execution: cuDNN Graph API docs, "Execution sequence" of the backend API — tensors → operations → operation
// graph → engine heuristics (mode A, then fallback) → the first execution plan that finalizes →
// workspace size → variant pack → cudnnBackendExecute. Internal to gcb_attention: only .cpp
// files built with cuDNN include it.
#pragma once

#include <cudnn.h>

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "kernels/attention/sdpa_graph.hpp"

namespace gcb::kernels::attn {

class CudnnGraphPlan {
 public:
  // Builds the plan on a new cuDNN handle bound to `stream` (a cudaStream_t). Never throws for a
  // graph cuDNN rejects: unsupported() says which step failed, with cuDNN's own message.
  CudnnGraphPlan(const SdpaGraph& g, void* stream);
  ~CudnnGraphPlan();
  CudnnGraphPlan(const CudnnGraphPlan&) = delete;
  CudnnGraphPlan& operator=(const CudnnGraphPlan&) = delete;

  const std::string& unsupported() const { return unsupported_; }  // "" when a plan exists
  const std::string& engine() const { return engine_; }            // heuristic mode and config rank
  // Bytes the caller provides to execute(): cuDNN's workspace, then the graph's FP32 scratch.
  size_t workspace_bytes() const { return cudnn_workspace_ + scratch_bytes_; }
  // Stream-ordered. `device`: a pointer for every device tensor of the graph, by uid. With cuDNN
  // older than 9.6 the graph's accumulators are zeroed on the stream first.
  void execute(const std::vector<std::pair<int64_t, void*>>& device, void* workspace);

 private:
  std::string build(const SdpaGraph& g);
  struct Descriptors;
  cudnnHandle_t handle_ = nullptr;
  std::unique_ptr<Descriptors> keep_;  // every descriptor the plan references, alive with it
  std::string unsupported_, engine_;
  size_t cudnn_workspace_ = 0, scratch_bytes_ = 0;
  std::vector<std::pair<int64_t, float>> by_value_;  // host scalars, pointed to by the variant pack
  std::vector<ScratchSlot> scratch_;
  std::vector<ScratchZero> zero_before_execute_;  // cuDNN < 9.6: accumulators it does not clear
  void* stream_ = nullptr;
};

}  // namespace gcb::kernels::attn
