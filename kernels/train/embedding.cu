// Embedding of a vocabulary shard (Megatron's vocabulary-parallel embedding, Shoeybi et al. 2019
// §3): forward gathers rows of wte (and adds wpe); backward sums each token's output gradients
// into its wte row. Repeated tokens would collide under atomics, so the backward sorts the
// shard's tokens (stable radix sort, CUB) and lets the first occurrence of each token add its run
// of rows in row order: deterministic, as llm.c's encoder_backward buckets are.
#include <cub/device/device_radix_sort.cuh>

#include "kernels/train/train_common.cuh"
#include "kernels/train/train_kernels.hpp"

namespace gcb::kernels::train {
namespace {

constexpr int kThreads = 256;
constexpr size_t kAlign = 256;
size_t aligned(size_t bytes) { return (bytes + kAlign - 1) / kAlign * kAlign; }
__device__ size_t at(int r, int C) { return static_cast<size_t>(r) * static_cast<size_t>(C); }

// One thread per (row, chunk of kChunk columns); a row's last chunk may be partial.
template <typename T>
__global__ void embedding_forward_kernel(T* out, const int32_t* tokens, const T* wte, int v0, int V, const T* wpe,
                                         int T_, int rows, int C, bool vec) {
  const int chunks = (C + kChunk - 1) / kChunk;
  const size_t id = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (id >= static_cast<size_t>(rows) * static_cast<size_t>(chunks)) return;
  const int row = static_cast<int>(id / static_cast<size_t>(chunks));
  const int col = static_cast<int>(id % static_cast<size_t>(chunks)) * kChunk;
  const size_t width = static_cast<size_t>(min(kChunk, C - col));
  const int tok = tokens[row];
  float e[kChunk] = {}, p[kChunk] = {};
  if (tok >= v0 && tok < v0 + V) load_chunk(wte + at(tok - v0, C) + col, 0, width, vec, e);
  if (wpe != nullptr) load_chunk(wpe + at(row % T_, C) + col, 0, width, vec, p);
#pragma unroll
  for (int k = 0; k < kChunk; ++k) e[k] += p[k];
  store_chunk(out + at(row, C) + col, 0, width, vec, e);
}

// Sort keys: the token's row in the shard, or V for tokens outside it (sorted last, skipped).
__global__ void shard_keys_kernel(int32_t* keys, int32_t* rows_of, const int32_t* tokens, int v0, int V, int rows) {
  const int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= rows) return;
  const int tok = tokens[r];
  keys[r] = tok >= v0 && tok < v0 + V ? tok - v0 : V;
  rows_of[r] = r;
}

// Thread (j, col): if sorted position j starts a run of one token, add the run's gradients.
template <typename T>
__global__ void embedding_wte_kernel(T* dwte, const T* dout, const int32_t* keys, const int32_t* rows_of, int V,
                                     int rows, int C) {
  const int j = blockIdx.x;
  const int col = blockIdx.y * blockDim.x + threadIdx.x;
  if (col >= C) return;
  const int key = keys[j];
  if (key == V || (j > 0 && keys[j - 1] == key)) return;
  float s = 0.0f;
  for (int k = j; k < rows && keys[k] == key; ++k) s += to_float(dout[at(rows_of[k], C) + col]);
  T* d = dwte + at(key, C) + col;
  *d = from_float<T>(to_float(*d) + s);
}

// dwpe[t, col] += Σ_b dout[b·T + t, col].
template <typename T>
__global__ void embedding_wpe_kernel(T* dwpe, const T* dout, int B, int T_, int C) {
  const int t = blockIdx.x;
  const int col = blockIdx.y * blockDim.x + threadIdx.x;
  if (col >= C) return;
  float s = 0.0f;
  for (int b = 0; b < B; ++b) s += to_float(dout[at(b * T_ + t, C) + col]);
  T* d = dwpe + at(t, C) + col;
  *d = from_float<T>(to_float(*d) + s);
}

int key_bits(int V) {
  int bits = 1;
  while ((1LL << bits) <= V) ++bits;  // keys are 0 … V
  return bits;
}

size_t sort_temp_bytes(int rows) {
  size_t bytes = 0;
  CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, bytes, static_cast<const int32_t*>(nullptr),
                                             static_cast<int32_t*>(nullptr), static_cast<const int32_t*>(nullptr),
                                             static_cast<int32_t*>(nullptr), rows));
  return bytes;
}

}  // namespace

