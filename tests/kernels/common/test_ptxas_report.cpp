// The ptxas -v report parser (kernels/common/ptxas_report.cpp) on a real report checked in as a fixture
// (tests/fixtures/ptxas/README.md) and on the line variants other kernels produce.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "kernels/common/ptxas_report.hpp"

namespace gcb::kernels {
namespace {

std::string fixture(const std::string& name) {
  std::ifstream in("tests/fixtures/ptxas/" + name);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(PtxasReport, ReadsEveryEntryOfARealReport) {
  const auto kernels = parse_ptxas_report(fixture("flash_bwd_spilling_sm90a.txt"));
  ASSERT_EQ(kernels.size(), 10u);  // {main, preprocess} × 2 types × 2 head dims + convert_dq × 2 types
  const KernelResources& bwd = kernels[0];
  EXPECT_EQ(bwd.name, "gcb::kernels::attn::(anonymous namespace)::flash_bwd_kernel<__nv_bfloat16, 128>");
  EXPECT_EQ(bwd.arch, "sm_90a");
  EXPECT_EQ(bwd.registers, 255);
  EXPECT_EQ(bwd.barriers, 1);
  EXPECT_EQ(bwd.stack_frame_bytes, 64);
  EXPECT_EQ(bwd.spill_store_bytes, 60);
  EXPECT_EQ(bwd.spill_load_bytes, 76);
  EXPECT_TRUE(bwd.spills());
  const KernelResources& pre = kernels[1];
  EXPECT_EQ(pre.name, "gcb::kernels::attn::(anonymous namespace)::flash_bwd_preprocess<__nv_bfloat16, 128>");
  EXPECT_EQ(pre.registers, 21);
  EXPECT_EQ(pre.barriers, 0);
  EXPECT_FALSE(pre.spills());
  EXPECT_EQ(kernels[3].name, "gcb::kernels::attn::(anonymous namespace)::flash_bwd_kernel<__nv_bfloat16, 64>");
  EXPECT_EQ(kernels[3].registers, 194);
  EXPECT_FALSE(kernels[3].spills());
}

// Static shared memory and cumulative stack on the "Used" line; the "Function properties" of a
// non-entry (device) function must not be taken for the entry's.
TEST(PtxasReport, LineVariants) {
  const std::string text =
      "ptxas info    : Function properties for _Z6helperv\n"
      "    24 bytes stack frame, 8 bytes spill stores, 8 bytes spill loads\n"
      "ptxas info    : Compiling entry function '_Z6reducePf' for 'sm_90'\n"
      "ptxas info    : Function properties for _Z6reducePf\n"
      "    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
      "ptxas info    : Used 32 registers, used 1 barriers, 64 bytes smem, 8 bytes cumulative stack size\n"
      "ptxas info    : Compiling entry function '_Z4noopv' for 'sm_90'\n"
      "ptxas info    : Function properties for _Z6helperv\n"
      "    24 bytes stack frame, 8 bytes spill stores, 8 bytes spill loads\n"
      "ptxas info    : Used 8 registers, used 0 barriers\n"
      "ptxas info    : Compile time = 1.0 ms\n";
  const auto kernels = parse_ptxas_report(text);
  ASSERT_EQ(kernels.size(), 2u);
  EXPECT_EQ(kernels[0].name, "reduce");
  EXPECT_EQ(kernels[0].registers, 32);
  EXPECT_EQ(kernels[0].static_smem_bytes, 64);
  EXPECT_EQ(kernels[1].name, "noop");
  EXPECT_EQ(kernels[1].stack_frame_bytes, 0);  // the helper's figures
  EXPECT_FALSE(kernels[1].spills());
}

TEST(PtxasReport, EmptyOrForeignTextHasNoKernels) {
  EXPECT_TRUE(parse_ptxas_report("").empty());
  EXPECT_TRUE(parse_ptxas_report("nvcc warning : something else\n").empty());
}

TEST(PtxasReport, DisplayNameDropsReturnTypeAndParameters) {
  EXPECT_EQ(kernel_display_name("void a::(anonymous namespace)::k<int, 64>(float const*, a::S<int>)"),
            "a::(anonymous namespace)::k<int, 64>");
  EXPECT_EQ(kernel_display_name("void f(int)"), "f");
  EXPECT_EQ(kernel_display_name("_Z1fv"), "_Z1fv");  // not demangled: unchanged
}

}  // namespace
}  // namespace gcb::kernels
