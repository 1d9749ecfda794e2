// Element-wise kernels of the training backend: fill, cast, add, scale, GELU forward and backward
// (llm.c gelu_forward/backward), each thread on one chunk of kChunk elements (train_common.cuh).
#include <cmath>

#include "kernels/train/train_common.cuh"
#include "kernels/train/train_kernels.hpp"

namespace gcb::kernels::train {
namespace {

constexpr float kGeluScale = 0.7978845608028654f;  // √(2/π)

template <typename T>
__global__ void fill_kernel(T* x, size_t n, float value, bool vec) {
  const size_t i = chunk_start();
  if (i >= n) return;
  float v[kChunk];
#pragma unroll
  for (int k = 0; k < kChunk; ++k) v[k] = value;
  store_chunk(x, i, n, vec, v);
}

template <typename Dst, typename Src>
__global__ void cast_kernel(Dst* dst, const Src* src, size_t n, bool vec) {
  const size_t i = chunk_start();
  if (i >= n) return;
  float v[kChunk];
  load_chunk(src, i, n, vec, v);
  store_chunk(dst, i, n, vec, v);
}

template <typename T>
__global__ void add_kernel(T* out, const T* a, const T* b, size_t n, bool vec) {
  const size_t i = chunk_start();
  if (i >= n) return;
  float x[kChunk], y[kChunk];
  load_chunk(a, i, n, vec, x);
  load_chunk(b, i, n, vec, y);
#pragma unroll
  for (int k = 0; k < kChunk; ++k) x[k] += y[k];
  store_chunk(out, i, n, vec, x);
}

template <typename T>
__global__ void scale_kernel(T* x, float s, size_t n, bool vec) {
  const size_t i = chunk_start();
  if (i >= n) return;
  float v[kChunk];
  load_chunk(x, i, n, vec, v);
#pragma unroll
  for (int k = 0; k < kChunk; ++k) v[k] *= s;
  store_chunk(x, i, n, vec, v);
}

// The fp64 loss accumulator: a handful of elements.
__global__ void fill_f64_kernel(double* x, size_t n, double value) {
  const size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) x[i] = value;
}
__global__ void scale_f64_kernel(double* x, double s, size_t n) {
  const size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= s;
}

template <typename T>
__global__ void gelu_forward_kernel(T* out, const T* x, size_t n, bool vec) {
  const size_t i = chunk_start();
  if (i >= n) return;
  float v[kChunk];
  load_chunk(x, i, n, vec, v);
#pragma unroll
  for (int k = 0; k < kChunk; ++k)
    v[k] = 0.5f * v[k] * (1.0f + tanhf(kGeluScale * (v[k] + 0.044715f * v[k] * v[k] * v[k])));
  store_chunk(out, i, n, vec, v);
}

template <typename T>
__global__ void gelu_backward_kernel(T* dx, const T* x, const T* dout, size_t n, bool vec) {
  const size_t i = chunk_start();
  if (i >= n) return;
  float v[kChunk], d[kChunk];
  load_chunk(x, i, n, vec, v);
  load_chunk(dout, i, n, vec, d);
#pragma unroll
  for (int k = 0; k < kChunk; ++k) {
    const float u = kGeluScale * (v[k] + 0.044715f * v[k] * v[k] * v[k]);
    const float t = tanhf(u);
    const float sech2 = 1.0f - t * t;
    const float grad = 0.5f * (1.0f + t) + 0.5f * v[k] * sech2 * kGeluScale * (1.0f + 3.0f * 0.044715f * v[k] * v[k]);
    d[k] *= grad;
  }
  store_chunk(dx, i, n, vec, d);
}

}  // namespace

