// The one place compute backends are named: a table of every known backend and how to make one.
// Adding a backend means its file pair, one row here and one CMake line; nothing else names a
// backend class.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "models/backend/backend.hpp"
#include "models/model/attention_choice.hpp"
#include "models/theory/device_peak.hpp"

namespace gcb {
struct RankContext;
}

namespace gcb::models {

// What a rank needs to make its backend.
struct BackendSpec {
  int device = -1;  // the rank's GPU (the World's RankContext::device); -1 on host-only launches
  AttentionRequest attn =
      AttentionRequest::automatic;  // CUDA attention: auto or a registry row that trains (attention_choice.hpp)
  bool lt_gelu = false;             // CUDA: the MLP's GELU in cuBLASLt's epilogue (cuda_backend.hpp)
  // CUDA: every GPU this process drives (rank threads), to which the rank's memory pool grants
  // access (pool_access.hpp); empty when the process drives one GPU.
  std::vector<int> process_devices;
};

// BackendSpec::process_devices of a rank of the World: the devices of all its rank threads
// (gpu_choice.hpp rank_thread_devices), none when ranks are processes or have no device.
std::vector<int> process_devices(const gcb::RankContext& rc);

struct ComputeBackend {
  std::string_view name;
  MemorySpace memory;        // where its tensors live: the World picks a communicator moving the same
  std::string_view missing;  // why it is absent from this binary (when make is null)
  std::unique_ptr<Backend> (*make)(const BackendSpec&);
  // Why it cannot run on this machine now ("" when it can; null: always can), e.g. no GPU.
  std::string (*unavailable)() = nullptr;
  // The MFU denominator of device `device` from a spec table (null, or nullopt for a device the
  // table lacks: the run measures the backend's own GEMM instead).
  std::optional<PeakFlops> (*peak)(int device) = nullptr;
  bool built() const { return make != nullptr; }
};

const std::vector<ComputeBackend>& compute_backends();
std::string compute_backend_names();  // "cpu, cuda"
// Why `name` cannot be a run's backend ("" when it is a built row of the table), without a flag's
// name: "tpu (did you mean 'cpu'?): expected one of cpu, cuda", or "cuda: <why it is not built>".
// `gcbench train --backend` checks its value with it, so a request holds a built row.
std::string backend_refusal(std::string_view name);
// The row of `name`; gcb::UsageError naming the known backends.
const ComputeBackend& compute_backend(std::string_view name);
// The row's backend; gcb::UsageError saying why when the row is not built into this binary.
std::unique_ptr<Backend> make_backend(const ComputeBackend& backend, const BackendSpec& spec = {});
// "" when the row is built, else "--backend NAME: <why it is not built>".
std::string backend_error(const ComputeBackend& backend);
// "" when the built backend can run here, else why not (results are then WAIVED).
std::string backend_unavailable(const ComputeBackend& backend);

}  // namespace gcb::models
