// Whether a GPU can run this build, decided from plain facts so the decisions are tested without
// a GPU (tests/core/test_device_support.cpp): the architectures the build carries against the
// device's compute capability, the driver's CUDA version against the runtime's. gpu_cuda.cpp
// asks the device itself (cudaFuncGetAttributes on one of our kernels) and words what it finds
// with these functions, so an A100, L40S or B200 that this build has no code for is WAIVED with
// the remedy instead of failing every case with "no kernel image is available".
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace gcb::gpu {

// One entry of a CMAKE_CUDA_ARCHITECTURES list (entries split at ';' or ','): "90" (real + virtual), "80-real",
// "120-virtual", "90a" (architecture-specific: runs on 9.0 alone), "100f" (family-specific).
struct CudaArch {
  int sm = 0;            // 90 for "90a"
  bool real = true;      // a cubin (SASS) for sm_XY
  bool virtual_ = true;  // PTX for compute_XY, JIT-compiled by the driver
  char suffix = 0;       // 'a' or 'f', else 0
};
// Throws gcb::UsageError on an entry that is not one of the forms above.
std::vector<CudaArch> parse_cuda_architectures(std::string_view list);

// Whether code of `archs` can run on compute capability major.minor: a cubin for sm_XY runs on
// X.Z with Z ≥ Y (binary compatibility within a major version), an 'a' cubin on X.Y alone, an
// 'f' cubin on X.Z with Z ≥ Y; PTX for compute_XY on any X.Y or newer (CUDA C++ Programming
// Guide, "Binary Compatibility" and "PTX Compatibility"; "Feature Availability").
bool archs_run_on(const std::vector<CudaArch>& archs, int major, int minor);

// The architecture a rebuild should add for this device: "89" for 8.9, "90a" is never proposed.
std::string arch_for(int major, int minor);

// "GPU 0 (NVIDIA L40S, sm_89): no kernel image for sm_89 in this build (built for 80-real;90-real)
// — rebuild with GCB_CUDA_ARCHITECTURES="80-real;90-real;89-real"" — the reason a device is unusable.
std::string no_kernel_image_reason(int index, std::string_view name, int major, int minor,
                                   std::string_view build_archs);

// "" when a driver of CUDA version `driver` (cudaDriverGetVersion: 1000·major + 10·minor) can
// run a runtime of version `runtime`; else the reason with the remedy. A CUDA 13 runtime needs a
// driver of CUDA 13 or newer (R580+); minor-version compatibility within a major release lets an
// older driver of the same major run it (CUDA Compatibility guide, "Minor Version Compatibility").
std::string driver_too_old_reason(int driver, int runtime);

}  // namespace gcb::gpu
