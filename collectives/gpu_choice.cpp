// gpu_choice.hpp: the CUDA device of a local rank (device_for_local_rank, rank_thread_devices) and duplicate_gpu, the
// check that no two ranks of a host claim one GPU.
#include "collectives/gpu_choice.hpp"

#include <algorithm>

namespace gcb {

int device_for_local_rank(int local_rank, int device_count) {
  if (device_count <= 0 || local_rank < 0) return -1;
  return local_rank % device_count;
}

std::vector<int> rank_thread_devices(int local_size, int device_count) {
  std::vector<int> out;
  for (int r = 0; r < local_size; ++r) {
    const int d = device_for_local_rank(r, device_count);
    if (d >= 0 && std::find(out.begin(), out.end(), d) == out.end()) out.push_back(d);
  }
  return out;
}

std::optional<std::pair<size_t, size_t>> duplicate_gpu(const std::vector<GpuClaim>& claims) {
  for (size_t r = 0; r < claims.size(); ++r)
    for (size_t q = 0; q < r; ++q)
      if (claims[q].host_hash == claims[r].host_hash && claims[q].gpu_hash == claims[r].gpu_hash)
        return std::pair{q, r};
  return std::nullopt;
}

}  // namespace gcb
