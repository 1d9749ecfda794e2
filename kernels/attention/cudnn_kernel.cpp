// cuDNN SDPA (cudnn_sdpa.hpp) as the "cudnn" row of the attention registry
// (attention_registry.hpp): forward and backward plans built in prepare() and timed apart, one
// workspace for both, and the engines and routes they chose. Built without cuDNN, prepare() says so.
#include <algorithm>

#include "core/error.hpp"
#include "core/harness.hpp"
#include "kernels/attention/attention_registry.hpp"
#include "kernels/attention/cudnn_sdpa.hpp"

namespace gcb::kernels::attn {
namespace {

class CudnnKernel final : public AttnKernel {
 public:
  CudnnKernel(DType t, const AttnShape& a, bool backward) : t_(t), a_(a), backward_(backward) {}
  // cuDNN's verdict on this shape, with the plans built once: every pass needs the forward plan
  // (a backward reads the O and Stats of cuDNN's forward); a backward the backward one too.
  std::string prepare(void* stream) override {
    if (!fwd_) {
      HostTimer timer;
      plan_seconds_ = timer.time_batch(
          [&] {
            fwd_ = std::make_unique<CudnnSdpaForward>(t_, a_, stream);
            if (backward_ && fwd_->unsupported().empty()) bwd_ = std::make_unique<CudnnSdpaBackward>(t_, a_, stream);
          },
          1);
    }
    if (!fwd_->unsupported().empty()) return "cuDNN SDPA forward: " + fwd_->unsupported();
    if (bwd_ && !bwd_->unsupported().empty()) return "cuDNN SDPA backward: " + bwd_->unsupported();
    return {};
  }
  size_t workspace_bytes(bool backward) const override {
    if (backward) return bwd_ ? bwd_->workspace_bytes() : 0;
    return fwd_ ? fwd_->workspace_bytes() : 0;
  }
  // Stream-ordered on the stream the plans were built for.
  void forward(const AttnTensors& x, void*) override {
    GCB_CHECK(fwd_ != nullptr, "cuDNN SDPA runs after prepare()");
    fwd_->run(x.q, x.k, x.v, x.o, x.lse, x.workspace);
  }
  void backward(const AttnTensors& x, void*) override {
    GCB_CHECK(bwd_ != nullptr, "cuDNN SDPA's backward runs after prepare() for a backward");
    bwd_->run(x.q, x.k, x.v, x.o, x.d_o, x.lse, x.dq, x.dk, x.dv, x.workspace);
  }
  std::optional<double> plan_seconds() const override {
    return fwd_ ? std::optional<double>(plan_seconds_) : std::nullopt;
  }
  nlohmann::json describe() const override {
    nlohmann::json x = nlohmann::json::object();
    if (fwd_) {
      x["cudnn_plan_build_seconds"] = plan_seconds_;  // forward and backward plans; not timed launches
      x["cudnn_engine"] = fwd_->engine();
      x["cudnn_route"] = fwd_->route();
    }
    if (bwd_) {
      x["cudnn_bwd_engine"] = bwd_->engine();
      x["cudnn_bwd_route"] = bwd_->route();
    }
    return x;
  }

 private:
  DType t_;
  AttnShape a_;
  bool backward_;
  std::unique_ptr<CudnnSdpaForward> fwd_;
  std::unique_ptr<CudnnSdpaBackward> bwd_;
  double plan_seconds_ = 0;
};

}  // namespace

std::unique_ptr<AttnKernel> make_cudnn_kernel(DType t, const AttnShape& a, bool backward, int) {
  return std::make_unique<CudnnKernel>(t, a, backward);
}

}  // namespace gcb::kernels::attn
