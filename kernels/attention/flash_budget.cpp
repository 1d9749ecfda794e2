// Budgets and the build-time resource check of the flash kernels (flash_budget.hpp).
#include "kernels/attention/flash_budget.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <string_view>

#include "kernels/attention/flash_attn.hpp"
#include "kernels/attention/flash_tiling.hpp"

namespace gcb::kernels::attn {

namespace {

constexpr std::string_view kNamespace = "gcb::kernels::attn::";

template <int D>
void add_head_dim(std::vector<KernelBudget>& out) {
  using F = ForwardTiling<D>;
  using B = BackwardTiling<D>;
  out.push_back({"flash_fwd_kernel", D, F::kThreads, F::kCtasPerSm, F::kRegisterBudget, F::kSmemBytes});
  out.push_back({"flash_bwd_kernel", D, B::kThreads, B::kCtasPerSm, B::kRegisterBudget, B::kSmemBytes});
  out.push_back({"flash_bwd_preprocess", D, kPreprocessThreads, 4, kHelperRegisterBudget, 0});
}

// "ns::(anonymous namespace)::name<args>" → name and the last integer template argument (0 if
// none).
struct NameParts {
  std::string_view name;
  int last_int_arg = 0;
};
NameParts split_name(std::string_view full) {
  const size_t open = full.find('<');
  const std::string_view qualified = full.substr(0, open);
  const size_t sep = qualified.rfind("::");
  NameParts parts{sep == std::string_view::npos ? qualified : qualified.substr(sep + 2)};
  if (open != std::string_view::npos) {
    const size_t close = full.rfind('>');
    size_t end = close, begin = close;
    while (begin > open && std::isdigit(static_cast<unsigned char>(full[begin - 1]))) --begin;
    if (begin < end) parts.last_int_arg = std::stoi(std::string(full.substr(begin, end - begin)));
  }
  return parts;
}

}  // namespace

std::vector<KernelBudget> flash_kernel_budgets() {
  std::vector<KernelBudget> out;
  add_head_dim<64>(out);
  add_head_dim<128>(out);
  out.push_back({"convert_dq", 0, kConvertThreads, 4, kHelperRegisterBudget, 0});
  return out;
}

const KernelBudget* budget_for(const KernelResources& k, const std::vector<KernelBudget>& budgets) {
  if (k.name.rfind(kNamespace, 0) != 0) return nullptr;
  const NameParts parts = split_name(k.name);
  for (const auto& b : budgets)
    if (parts.name == b.kernel && (b.head_dim == 0 || parts.last_int_arg == b.head_dim)) return &b;
  return nullptr;
}

std::vector<std::string> check_flash_budgets(const std::vector<KernelResources>& kernels,
                                             const std::vector<KernelBudget>& budgets) {
  std::vector<std::string> failures;
  std::vector<bool> seen(budgets.size(), false);
  for (const auto& k : kernels) {
    const KernelBudget* b = budget_for(k, budgets);
    if (!b) continue;
    seen[static_cast<size_t>(b - budgets.data())] = true;
    const std::string where = fmt::format("{} ({})", k.name, k.arch);
    if (k.spills())
      failures.push_back(fmt::format("{}: spills ({} B stack frame, {} B spill stores, {} B spill loads)", where,
                                     k.stack_frame_bytes, k.spill_store_bytes, k.spill_load_bytes));
    if (k.registers > b->max_registers)
      failures.push_back(fmt::format("{}: {} registers, budget {} ({} threads × {} CTAs per SM)", where, k.registers,
                                     b->max_registers, b->threads, b->ctas_per_sm));
    const long smem = k.static_smem_bytes + b->dynamic_smem_bytes;
    if (smem > kSm90SmemPerBlock)
      failures.push_back(
          fmt::format("{}: {} B shared memory, the limit per block is {} B", where, smem, kSm90SmemPerBlock));
  }
  for (size_t i = 0; i < budgets.size(); ++i)
    if (!seen[i])
      failures.push_back(fmt::format("{}{}: not in any ptxas report (renamed, or not compiled?)", budgets[i].kernel,
                                     budgets[i].head_dim ? fmt::format(" d={}", budgets[i].head_dim) : ""));
  return failures;
}

std::string resource_table(const std::vector<KernelResources>& kernels, const std::vector<KernelBudget>& budgets) {
  size_t width = 6;
  for (const auto& k : kernels) width = std::max(width, k.name.size());
  std::string out = fmt::format("{:<{}}  {:<7} {:>9} {:>4} {:>7} {:>7} {:>7} {:>14}\n", "kernel", width, "arch",
                                "regs/bdgt", "bars", "stack B", "spill>B", "spill<B", "smem B (+dyn)");
  for (const auto& k : kernels) {
    const KernelBudget* b = budget_for(k, budgets);
    const std::string regs = b ? fmt::format("{}/{}", k.registers, b->max_registers) : fmt::format("{}", k.registers);
    const std::string smem = b && b->dynamic_smem_bytes
                                 ? fmt::format("{}+{}", k.static_smem_bytes, b->dynamic_smem_bytes)
                                 : fmt::format("{}", k.static_smem_bytes);
    out += fmt::format("{:<{}}  {:<7} {:>9} {:>4} {:>7} {:>7} {:>7} {:>14}\n", k.name, width, k.arch, regs, k.barriers,
                       k.stack_frame_bytes, k.spill_store_bytes, k.spill_load_bytes, smem);
  }
  return out;
}

std::string flash_smem_unsupported(int head_dim, bool backward, size_t smem_optin) {
  if (head_dim != 64 && head_dim != 128) return {};  // flash_unsupported says why
  const int need = flash_smem_bytes(head_dim, backward);
  if (smem_optin >= static_cast<size_t>(need)) return {};
  return fmt::format(
      "our flash {} at head_dim {} needs {} bytes of shared memory per block; this GPU allows {} "
      "(use --impl cudnn or unfused)",
      backward ? "backward" : "forward", head_dim, need, smem_optin);
}

}  // namespace gcb::kernels::attn
