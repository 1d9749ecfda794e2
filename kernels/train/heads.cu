// The head-major layout our flash kernels and cuDNN SDPA read ([B, NH, T, hs], attention_shape.hpp)
// from the row-major activations the model keeps ([B, T, width], heads contiguous in each row),
// and back (llm.c's permute_kernel / unpermute_kernel). One thread per destination element, so
// the writes are coalesced.
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

Layout layout(int width, int col, int B, int T, int NH, int hs) {
  GCB_CHECK(B > 0 && T > 0 && NH > 0 && hs > 0 && col >= 0 && col + NH * hs <= width, "head layout: bad shape");
  return Layout{B, T, NH, hs, width, col};
}

}  // namespace

void rows_to_heads(DType t, void* dst, const void* src, int width, int col, int B, int T, int NH, int hs,
                   gpu::Stream stream) {
  const NvtxRange range("rows_to_heads");
  const Layout l = layout(width, col, B, T, NH, hs);
  const size_t n = l.elements();
  dispatch(t, "rows_to_heads", [&](auto tag) {
    using E = decltype(tag);
    to_heads_kernel<E><<<static_cast<unsigned>(ceil_div<size_t>(n, kThreads)), kThreads, 0, st(stream)>>>(
        static_cast<E*>(dst), static_cast<const E*>(src), l, n);
  });
  check_launch();
}

void heads_to_rows(DType t, void* dst, const void* src, int width, int col, int B, int T, int NH, int hs,
                   gpu::Stream stream) {
  const NvtxRange range("heads_to_rows");
  const Layout l = layout(width, col, B, T, NH, hs);
  const size_t n = l.elements();
  dispatch(t, "heads_to_rows", [&](auto tag) {
    using E = decltype(tag);
    to_rows_kernel<E><<<static_cast<unsigned>(ceil_div<size_t>(n, kThreads)), kThreads, 0, st(stream)>>>(
        static_cast<E*>(dst), static_cast<const E*>(src), l, n);
  });
  check_launch();
}

}  // namespace gcb::kernels::train
