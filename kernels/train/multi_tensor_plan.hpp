// The chunk table of a multi-tensor launch, as apex's multi_tensor_apply builds it on the host
// (NVIDIA/apex csrc/multi_tensor_apply.cuh; PyTorch's _foreach kernels, aten/src/ATen/native/cuda/
// MultiTensorApply.cuh): a list of tensors is cut into chunks of at most `chunk` elements, one block
// per chunk, and packed into launches of at most `max_tensors` tensors and `max_blocks` blocks, so
// one launch updates many tensors and a long list takes several launches. A tensor whose chunks do
// not all fit in one launch continues in the next; empty tensors get no block. Plain C++: the CUDA
// kernel (adamw.cu) and its CPU reference (adamw_math.hpp) walk the same table, and the tests check
// the table itself exhaustively.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/error.hpp"

namespace gcb::kernels::train {

// apex's limits for a depth-5 list (params, grads, m, v, master): 30 tensors and 320 blocks per
// launch keep the table inside the classic 4 KiB of kernel parameters; chunks of 65536 elements
// (apex/optimizers/fused_adam.py, multi_tensor_applier(2048 * 32); PyTorch kChunkSize).
struct MultiTensorLimits {
  size_t max_tensors = 30;
  size_t max_blocks = 320;
  size_t chunk = 65536;
};

// Block b of a launch updates elements [offset, offset + length) of tensor slot `slot`, and the
// slot names the caller's tensor (MultiTensorLaunch::tensors[slot]). offset is a multiple of chunk.
struct ChunkEntry {
  uint32_t slot = 0;
  size_t offset = 0;
  size_t length = 0;
};
struct MultiTensorLaunch {
  std::vector<size_t> tensors;     // indices into the caller's list, one per slot
  std::vector<ChunkEntry> blocks;  // one per block of the launch
};

inline std::vector<MultiTensorLaunch> plan_multi_tensor(const std::vector<size_t>& sizes,
                                                        const MultiTensorLimits& lim = {}) {
  GCB_CHECK(lim.max_tensors > 0 && lim.max_blocks > 0 && lim.chunk > 0, "multi-tensor limits must be positive");
  std::vector<MultiTensorLaunch> launches(1);
  for (size_t t = 0; t < sizes.size(); ++t) {
    for (size_t offset = 0; offset < sizes[t]; offset += lim.chunk) {
      MultiTensorLaunch* l = &launches.back();
      const bool new_tensor = l->tensors.empty() || l->tensors.back() != t;
      if (l->blocks.size() == lim.max_blocks || (new_tensor && l->tensors.size() == lim.max_tensors)) {
        l = &launches.emplace_back();
      }
      if (l->tensors.empty() || l->tensors.back() != t) l->tensors.push_back(t);
      const size_t length = sizes[t] - offset < lim.chunk ? sizes[t] - offset : lim.chunk;
      l->blocks.push_back({static_cast<uint32_t>(l->tensors.size() - 1), offset, length});
    }
  }
  if (launches.back().blocks.empty()) launches.pop_back();
  return launches;
}

}  // namespace gcb::kernels::train
