// cuDNN fused attention (SDPA) through the cuDNN backend C API (cudnn_graph.h), the vendor
// reference of `gcbench attn` (cuDNN graph API docs; NVIDIA/cudnn-frontend). Forward: the unified SDPA_FWD op
// (Route A; cuDNN ≥ 9.13.1, non-causal) and, for causal problems or when Route A has no engine,
// the composite graph (Route B: QKᵀ, scale, causal mask, softmax with stats, PV). Backward: the
// composite backward graph (Route B; the SDPA_BWD op has no Hopper engine before 9.21). Both
// produce/consume Stats = natural-log LSE, FP32 [b,h,s]. The graphs are described in
// sdpa_graph.hpp and lowered in cudnn_backend.cpp. No cuDNN headers here.
#pragma once

#include <memory>
#include <string>

#include "core/dtype.hpp"
#include "kernels/attention/attention_shape.hpp"

namespace gcb::kernels::attn {

class CudnnGraphPlan;

class CudnnSdpaForward {
 public:
  // Builds the graph, asks the heuristics (mode A, then fallback) and finalizes the first plan
  // that cuDNN accepts. Never throws for a shape cuDNN rejects: unsupported() says why (with
  // cuDNN's own message). `stream` is a cudaStream_t.
  CudnnSdpaForward(DType t, const AttnShape& a, void* stream);
  ~CudnnSdpaForward();
  CudnnSdpaForward(const CudnnSdpaForward&) = delete;
  CudnnSdpaForward& operator=(const CudnnSdpaForward&) = delete;

  const std::string& unsupported() const;  // "" when a plan exists
  size_t workspace_bytes() const;
  std::string engine() const;  // heuristic mode and config rank of the plan
  std::string route() const;   // which graph the plan runs (sdpa_graph.hpp: Route A or B)
  // Stream-ordered. Q, K, V, O: [b,h,s,d] 16-bit; stats: [b,h,s] FP32; workspace: workspace_bytes().
  void run(const void* q, const void* k, const void* v, void* o, float* stats, void* workspace);

 private:
  std::unique_ptr<CudnnGraphPlan> plan_;
  std::string unsupported_, route_;
};

class CudnnSdpaBackward {
 public:
  // Same contract as CudnnSdpaForward (never throws for a shape cuDNN rejects).
  CudnnSdpaBackward(DType t, const AttnShape& a, void* stream);
  ~CudnnSdpaBackward();
  CudnnSdpaBackward(const CudnnSdpaBackward&) = delete;
  CudnnSdpaBackward& operator=(const CudnnSdpaBackward&) = delete;

  const std::string& unsupported() const;
  // cuDNN's workspace plus the graph's FP32 scratch (D = rowsum(dO∘O) and the dQ accumulator).
  size_t workspace_bytes() const;
  std::string engine() const;
  std::string route() const;
  // Stream-ordered. O and stats from a forward pass on the same inputs (cuDNN's or ours: both
  // store the natural-log LSE); dQ, dK, dV: [b,h,s,d] 16-bit, overwritten.
  void run(const void* q, const void* k, const void* v, const void* o, const void* d_o, const float* stats, void* dq,
           void* dk, void* dv, void* workspace);

 private:
  std::unique_ptr<CudnnGraphPlan> plan_;
  std::string unsupported_;
};

}  // namespace gcb::kernels::attn
