// The one place compute backends are named: a table of every known backend and how to make one.
// Adding a backend (the CUDA training backend is next) means its file pair, one row here and one
// CMake line; nothing else names a backend class.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "models/backend.hpp"

namespace gcb::models {

// What a rank needs to make its backend.
struct BackendSpec {
  int device = -1;  // the rank's GPU (the World's RankContext::device); -1 on host-only launches
};

struct ComputeBackend {
  std::string_view name;
  MemorySpace memory;        // where its tensors live: the World picks a communicator moving the same
  std::string_view missing;  // why it is absent from this binary (when make is null)
  std::unique_ptr<Backend> (*make)(const BackendSpec&);
  bool built() const { return make != nullptr; }
};

const std::vector<ComputeBackend>& compute_backends();
std::string compute_backend_names();  // "cpu, cuda"
// The row of `name`; gcb::UsageError naming the known backends.
const ComputeBackend& compute_backend(std::string_view name);
// gcb::UsageError naming the known backends, or saying why a known one is not built.
std::unique_ptr<Backend> make_backend(std::string_view name, const BackendSpec& spec = {});
// "" when `name` is known and built, else the one-line reason make_backend would give.
std::string backend_error(std::string_view name);

}  // namespace gcb::models
