// cuDNN fused attention (SDPA) forward through the cuDNN backend C API (cudnn_graph.h), the
// vendor reference of `gcbench attn`: the unified SDPA_FWD operation (Route A of
// reference/kernels.md §2.2; cuDNN ≥ 9.13.1): Q, K, V, attention scale (by value) → O and
// Stats (FP32 [b,h,s,1], natural-log LSE). Non-causal only: a causal mask needs the composite
// graph (Route B) or cuDNN ≥ 9.21, neither written yet. No cuDNN headers here.
#pragma once

#include <memory>
#include <string>

#include "core/dtype.hpp"
#include "kernels/attention/attention_shape.hpp"

namespace gcb::kernels::attn {

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
  std::string engine() const;               // heuristic rank and engine index of the plan
  // Stream-ordered. Q, K, V, O: [b,h,s,d] 16-bit; stats: [b,h,s] FP32; workspace: workspace_bytes().
  void run(const void* q, const void* k, const void* v, void* o, float* stats, void* workspace);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace gcb::kernels::attn
