// NVTX3 ranges in the `gcbench` domain around every case, so nsys timelines name what ran.
// Header-only NVTX3 from the CUDA toolkit; without it the range is a no-op.
#pragma once

#include <string>

#include "gcb/config.hpp"

#if GCB_HAVE_NVTX
#include <nvtx3/nvToolsExt.h>
#endif

namespace gcb {

class NvtxRange {
 public:
  explicit NvtxRange(const std::string& name) {
#if GCB_HAVE_NVTX
    nvtxEventAttributes_t attr{};
    attr.version = NVTX_VERSION;
    attr.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    attr.messageType = NVTX_MESSAGE_TYPE_ASCII;
    attr.message.ascii = name.c_str();
    nvtxDomainRangePushEx(domain(), &attr);
#else
    (void)name;
#endif
  }
  ~NvtxRange() {
#if GCB_HAVE_NVTX
    nvtxDomainRangePop(domain());
#endif
  }
  NvtxRange(const NvtxRange&) = delete;
  NvtxRange& operator=(const NvtxRange&) = delete;

 private:
#if GCB_HAVE_NVTX
  static nvtxDomainHandle_t domain() {
    static const nvtxDomainHandle_t d = nvtxDomainCreateA("gcbench");
    return d;
  }
#endif
};

}  // namespace gcb
