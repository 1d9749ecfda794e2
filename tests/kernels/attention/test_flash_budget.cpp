// The build-time flash budget check (kernels/attention/flash_budget.cpp): passes on the current
// kernels' ptxas report, fails on the spilling backward of commit 25e4436, on a register budget
// exceeded and on a budgeted kernel missing from the reports (tests/fixtures/ptxas/README.md).
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "kernels/attention/flash_attn.hpp"
#include "kernels/attention/flash_budget.hpp"
#include "kernels/attention/flash_tiling.hpp"

namespace gcb::kernels::attn {
namespace {

std::vector<KernelResources> fixture(const std::string& name) {
  std::ifstream in("tests/fixtures/ptxas/" + name);
  std::ostringstream s;
  s << in.rdbuf();
  return parse_ptxas_report(s.str());
}

bool mentions(const std::vector<std::string>& lines, const std::string& a, const std::string& b) {
  for (const auto& l : lines)
    if (l.find(a) != std::string::npos && l.find(b) != std::string::npos) return true;
  return false;
}

// The shared-memory guard on fake device figures: sharedMemPerBlockOptin of A100 (163 KB), H100 and
// B200 (227 KB) and of the 99 KB class (A10, L40S, RTX 6000 Ada, RTX 50xx).
TEST(FlashBudget, SharedMemoryGuardDecidesPerPassAndDevice) {
  constexpr size_t a100 = 166912, h100 = 232448, l40s = 101376;
  EXPECT_EQ(flash_smem_bytes(64, true), 109568);
  EXPECT_EQ(flash_smem_bytes(128, true), 123904);
  for (int d : {64, 128}) {
    for (size_t optin : {a100, h100}) {
      EXPECT_EQ(flash_smem_unsupported(d, false, optin), "");
      EXPECT_EQ(flash_smem_unsupported(d, true, optin), "");
    }
    EXPECT_EQ(flash_smem_unsupported(d, false, l40s), "") << d;  // the forward fits
    const std::string why = flash_smem_unsupported(d, true, l40s);
    EXPECT_NE(why.find(std::to_string(flash_smem_bytes(d, true))), std::string::npos) << why;
    EXPECT_NE(why.find("101376"), std::string::npos) << why;
    EXPECT_NE(why.find("cudnn"), std::string::npos) << why;
  }
  EXPECT_EQ(flash_smem_unsupported(64, true, flash_smem_bytes(64, true)), "");  // exactly enough
  EXPECT_NE(flash_smem_unsupported(64, true, flash_smem_bytes(64, true) - 1), "");
}

TEST(FlashBudget, RegisterBudgetIsWhatTheOccupancyAllows) {
  EXPECT_EQ(register_budget(128, 2), 255);  // 65536 / 256 = 256, capped at 255 per thread
  EXPECT_EQ(register_budget(256, 1), 255);
  EXPECT_EQ(register_budget(256, 2), 128);
  EXPECT_EQ(register_budget(256, 3), 80);  // 85.3, allocated in steps of 8
  EXPECT_EQ(register_budget(256, 4), 64);
}

TEST(FlashBudget, CurrentKernelsPass) {
  const auto kernels = fixture("flash_sm90a.txt");
  const auto budgets = flash_kernel_budgets();
  ASSERT_EQ(kernels.size(), 14u);  // 4 forward, 4 backward, 4 preprocess, 2 convert_dq
  for (const auto& k : kernels) EXPECT_NE(budget_for(k, budgets), nullptr) << k.name;
  const auto failures = check_flash_budgets(kernels, budgets);
  EXPECT_TRUE(failures.empty()) << failures.front();
  const std::string table = resource_table(kernels, budgets);
  EXPECT_NE(table.find("flash_fwd_kernel<__half, 128>"), std::string::npos);
  EXPECT_NE(table.find(std::to_string(ForwardTiling<128>::kSmemBytes)), std::string::npos);  // dynamic smem shown
}

TEST(FlashBudget, SpillingBackwardFails) {
  const auto failures = check_flash_budgets(fixture("flash_bwd_spilling_sm90a.txt"), flash_kernel_budgets());
  EXPECT_TRUE(mentions(failures, "flash_bwd_kernel<__half, 128>", "60 B spill stores"));
  EXPECT_TRUE(mentions(failures, "flash_bwd_kernel<__nv_bfloat16, 128>", "spills"));
  EXPECT_FALSE(mentions(failures, "flash_bwd_kernel<__half, 64>", "spills"));  // 194 registers, none spilled
  EXPECT_TRUE(mentions(failures, "flash_fwd_kernel d=64", "not in any ptxas report"));
}

TEST(FlashBudget, RegistersAboveBudgetFail) {
  const auto budgets = flash_kernel_budgets();
  KernelResources k;
  k.name = "gcb::kernels::attn::(anonymous namespace)::flash_bwd_preprocess<__half, 64>";
  k.arch = "sm_90a";
  k.registers = kHelperRegisterBudget + 8;
  const auto* b = budget_for(k, budgets);
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->head_dim, 64);
  const auto failures = check_flash_budgets({k}, budgets);
  EXPECT_TRUE(mentions(failures, "flash_bwd_preprocess<__half, 64>", "budget 64"));
}

TEST(FlashBudget, OnlyOurAttentionKernelsAreBudgeted) {
  const auto budgets = flash_kernel_budgets();
  KernelResources k;
  k.name = "gcb::kernels::attn::(anonymous namespace)::flash_fwd_kernel<__nv_bfloat16, 128>";
  ASSERT_NE(budget_for(k, budgets), nullptr);
  EXPECT_EQ(budget_for(k, budgets)->head_dim, 128);
  k.name = "gcb::kernels::attn::(anonymous namespace)::convert_dq<__half>";
  ASSERT_NE(budget_for(k, budgets), nullptr);
  EXPECT_EQ(budget_for(k, budgets)->kernel, "convert_dq");
  k.name = "gcb::kernels::(anonymous namespace)::stream_reduce_kernel<float, 16>";
  EXPECT_EQ(budget_for(k, budgets), nullptr);
  k.name = "other::flash_fwd_kernel<__half, 64>";
  EXPECT_EQ(budget_for(k, budgets), nullptr);
}

}  // namespace
}  // namespace gcb::kernels::attn