void embedding_forward(DType t, void* out, const int32_t* tokens, const void* wte, int v0, int V, const void* wpe,
                       int B, int T, int C, gpu::Stream stream) {
  const NvtxRange range("embedding_forward");
  GCB_CHECK(B > 0 && T > 0 && C > 0 && V >= 0, "embedding_forward: bad shape");
  const int rows = B * T;
  // Vector loads need every row start aligned: C a multiple of kChunk and aligned bases.
  const bool vec = C % kChunk == 0 && aligned16(out) && aligned16(wte) && (wpe == nullptr || aligned16(wpe));
  const size_t threads = static_cast<size_t>(rows) * static_cast<size_t>(ceil_div(C, kChunk));
  dispatch(t, "embedding_forward", [&](auto tag) {
    using E = decltype(tag);
    embedding_forward_kernel<E>
        <<<static_cast<unsigned>(ceil_div<size_t>(threads, kChunkThreads)), kChunkThreads, 0, st(stream)>>>(
            static_cast<E*>(out), tokens, static_cast<const E*>(wte), v0, V, static_cast<const E*>(wpe), T, rows, C,
            vec);
  });
  check_launch();
}

size_t embedding_backward_workspace(int rows) {
  return 4 * aligned(static_cast<size_t>(rows) * sizeof(int32_t)) + aligned(sort_temp_bytes(rows));
}

void embedding_backward(DType t, void* dwte, void* dwpe, const void* dout, const int32_t* tokens, int v0, int V, int B,
                        int T, int C, void* workspace, size_t workspace_bytes, gpu::Stream stream) {
  const NvtxRange range("embedding_backward");
  GCB_CHECK(B > 0 && T > 0 && C > 0 && V >= 0, "embedding_backward: bad shape");
  const int rows = B * T;
  GCB_CHECK(workspace_bytes >= embedding_backward_workspace(rows), "embedding_backward: workspace too small");
  const size_t ints = aligned(static_cast<size_t>(rows) * sizeof(int32_t));
  auto* base = static_cast<char*>(workspace);
  auto* keys_in = reinterpret_cast<int32_t*>(base);
  auto* keys = reinterpret_cast<int32_t*>(base + ints);
  auto* rows_in = reinterpret_cast<int32_t*>(base + 2 * ints);
  auto* rows_of = reinterpret_cast<int32_t*>(base + 3 * ints);
  void* temp = base + 4 * ints;
  size_t temp_bytes = workspace_bytes - 4 * ints;
  const cudaStream_t s = st(stream);
  dispatch(t, "embedding_backward", [&](auto tag) {
    using E = decltype(tag);
    const unsigned col_blocks = static_cast<unsigned>(ceil_div(C, kThreads));
    if (V > 0) {
      shard_keys_kernel<<<static_cast<unsigned>(ceil_div(rows, kThreads)), kThreads, 0, s>>>(keys_in, rows_in, tokens,
                                                                                             v0, V, rows);
      check_launch();
      CUDA_CHECK(
          cub::DeviceRadixSort::SortPairs(temp, temp_bytes, keys_in, keys, rows_in, rows_of, rows, 0, key_bits(V), s));
      embedding_wte_kernel<E><<<dim3(static_cast<unsigned>(rows), col_blocks), kThreads, 0, s>>>(
          static_cast<E*>(dwte), static_cast<const E*>(dout), keys, rows_of, V, rows, C);
      check_launch();
    }
    if (dwpe != nullptr) {
      embedding_wpe_kernel<E><<<dim3(static_cast<unsigned>(T), col_blocks), kThreads, 0, s>>>(
          static_cast<E*>(dwpe), static_cast<const E*>(dout), B, T, C);
    }
  });
  check_launch();
}

}  // namespace gcb::kernels::train
