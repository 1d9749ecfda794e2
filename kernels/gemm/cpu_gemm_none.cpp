// CPU GEMM when gcbench was built without OpenBLAS: the CPU gemm cases are WAIVED with this reason.
#include "core/error.hpp"
#include "kernels/gemm/cpu_gemm.hpp"

namespace gcb::kernels {

bool cpu_gemm_available(std::string* reason) {
  if (reason) *reason = "gcbench was built without OpenBLAS (pkg-config found no openblas; install libopenblas-dev)";
  return false;
}

std::string cpu_gemm_library() { return {}; }

void cpu_gemm(DType, const GemmShape&, const void*, const void*, void*) {
  throw Fault("cpu_gemm called in a build without OpenBLAS");
}

}  // namespace gcb::kernels
