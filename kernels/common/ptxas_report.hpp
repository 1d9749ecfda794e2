// Per-kernel resource use as ptxas reports it with `-Xptxas -v` (registers, barriers, stack
// frame, spill stores/loads, static shared memory), parsed from the text nvcc writes to stderr.
// The build keeps that text beside every CUDA object (cmake/gcb-ptxas-log.sh) so the figures
// are checked and printed without a GPU and without cuobjdump. Plain C++.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace gcb::kernels {

struct KernelResources {
  std::string name;     // demangled, without the parameter list: "ns::kernel<__half, 64>"
  std::string mangled;  // as ptxas prints it
  std::string arch;     // "sm_90a"
  int registers = 0;
  int barriers = 0;
  long stack_frame_bytes = 0;
  long spill_store_bytes = 0;
  long spill_load_bytes = 0;
  long static_smem_bytes = 0;  // dynamic shared memory is the launcher's, not in the report
  bool spills() const { return spill_store_bytes > 0 || spill_load_bytes > 0 || stack_frame_bytes > 0; }
};

// Every entry function ("Compiling entry function 'X' for 'sm_NN'") with the figures of its
// "Function properties for X" and "Used N registers, ..." lines. Lines of other tools and
// non-entry functions are ignored; an entry without a "Used" line is dropped.
std::vector<KernelResources> parse_ptxas_report(std::string_view text);

// The C++ name without its parameter list ("void a::f<int>(int*)" → "a::f<int>"), or the input
// when it is not a demangled function name.
std::string kernel_display_name(std::string_view demangled);

}  // namespace gcb::kernels
