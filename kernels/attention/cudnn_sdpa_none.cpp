// cuDNN SDPA when gcbench was built without cuDNN: every problem is unsupported, with the reason.
#include "kernels/attention/cudnn_sdpa.hpp"

#include "core/error.hpp"

namespace gcb::kernels::attn {

class CudnnGraphPlan {};  // never built here; completes the type for the unique_ptr members

namespace {
const char* const kNoCudnn = "gcbench was built without cuDNN";
}

CudnnSdpaForward::CudnnSdpaForward(DType, const AttnShape&, void*) : unsupported_(kNoCudnn) {}
CudnnSdpaForward::~CudnnSdpaForward() = default;
const std::string& CudnnSdpaForward::unsupported() const { return unsupported_; }
size_t CudnnSdpaForward::workspace_bytes() const { return 0; }
std::string CudnnSdpaForward::engine() const { return {}; }
std::string CudnnSdpaForward::route() const { return {}; }
void CudnnSdpaForward::run(const void*, const void*, const void*, void*, float*, void*) {
  GCB_CHECK(false, unsupported_);
}

CudnnSdpaBackward::CudnnSdpaBackward(DType, const AttnShape&, void*) : unsupported_(kNoCudnn) {}
CudnnSdpaBackward::~CudnnSdpaBackward() = default;
const std::string& CudnnSdpaBackward::unsupported() const { return unsupported_; }
size_t CudnnSdpaBackward::workspace_bytes() const { return 0; }
std::string CudnnSdpaBackward::engine() const { return {}; }
std::string CudnnSdpaBackward::route() const { return {}; }
void CudnnSdpaBackward::run(const void*, const void*, const void*, const void*, const void*, const float*, void*, void*,
                            void*, void*) {
  GCB_CHECK(false, unsupported_);
}

}  // namespace gcb::kernels::attn
