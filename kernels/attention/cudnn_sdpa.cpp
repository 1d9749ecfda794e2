// cuDNN SDPA forward and backward (see cudnn_sdpa.hpp): route choice and tensor binding; the
// graphs are in sdpa_graph.cpp, their lowering and execution in cudnn_backend.cpp.
#include "kernels/attention/cudnn_sdpa.hpp"

#include <fmt/format.h>

#include "core/error.hpp"
#include "kernels/attention/cudnn_backend.hpp"
#include "kernels/attention/sdpa_graph.hpp"

namespace gcb::kernels::attn {

namespace {

constexpr const char* kRouteA = "unified SDPA_FWD operation (Route A, kernels/attention/sdpa_graph.hpp)";
constexpr const char* kRouteB = "composite graph (Route B, kernels/attention/sdpa_graph.hpp)";

std::string dtype_problem(DType t) {
  return t == DType::f16 || t == DType::bf16 ? "" : "cuDNN SDPA here supports fp16 and bf16";
}

}  // namespace

CudnnSdpaForward::CudnnSdpaForward(DType t, const AttnShape& a, void* stream) {
  unsupported_ = dtype_problem(t);
  if (!unsupported_.empty()) return;
  const GraphType io = graph_io_type(t);
  // Route A when it can apply (non-causal, cuDNN ≥ 9.13.1); Route B otherwise or as its fallback.
  std::string route_a_failure;
  if (a.causal)
    route_a_failure = "causal needs cuDNN >= 9.21 for the unified op";
  else if (cudnnGetVersion() < 91301)
    route_a_failure = fmt::format("the unified op needs cuDNN >= 9.13.1 (found {})", cudnnGetVersion());
  else {
    plan_ = std::make_unique<CudnnGraphPlan>(sdpa_unified_forward_graph(io, a), stream);
    route_a_failure = plan_->unsupported();
    if (route_a_failure.empty()) {
      route_ = kRouteA;
      return;
    }
  }
  plan_ = std::make_unique<CudnnGraphPlan>(sdpa_composite_forward_graph(io, a), stream);
  unsupported_ = plan_->unsupported();
  if (unsupported_.empty())
    route_ = kRouteB;
  else
    unsupported_ = fmt::format("Route A: {}; Route B: {}", route_a_failure, unsupported_);
}

CudnnSdpaForward::~CudnnSdpaForward() = default;
const std::string& CudnnSdpaForward::unsupported() const { return unsupported_; }
size_t CudnnSdpaForward::workspace_bytes() const { return plan_ ? plan_->workspace_bytes() : 0; }
std::string CudnnSdpaForward::engine() const { return plan_ ? plan_->engine() : ""; }
std::string CudnnSdpaForward::route() const { return route_; }

void CudnnSdpaForward::run(const void* q, const void* k, const void* v, void* o, float* stats, void* workspace) {
  GCB_CHECK(plan_ && unsupported_.empty(), "cuDNN SDPA forward has no plan: " + unsupported_);
  plan_->execute({{kUidQ, const_cast<void*>(q)},
                  {kUidK, const_cast<void*>(k)},
                  {kUidV, const_cast<void*>(v)},
                  {kUidO, o},
                  {kUidStats, stats}},
                 workspace);
}

CudnnSdpaBackward::CudnnSdpaBackward(DType t, const AttnShape& a, void* stream) {
  unsupported_ = dtype_problem(t);
  if (!unsupported_.empty()) return;
  plan_ = std::make_unique<CudnnGraphPlan>(sdpa_composite_backward_graph(graph_io_type(t), a), stream);
  if (!plan_->unsupported().empty()) unsupported_ = "Route B backward: " + plan_->unsupported();
}

CudnnSdpaBackward::~CudnnSdpaBackward() = default;
const std::string& CudnnSdpaBackward::unsupported() const { return unsupported_; }
size_t CudnnSdpaBackward::workspace_bytes() const { return plan_ ? plan_->workspace_bytes() : 0; }
std::string CudnnSdpaBackward::engine() const { return plan_ ? plan_->engine() : ""; }
std::string CudnnSdpaBackward::route() const { return unsupported_.empty() ? kRouteB : ""; }

void CudnnSdpaBackward::run(const void* q, const void* k, const void* v, const void* o, const void* d_o,
                            const float* stats, void* dq, void* dk, void* dv, void* workspace) {
  GCB_CHECK(plan_ && unsupported_.empty(), "cuDNN SDPA backward has no plan: " + unsupported_);
  plan_->execute({{kUidQ, const_cast<void*>(q)},
                  {kUidK, const_cast<void*>(k)},
                  {kUidV, const_cast<void*>(v)},
                  {kUidO, const_cast<void*>(o)},
                  {kUidDO, const_cast<void*>(d_o)},
                  {kUidStats, const_cast<float*>(stats)},
                  {kUidDQ, dq},
                  {kUidDK, dk},
                  {kUidDV, dv}},
                 workspace);
}

}  // namespace gcb::kernels::attn
