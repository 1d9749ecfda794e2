// DeviceOps on the CUDA runtime (device_ops.hpp): one call per function, on one device, with a
// memory pool of its own whose release threshold is unlimited, so that memory freed in stream
// order stays with the pool and the next allocation of a step reuses it without a driver call.
// Built with CUDA only; compiles, unvalidated (no GPU has run it).
#pragma once

#include <memory>
#include <vector>

#include "models/backend/device/device_ops.hpp"

namespace gcb::models {

// Selects `device` on the calling thread and creates its pool, granting read/write access to the
// other GPUs of `process_devices` that can reach it (pool_access.hpp), and one non-blocking
// stream (the backend's compute stream, owned by the returned object).
std::unique_ptr<DeviceOps> make_cuda_device_ops(int device, const std::vector<int>& process_devices = {});
DeviceStream cuda_compute_stream(const DeviceOps& ops);

}  // namespace gcb::models
