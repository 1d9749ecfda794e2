#include "models/backend_factory.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "core/error.hpp"
#include "models/cpu_backend.hpp"

namespace gcb::models {
namespace {

std::unique_ptr<Backend> make_cpu(const BackendSpec&) { return std::make_unique<CpuBackend>(); }

}  // namespace

const std::vector<ComputeBackend>& compute_backends() {
  static const std::vector<ComputeBackend> table = {
      {"cpu", MemorySpace::host, "", make_cpu},
      {"cuda", MemorySpace::device, "the CUDA training backend is not built in this binary (use --backend cpu)", nullptr},
  };
  return table;
}

std::string compute_backend_names() {
  std::vector<std::string_view> names;
  for (const auto& b : compute_backends()) names.push_back(b.name);
  return fmt::format("{}", fmt::join(names, ", "));
}

std::string backend_error(std::string_view name) {
  const auto& table = compute_backends();
  const auto it = std::find_if(table.begin(), table.end(), [name](const auto& b) { return b.name == name; });
  if (it == table.end()) return fmt::format("--backend {}: expected one of {}", name, compute_backend_names());
  if (!it->built()) return fmt::format("--backend {}: {}", name, it->missing);
  return "";
}

const ComputeBackend& compute_backend(std::string_view name) {
  const auto& table = compute_backends();
  const auto it = std::find_if(table.begin(), table.end(), [name](const auto& b) { return b.name == name; });
  if (it == table.end()) throw UsageError(fmt::format("--backend {}: expected one of {}", name, compute_backend_names()));
  return *it;
}

std::unique_ptr<Backend> make_backend(std::string_view name, const BackendSpec& spec) {
  if (const std::string e = backend_error(name); !e.empty()) throw UsageError(e);
  return compute_backend(name).make(spec);
}

}  // namespace gcb::models