void fill(DType t, void* x, size_t n, float value, gpu::Stream stream) {
  const NvtxRange range("fill");
  if (n == 0) return;
  if (t == DType::f64) {
    fill_f64_kernel<<<static_cast<unsigned>(ceil_div<size_t>(n, 256)), 256, 0, st(stream)>>>(static_cast<double*>(x), n,
                                                                                             value);
    check_launch();
    return;
  }
  dispatch(t, "fill", [&](auto tag) {
    using T = decltype(tag);
    fill_kernel<T><<<chunk_blocks(n), kChunkThreads, 0, st(stream)>>>(static_cast<T*>(x), n, value, aligned16(x));
  });
  check_launch();
}

void cast(DType dst_t, void* dst, DType src_t, const void* src, size_t n, gpu::Stream stream) {
  const NvtxRange range("cast");
  if (n == 0) return;
  const bool vec = aligned16(dst) && aligned16(src);
  const unsigned blocks = chunk_blocks(n);
  if (dst_t == DType::bf16 && src_t == DType::f32) {
    cast_kernel<bf16, float>
        <<<blocks, kChunkThreads, 0, st(stream)>>>(static_cast<bf16*>(dst), static_cast<const float*>(src), n, vec);
  } else if (dst_t == DType::f32 && src_t == DType::bf16) {
    cast_kernel<float, bf16>
        <<<blocks, kChunkThreads, 0, st(stream)>>>(static_cast<float*>(dst), static_cast<const bf16*>(src), n, vec);
  } else {
    throw Fault("cast: the CUDA training kernels convert fp32 ↔ bf16, not " + std::string(dtype_name(src_t)) + " → " +
                std::string(dtype_name(dst_t)));
  }
  check_launch();
}

void add(DType t, void* out, const void* a, const void* b, size_t n, gpu::Stream stream) {
  const NvtxRange range("add");
  if (n == 0) return;
  const bool vec = aligned16(out) && aligned16(a) && aligned16(b);
  dispatch(t, "add", [&](auto tag) {
    using T = decltype(tag);
    add_kernel<T><<<chunk_blocks(n), kChunkThreads, 0, st(stream)>>>(static_cast<T*>(out), static_cast<const T*>(a),
                                                                     static_cast<const T*>(b), n, vec);
  });
  check_launch();
}

void scale(DType t, void* x, double s, size_t n, gpu::Stream stream) {
  const NvtxRange range("scale");
  if (n == 0) return;
  if (t == DType::f64) {
    scale_f64_kernel<<<static_cast<unsigned>(ceil_div<size_t>(n, 256)), 256, 0, st(stream)>>>(static_cast<double*>(x),
                                                                                              s, n);
    check_launch();
    return;
  }
  dispatch(t, "scale", [&](auto tag) {
    using T = decltype(tag);
    scale_kernel<T>
        <<<chunk_blocks(n), kChunkThreads, 0, st(stream)>>>(static_cast<T*>(x), static_cast<float>(s), n, aligned16(x));
  });
  check_launch();
}

void gelu_forward(DType t, void* out, const void* x, size_t n, gpu::Stream stream) {
  const NvtxRange range("gelu_forward");
  if (n == 0) return;
  const bool vec = aligned16(out) && aligned16(x);
  dispatch(t, "gelu_forward", [&](auto tag) {
    using T = decltype(tag);
    gelu_forward_kernel<T>
        <<<chunk_blocks(n), kChunkThreads, 0, st(stream)>>>(static_cast<T*>(out), static_cast<const T*>(x), n, vec);
  });
  check_launch();
}

void gelu_backward(DType t, void* dx, const void* x, const void* dout, size_t n, gpu::Stream stream) {
  const NvtxRange range("gelu_backward");
  if (n == 0) return;
  const bool vec = aligned16(dx) && aligned16(x) && aligned16(dout);
  dispatch(t, "gelu_backward", [&](auto tag) {
    using T = decltype(tag);
    gelu_backward_kernel<T><<<chunk_blocks(n), kChunkThreads, 0, st(stream)>>>(
        static_cast<T*>(dx), static_cast<const T*>(x), static_cast<const T*>(dout), n, vec);
  });
  check_launch();
}

}  // namespace gcb::kernels::train
