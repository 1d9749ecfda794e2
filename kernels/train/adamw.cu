// Multi-tensor AdamW (adamw_math.hpp for the arithmetic): one launch updates up to 30 tensors in
// chunks of 65536 elements, one block per chunk, from the table multi_tensor_plan.hpp builds on the
// host (apex csrc/multi_tensor_apply.cuh's TensorListMetadata: addresses per tensor slot, then
// block → slot and block → chunk), passed by value as the kernel's parameter. A longer list takes
// several launches. Mixed precision keeps w in the fp32 master copy and stores it rounded into the
// bf16 parameters. Compiles, unvalidated (never run on a GPU).
#include "kernels/train/train_common.cuh"
#include "kernels/train/train_kernels.hpp"

namespace gcb::kernels::train {
namespace {

constexpr MultiTensorLimits kLimits{};
constexpr size_t kMaxTensors = 30, kMaxBlocks = 320;
static_assert(kLimits.max_tensors == kMaxTensors && kLimits.max_blocks == kMaxBlocks);

struct AdamWTable {
  void* params[kMaxTensors];
  const void* grads[kMaxTensors];
  float* m[kMaxTensors];
  float* v[kMaxTensors];
  float* master[kMaxTensors];  // null: fp32, params are the weights
  size_t n[kMaxTensors];
  bool vec[kMaxTensors];  // every pointer of the slot 16-byte aligned
  uint8_t block_slot[kMaxBlocks];
  uint32_t block_chunk[kMaxBlocks];  // the block's elements start at block_chunk · chunk
};
// Within the 4 KiB of kernel parameters every CUDA version accepts (apex's TODO on the limit).
static_assert(sizeof(AdamWTable) + sizeof(AdamWStep) + sizeof(size_t) <= 4096);

template <typename T>
__global__ void adamw_multi_kernel(AdamWTable tab, size_t chunk, AdamWStep a) {
  const int s = tab.block_slot[blockIdx.x];
  const size_t begin = static_cast<size_t>(tab.block_chunk[blockIdx.x]) * chunk;
  const size_t n = tab.n[s] - begin < chunk ? tab.n[s] - begin : chunk;  // this block's elements
  T* params = static_cast<T*>(tab.params[s]) + begin;
  const T* grads = static_cast<const T*>(tab.grads[s]) + begin;
  float* m = tab.m[s] + begin;
  float* v = tab.v[s] + begin;
  float* master = tab.master[s] != nullptr ? tab.master[s] + begin : nullptr;
  const bool vec = tab.vec[s];  // chunk is a multiple of kChunk, so every block's start stays aligned
  for (size_t i = static_cast<size_t>(threadIdx.x) * kChunk; i < n; i += static_cast<size_t>(blockDim.x) * kChunk) {
    float g[kChunk], w[kChunk], mi[kChunk], vi[kChunk];
    load_chunk(grads, i, n, vec, g);
    load_chunk(m, i, n, vec, mi);
    load_chunk(v, i, n, vec, vi);
    if (master != nullptr) {
      load_chunk(master, i, n, vec, w);
    } else {
      load_chunk(params, i, n, vec, w);
    }
#pragma unroll
    for (int k = 0; k < kChunk; ++k) adamw_element(g[k], mi[k], vi[k], w[k], a);
    store_chunk(m, i, n, vec, mi);
    store_chunk(v, i, n, vec, vi);
    if (master != nullptr) store_chunk(master, i, n, vec, w);
    store_chunk(params, i, n, vec, w);
  }
}

}  // namespace

void adamw_multi(DType t, const std::vector<AdamWTensor>& tensors, const AdamWStep& a, gpu::Stream stream) {
  const NvtxRange range("adamw_multi");
  static_assert(kLimits.chunk % kChunk == 0);
  std::vector<size_t> sizes;
  for (const AdamWTensor& x : tensors) {
    GCB_CHECK(x.master != nullptr || t == DType::f32, "adamw: bf16 parameters need fp32 master weights");
    sizes.push_back(x.n);
  }
  for (const MultiTensorLaunch& l : plan_multi_tensor(sizes, kLimits)) {
    AdamWTable tab{};
    for (size_t s = 0; s < l.tensors.size(); ++s) {
      const AdamWTensor& x = tensors[l.tensors[s]];
      tab.params[s] = x.params;
      tab.grads[s] = x.grads;
      tab.m[s] = x.m;
      tab.v[s] = x.v;
      tab.master[s] = x.master;
      tab.n[s] = x.n;
      tab.vec[s] = aligned16(x.params) && aligned16(x.grads) && aligned16(x.m) && aligned16(x.v) &&
                   (x.master == nullptr || aligned16(x.master));
    }
    for (size_t b = 0; b < l.blocks.size(); ++b) {
      tab.block_slot[b] = static_cast<uint8_t>(l.blocks[b].slot);
      tab.block_chunk[b] = static_cast<uint32_t>(l.blocks[b].offset / kLimits.chunk);
    }
    dispatch(t, "adamw", [&](auto tag) {
      using T = decltype(tag);
      adamw_multi_kernel<T>
          <<<static_cast<unsigned>(l.blocks.size()), kChunkThreads, 0, st(stream)>>>(tab, kLimits.chunk, a);
    });
    check_launch();
  }
}

}  // namespace gcb::kernels::train
