// Resource budgets of our flash kernels (from flash_tiling.hpp) and the check the build runs on
// ptxas's figures (kernels/common/ptxas_report.hpp): no spills, no stack frame, registers within the
// budget the design's occupancy needs, shared memory within the per-block limit. Plain C++: runs
// at build time and in ctest on machines without a GPU.
#pragma once

#include <string>
#include <vector>

#include "kernels/common/ptxas_report.hpp"

namespace gcb::kernels::attn {

struct KernelBudget {
  std::string kernel;           // unqualified name in gcb::kernels::attn: "flash_fwd_kernel"
  int head_dim = 0;             // template argument D; 0: the kernel has none
  int threads = 0;              // per block
  int ctas_per_sm = 1;          // occupancy the design counts on
  int max_registers = 0;        // per thread, register_budget(threads, ctas_per_sm)
  long dynamic_smem_bytes = 0;  // per block, requested by the launcher
};

// Every kernel of flash_fwd.cu and flash_bwd.cu.
std::vector<KernelBudget> flash_kernel_budgets();

// The budget a reported kernel falls under (by namespace, name and head dim), or nullptr.
const KernelBudget* budget_for(const KernelResources& k, const std::vector<KernelBudget>& budgets);

// One line per violation (empty: pass): a budgeted kernel that spills or has a stack frame,
// uses more registers than its budget, or more static + dynamic shared memory than a block may
// have; a budget that no report mentions (the kernel was renamed, or its file not compiled).
std::vector<std::string> check_flash_budgets(const std::vector<KernelResources>& kernels,
                                             const std::vector<KernelBudget>& budgets);

// One row per kernel: name, arch, registers (/ budget), barriers, stack frame, spill stores and
// loads, shared memory (static + dynamic).
std::string resource_table(const std::vector<KernelResources>& kernels, const std::vector<KernelBudget>& budgets);

}  // namespace gcb::kernels::attn
