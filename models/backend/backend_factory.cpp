// The compute backend table (backend_factory.hpp): cpu and cuda, how to make each, its peak FLOP/s and why it is
// unavailable; compute_backend_names and the refusal of a name the table lacks or has not built.
#include "models/backend/backend_factory.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "collectives/gpu_choice.hpp"
#include "collectives/world.hpp"
#include "core/error.hpp"
#include "core/gpu.hpp"
#include "core/suggest.hpp"
#include "gcb/config.hpp"
#include "models/backend/cpu/cpu_backend.hpp"
#if GCB_HAVE_CUDA_TRAINING
#include "collectives/factory.hpp"
#include "models/backend/cuda/cuda_backend.hpp"
#endif

namespace gcb::models {
namespace {

std::unique_ptr<Backend> make_cpu(const BackendSpec&) { return std::make_unique<CpuBackend>(); }

#if GCB_HAVE_CUDA_TRAINING
std::unique_ptr<Backend> make_cuda(const BackendSpec& spec) {
  return std::make_unique<CudaBackend>(
      CudaBackendOptions{spec.device < 0 ? 0 : spec.device, spec.attn, spec.lt_gelu, spec.process_devices});
}

std::string cuda_unavailable() {
  if (gpu::device_count() == 0) return "no GPU: " + gpu::runtime().unavailable_reason;
  if (!communicator_backend_built("nccl"))
    return "the cuda backend's ranks talk through NCCL, which this binary was built without";
  return "";
}

std::optional<PeakFlops> cuda_peak(int device) {
  const auto& devices = gpu::runtime().devices;
  if (device < 0 || device >= static_cast<int>(devices.size())) return std::nullopt;
  return spec_peak_flops(devices[static_cast<size_t>(device)].name);
}
#endif

}  // namespace

const std::vector<ComputeBackend>& compute_backends() {
  static const std::vector<ComputeBackend> table = {
    {"cpu", MemorySpace::host, "", make_cpu},
#if GCB_HAVE_CUDA_TRAINING
    {"cuda", MemorySpace::device, "", make_cuda, cuda_unavailable, cuda_peak},
#else
    {"cuda", MemorySpace::device, "this binary was built without CUDA and cuBLASLt (use --backend cpu)", nullptr},
#endif
  };
  return table;
}

std::string compute_backend_names() {
  std::vector<std::string_view> names;
  for (const auto& b : compute_backends()) names.push_back(b.name);
  return fmt::format("{}", fmt::join(names, ", "));
}

std::string backend_refusal(std::string_view name) {
  const auto& table = compute_backends();
  const auto it = std::find_if(table.begin(), table.end(), [name](const auto& b) { return b.name == name; });
  if (it == table.end()) {
    std::vector<std::string> names;
    for (const auto& b : table) names.emplace_back(b.name);
    return fmt::format("{}{}: expected one of {}", name, did_you_mean(name, names), compute_backend_names());
  }
  if (!it->built()) return fmt::format("{}: {}", name, it->missing);
  return "";
}

std::string backend_error(const ComputeBackend& backend) {
  return backend.built() ? "" : fmt::format("--backend {}: {}", backend.name, backend.missing);
}

std::string backend_unavailable(const ComputeBackend& backend) {
  return backend.unavailable == nullptr ? "" : backend.unavailable();
}

const ComputeBackend& compute_backend(std::string_view name) {
  const auto& table = compute_backends();
  const auto it = std::find_if(table.begin(), table.end(), [name](const auto& b) { return b.name == name; });
  if (it == table.end()) throw UsageError("--backend " + backend_refusal(name));
  return *it;
}

std::vector<int> process_devices(const gcb::RankContext& rc) {
  if (rc.processes || rc.device < 0) return {};
  return rank_thread_devices(rc.local_size, gpu::device_count());
}

std::unique_ptr<Backend> make_backend(const ComputeBackend& backend, const BackendSpec& spec) {
  if (const std::string e = backend_error(backend); !e.empty()) throw UsageError(e);
  return backend.make(spec);
}

}  // namespace gcb::models
