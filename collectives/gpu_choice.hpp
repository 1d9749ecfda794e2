// Which CUDA device a rank of the World uses, and the check that no two ranks of one host share
// one. Plain C++ (device counts and hashed UUIDs come in), so both are tested without a GPU.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

namespace gcb {

// local_rank % device_count: with every GPU of the node visible, local rank r takes GPU r; with
// one GPU per rank (srun --gpus-per-task=1, a per-rank CUDA_VISIBLE_DEVICES) every rank sees its
// own GPU as device 0. More ranks than GPUs wrap around onto shared GPUs, which the UUID check
// below reports. -1 when the rank sees no device.
int device_for_local_rank(int local_rank, int device_count);
// The distinct devices that `local_size` rank threads of one process take (device_for_local_rank
// of each local rank), in order: the GPUs whose memory NCCL moves between directly inside that
// process. Empty when no device is visible.
std::vector<int> rank_thread_devices(int local_size, int device_count);

// What each rank says about its GPU: its host and the GPU's UUID, hashed.
struct GpuClaim {
  uint64_t host_hash = 0;
  uint64_t gpu_hash = 0;
};
// The first two ranks (lower index first) that claim the same GPU of the same host, if any.
std::optional<std::pair<size_t, size_t>> duplicate_gpu(const std::vector<GpuClaim>& claims);

}  // namespace gcb
