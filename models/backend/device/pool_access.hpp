// Which GPUs may read and write a device's memory pool: plain C++ (the CUDA calls come in as a
// function), so that the choice is tested without a GPU; cuda_device_ops.cpp applies it with
// cudaMemPoolSetAccess.
//
// Memory from a cudaMemPool is accessible to its own device only until the pool grants access to
// others (CUDA Programming Guide, "Stream Ordered Memory Allocator", Device Accessibility for
// Multi-GPU Support: cudaDeviceEnablePeerAccess does not cover pool memory). When one process
// drives several GPUs as rank threads, NCCL's P2P transport accesses the user buffers of the
// other GPUs directly (NCCL user guide, Environment Variables, NCCL_P2P_DIRECT_DISABLE: buffers
// "allocated with APIs which do not automatically make them accessible to other GPUs managed by
// the same process"), so every such pool grants access to every other GPU of the process that can
// reach it.
#pragma once

#include <functional>
#include <vector>

namespace gcb::models {

// The devices to which `device`'s pool grants read/write access: every device of
// `process_devices` other than `device` itself (each once) for which can_access(peer, device) —
// cudaDeviceCanAccessPeer(&ok, peer, device) — is true. Applied by every device of the process,
// this covers every ordered pair of peers that can reach each other.
std::vector<int> pool_access_peers(int device, const std::vector<int>& process_devices,
                                   const std::function<bool(int peer, int owner)>& can_access);

}  // namespace gcb::models
