// Build-vs-device decisions as pure functions (see device_support.hpp).
#include "core/device_support.hpp"

#include <fmt/format.h>

#include <charconv>

#include "core/error.hpp"

namespace gcb::gpu {

std::vector<CudaArch> parse_cuda_architectures(std::string_view list) {
  std::vector<CudaArch> out;
  size_t start = 0;
  while (start <= list.size()) {
    const size_t end = std::min(list.find_first_of(";,", start), list.size());
    std::string_view entry = list.substr(start, end - start);
    start = end + 1;
    if (entry.empty()) continue;
    CudaArch a;
    if (entry.ends_with("-real")) {
      a.virtual_ = false;
      entry.remove_suffix(5);
    } else if (entry.ends_with("-virtual")) {
      a.real = false;
      entry.remove_suffix(8);
    }
    if (!entry.empty() && (entry.back() == 'a' || entry.back() == 'f')) {
      a.suffix = entry.back();
      entry.remove_suffix(1);
    }
    const auto [p, ec] = std::from_chars(entry.data(), entry.data() + entry.size(), a.sm);
    if (ec != std::errc() || p != entry.data() + entry.size() || a.sm < 10)
      throw UsageError(
          fmt::format("CUDA architecture list '{}': '{}' is not an architecture such as 90, 80-real, "
                      "120-virtual or 90a",
                      list, entry));
    out.push_back(a);
  }
  return out;
}

bool archs_run_on(const std::vector<CudaArch>& archs, int major, int minor) {
  const int cc = 10 * major + minor;
  for (const CudaArch& a : archs) {
    const int a_major = a.sm / 10;
    if (a.real) {
      if (a.suffix == 'a' && a.sm == cc) return true;
      if (a.suffix != 'a' && a_major == major && a.sm <= cc) return true;
    }
    // PTX of an 'a' or 'f' target is tied to that architecture (family) too.
    if (a.virtual_) {
      if (a.suffix == 0 && a.sm <= cc) return true;
      if (a.suffix == 'a' && a.sm == cc) return true;
      if (a.suffix == 'f' && a_major == major && a.sm <= cc) return true;
    }
  }
  return false;
}

std::string arch_for(int major, int minor) { return fmt::format("{}{}", major, minor); }

std::string no_kernel_image_reason(int index, std::string_view name, int major, int minor,
                                   std::string_view build_archs) {
  const std::string sm = arch_for(major, minor);
  std::string built(build_archs);
  for (char& c : built)
    if (c == ',') c = ';';
  return fmt::format(
      "GPU {} ({}, sm_{}): no kernel image for sm_{} in this build (built for {}) — rebuild with "
      "GCB_CUDA_ARCHITECTURES=\"{};{}-real\"",
      index, name, sm, sm, built, built, sm);
}

std::string driver_too_old_reason(int driver, int runtime) {
  if (driver <= 0 || driver >= runtime || driver / 1000 == runtime / 1000) return {};
  return fmt::format(
      "the NVIDIA driver supports CUDA {}.{}, this build's runtime is CUDA {}.{} — update the driver "
      "(CUDA {} needs driver branch {} or newer) or build with a CUDA {}.x toolkit",
      driver / 1000, driver % 1000 / 10, runtime / 1000, runtime % 1000 / 10, runtime / 1000,
      runtime / 1000 >= 13 ? "R580" : "R525", driver / 1000);
}

}  // namespace gcb::gpu
