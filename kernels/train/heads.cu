// The head-major layout our flash kernels and cuDNN SDPA read ([B, NH, T, hs], attention_shape.hpp)
// from the row-major activations the model keeps ([B, T, width], heads contiguous in each row),
// and back (llm.c's permute_kernel / unpermute_kernel). A head's hs elements are contiguous on both
// sides, so where hs, the row width and the column offset are multiples of kChunk and both
// pointers 16-byte aligned (GPT-2's hs 64 in bf16: every attention permute), each thread copies
// kChunk consecutive elements as whole 16-byte vectors and finds them with 32-bit index arithmetic;
// otherwise one thread per destination element (the writes coalesced on the heads side).
#include "kernels/train/train_common.cuh"
#include "kernels/train/train_kernels.hpp"

namespace gcb::kernels::train {
namespace {

constexpr int kThreads = 256;

struct Layout {
  int B, T, NH, hs, width, col;
  __device__ size_t rows_index(size_t heads_index) const {
    const size_t d = heads_index % hs, t = heads_index / hs % T, h = heads_index / (static_cast<size_t>(hs) * T) % NH,
                 b = heads_index / (static_cast<size_t>(hs) * T * NH);
    return (b * T + t) * static_cast<size_t>(width) + col + h * hs + d;
  }
  // Chunk c (of kChunk elements, hs/kChunk per head row) in the rows layout, in 32-bit arithmetic
  // (chunks() < 2³² checked on the host): the heads-side offset is c·kChunk.
  __device__ size_t rows_chunk(unsigned c) const {
    const unsigned per_head = static_cast<unsigned>(hs) / kChunk;
    const unsigned d = c % per_head * kChunk, bht = c / per_head;
    const unsigned t = bht % static_cast<unsigned>(T), bh = bht / static_cast<unsigned>(T);
    const unsigned h = bh % static_cast<unsigned>(NH), b = bh / static_cast<unsigned>(NH);
    return (static_cast<size_t>(b) * static_cast<size_t>(T) + t) * static_cast<size_t>(width) +
           static_cast<size_t>(col) + static_cast<size_t>(h) * static_cast<size_t>(hs) + d;
  }
  size_t elements() const { return static_cast<size_t>(B) * T * NH * hs; }
};

template <typename T>
__global__ void to_heads_kernel(T* dst, const T* src, Layout l, size_t n) {
  const size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) dst[i] = src[l.rows_index(i)];
}

// Writes are strided here; the reads are coalesced. Either way one side is.
template <typename T>
__global__ void to_rows_kernel(T* dst, const T* src, Layout l, size_t n) {
  const size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) dst[l.rows_index(i)] = src[i];
}

// kChunk elements of T as whole 16-byte vectors (one of bf16, two of fp32).
template <typename T>
__device__ inline void copy_chunk(T* dst, const T* src) {
  constexpr int vectors = kChunk * static_cast<int>(sizeof(T)) / 16;
#pragma unroll
  for (int v = 0; v < vectors; ++v) reinterpret_cast<int4*>(dst)[v] = reinterpret_cast<const int4*>(src)[v];
}

template <typename T, bool kToHeads>
__global__ void chunk_permute_kernel(T* dst, const T* src, Layout l, unsigned chunks) {
  const unsigned c = blockIdx.x * blockDim.x + threadIdx.x;
  if (c >= chunks) return;
  const size_t heads = static_cast<size_t>(c) * kChunk, rows = l.rows_chunk(c);
  if constexpr (kToHeads)
    copy_chunk(dst + heads, src + rows);
  else
    copy_chunk(dst + rows, src + heads);
}

// The chunked kernel applies: hs, width and col multiples of kChunk, both pointers 16-byte aligned,
// and the chunk count within 32 bits.
bool chunked(const Layout& l, const void* dst, const void* src) {
  return l.hs % kChunk == 0 && l.width % kChunk == 0 && l.col % kChunk == 0 && aligned16(dst) && aligned16(src) &&
         l.elements() / kChunk < (size_t{1} << 32);
}

template <bool kToHeads>
void permute(DType t, void* dst, const void* src, const Layout& l, gpu::Stream stream) {
  const size_t n = l.elements();
  const bool vec = chunked(l, dst, src);
  dispatch(t, kToHeads ? "rows_to_heads" : "heads_to_rows", [&](auto tag) {
    using E = decltype(tag);
    if (vec) {
      const auto chunks = static_cast<unsigned>(n / kChunk);
      chunk_permute_kernel<E, kToHeads>
          <<<static_cast<unsigned>(ceil_div<size_t>(chunks, kThreads)), kThreads, 0, st(stream)>>>(
              static_cast<E*>(dst), static_cast<const E*>(src), l, chunks);
    } else if constexpr (kToHeads) {
      to_heads_kernel<E><<<static_cast<unsigned>(ceil_div<size_t>(n, kThreads)), kThreads, 0, st(stream)>>>(
          static_cast<E*>(dst), static_cast<const E*>(src), l, n);
    } else {
      to_rows_kernel<E><<<static_cast<unsigned>(ceil_div<size_t>(n, kThreads)), kThreads, 0, st(stream)>>>(
          static_cast<E*>(dst), static_cast<const E*>(src), l, n);
    }
  });
  check_launch();
}

Layout layout(int width, int col, int B, int T, int NH, int hs) {
  GCB_CHECK(B > 0 && T > 0 && NH > 0 && hs > 0 && col >= 0 && col + NH * hs <= width, "head layout: bad shape");
  return Layout{B, T, NH, hs, width, col};
}

}  // namespace

void rows_to_heads(DType t, void* dst, const void* src, int width, int col, int B, int T, int NH, int hs,
                   gpu::Stream stream) {
  const NvtxRange range("rows_to_heads");
  permute<true>(t, dst, src, layout(width, col, B, T, NH, hs), stream);
}

void heads_to_rows(DType t, void* dst, const void* src, int width, int col, int B, int T, int NH, int hs,
                   gpu::Stream stream) {
  const NvtxRange range("heads_to_rows");
  permute<false>(t, dst, src, layout(width, col, B, T, NH, hs), stream);
}

}  // namespace gcb::kernels::train
