// cuDNN SDPA when gcbench was built without cuDNN: every problem is unsupported, with the reason.
#include "kernels/attention/cudnn_sdpa.hpp"

#include "core/error.hpp"

namespace gcb::kernels::attn {

struct CudnnSdpaForward::Impl {
  std::string unsupported = "gcbench was built without cuDNN";
};

CudnnSdpaForward::CudnnSdpaForward(DType, const AttnShape&, void*) : impl_(std::make_unique<Impl>()) {}
CudnnSdpaForward::~CudnnSdpaForward() = default;
const std::string& CudnnSdpaForward::unsupported() const { return impl_->unsupported; }
size_t CudnnSdpaForward::workspace_bytes() const { return 0; }
std::string CudnnSdpaForward::engine() const { return {}; }
void CudnnSdpaForward::run(const void*, const void*, const void*, void*, float*, void*) {
  GCB_CHECK(false, impl_->unsupported);
}

}  // namespace gcb::kernels::attn
