// The build-vs-device guards, decided on fake device figures (no GPU needed): which compute
// capabilities the default architecture lists run, what a device without an image is told, and
// when the driver is too old for the build's runtime.
#include <gtest/gtest.h>

#include <string>

#include "core/device_support.hpp"
#include "core/error.hpp"

namespace gcb::gpu {
namespace {

TEST(DeviceSupport, ParsesCMakeArchitectureEntries) {
  const auto a = parse_cuda_architectures("80-real;90a;120-virtual,100f");
  ASSERT_EQ(a.size(), 4u);
  EXPECT_EQ(a[0].sm, 80);
  EXPECT_TRUE(a[0].real);
  EXPECT_FALSE(a[0].virtual_);
  EXPECT_EQ(a[1].sm, 90);
  EXPECT_EQ(a[1].suffix, 'a');
  EXPECT_TRUE(a[1].real && a[1].virtual_);
  EXPECT_FALSE(a[2].real);
  EXPECT_TRUE(a[2].virtual_);
  EXPECT_EQ(a[3].suffix, 'f');
  EXPECT_THROW(parse_cuda_architectures("native"), UsageError);  // cannot be read back: the probe decides
  EXPECT_THROW(parse_cuda_architectures("90b"), UsageError);
}

// The GPUs of the list against the default lists of cmake/GcbCudaArch.cmake.
TEST(DeviceSupport, DefaultListsRunOnTheGpusClustersHave) {
  const auto cuda13 = parse_cuda_architectures("80-real;90-real;100-real;120-real;120-virtual");
  const auto cuda12 = parse_cuda_architectures("80-real;90-real;90-virtual");
  struct Gpu {
    const char* name;
    int major, minor;
    bool cuda13, cuda12;
  };
  const Gpu gpus[] = {
      {"A100", 8, 0, true, true},      {"A10/A40", 8, 6, true, true}, {"L40S", 8, 9, true, true},
      {"H100", 9, 0, true, true},      {"B200", 10, 0, true, true},   {"GB300", 10, 3, true, true},
      {"RTX 5090", 12, 0, true, true}, {"T4", 7, 5, false, false},    {"V100", 7, 0, false, false},
  };
  for (const Gpu& g : gpus) {
    EXPECT_EQ(archs_run_on(cuda13, g.major, g.minor), g.cuda13) << g.name;
    // CUDA 12.0–12.7: sm_100/120 run the compute_90 PTX through the driver's JIT.
    EXPECT_EQ(archs_run_on(cuda12, g.major, g.minor), g.cuda12) << g.name;
  }
}

TEST(DeviceSupport, ArchitectureSpecificCodeRunsOnItsOwnArchitectureOnly) {
  const auto hopper = parse_cuda_architectures("90a");
  EXPECT_TRUE(archs_run_on(hopper, 9, 0));
  EXPECT_FALSE(archs_run_on(hopper, 8, 0));   // the old default: A100 had no image
  EXPECT_FALSE(archs_run_on(hopper, 10, 0));  // nor B200
  EXPECT_FALSE(archs_run_on(hopper, 8, 9));
  const auto real_only = parse_cuda_architectures("80-real;90-real");
  EXPECT_TRUE(archs_run_on(real_only, 8, 6));    // sm_80 cubin runs on 8.6 (same major)
  EXPECT_FALSE(archs_run_on(real_only, 10, 0));  // no PTX: nothing for Blackwell
  const auto family = parse_cuda_architectures("100f-real");
  EXPECT_TRUE(archs_run_on(family, 10, 3));
  EXPECT_FALSE(archs_run_on(family, 12, 0));
}

TEST(DeviceSupport, NoImageReasonNamesTheDeviceAndTheRemedy) {
  const std::string why = no_kernel_image_reason(0, "NVIDIA L40S", 8, 9, "90a");
  EXPECT_EQ(why,
            "GPU 0 (NVIDIA L40S, sm_89): no kernel image for sm_89 in this build (built for 90a) — rebuild with "
            "GCB_CUDA_ARCHITECTURES=\"90a;89-real\"");
  // The list reaches the runtime comma-separated (a compile definition); it is printed as CMake spells it.
  EXPECT_NE(no_kernel_image_reason(1, "B", 10, 0, "80-real,90-real").find("\"80-real;90-real;100-real\""),
            std::string::npos);
}

TEST(DeviceSupport, DriverOlderThanTheRuntimeIsRefusedWithTheRemedy) {
  EXPECT_EQ(driver_too_old_reason(13000, 13000), "");
  EXPECT_EQ(driver_too_old_reason(13020, 13000), "");
  EXPECT_EQ(driver_too_old_reason(13000, 13020), "");  // minor-version compatibility
  EXPECT_EQ(driver_too_old_reason(0, 13000), "");      // no driver: said elsewhere
  const std::string why = driver_too_old_reason(12080, 13000);
  EXPECT_NE(why.find("CUDA 12.8"), std::string::npos) << why;
  EXPECT_NE(why.find("CUDA 13.0"), std::string::npos) << why;
  EXPECT_NE(why.find("R580"), std::string::npos) << why;
}

}  // namespace
}  // namespace gcb::gpu
