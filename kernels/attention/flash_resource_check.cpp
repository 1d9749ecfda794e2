// gcb-flash-resources: the build-time resource check (cmake/GcbResourceCheck.cmake runs it after
// every CUDA object is compiled, and ctest runs it again). Reads the ptxas report kept beside
// each CUDA object, prints every kernel's registers, barriers, stack frame, spills and shared
// memory, and fails when a flash kernel breaks its budget (flash_budget.hpp).
//   gcb-flash-resources --objects LIST [--out TABLE]
// LIST names one CUDA object per line; its report is <object>.ptxas.txt. TABLE receives the
// printed table when the check passes. Exit 0: pass; 1: a budget is broken; 2: bad arguments or
// a missing report.
#include <fmt/format.h>

#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "kernels/attention/flash_budget.hpp"
#include "kernels/common/ptxas_report.hpp"

namespace {

bool read_file(const std::string& path, std::string& text) {
  std::ifstream in(path);
  if (!in) return false;
  std::ostringstream s;
  s << in.rdbuf();
  text = s.str();
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  namespace ka = gcb::kernels::attn;
  std::string objects_path, out_path;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--objects")
      objects_path = argv[i + 1];
    else if (flag == "--out")
      out_path = argv[i + 1];
  }
  std::string list;
  if (objects_path.empty() || !read_file(objects_path, list)) {
    std::cerr << "usage: gcb-flash-resources --objects LIST [--out TABLE] (LIST: one CUDA object per line)\n";
    return 2;
  }
  std::vector<gcb::kernels::KernelResources> kernels;
  std::istringstream objects(list);
  for (std::string object; std::getline(objects, object);) {
    if (object.empty()) continue;
    std::string report;
    if (!read_file(object + ".ptxas.txt", report)) {
      std::cerr << "gcb-flash-resources: no ptxas report " << object
                << ".ptxas.txt (CUDA objects are compiled through cmake/gcb-ptxas-log.sh)\n";
      return 2;
    }
    for (auto& k : gcb::kernels::parse_ptxas_report(report)) kernels.push_back(std::move(k));
  }
  const auto budgets = ka::flash_kernel_budgets();
  const std::string table = ka::resource_table(kernels, budgets);
  std::cout << "Kernel resources (ptxas -v; regs/bdgt: registers per thread / flash budget; smem: static + dynamic)\n"
            << table;
  const auto failures = ka::check_flash_budgets(kernels, budgets);
  if (!failures.empty()) {
    std::cout << fmt::format("FAIL: {} flash-kernel budget violation(s)\n", failures.size());
    for (const auto& f : failures) std::cout << "  " << f << "\n";
    return 1;
  }
  std::cout << fmt::format("PASS: {} kernels, flash kernels within budget (no spills)\n", kernels.size());
  if (!out_path.empty()) std::ofstream(out_path) << table;
  return 0;
}
