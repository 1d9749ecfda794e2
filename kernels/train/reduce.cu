// Reductions of the training backend: the loss sum (in double, one block, fixed order) and the
// bias gradient as deterministic two-pass column sums (train_kernels.hpp column_sum_splits).
#include <algorithm>

#include "kernels/train/train_common.cuh"
#include "kernels/train/train_kernels.hpp"

namespace gcb::kernels::train {
namespace {

constexpr int kSumThreads = 1024;

// Thread i adds elements i, i + 1024, … in double; the block sums the partials in warp order.
template <typename Out>
__global__ void sum_kernel(Out* out, const float* in, size_t n, bool accumulate) {
  __shared__ double scratch[32];
  double s = 0.0;
  for (size_t i = threadIdx.x; i < n; i += blockDim.x) s += static_cast<double>(in[i]);
  s = block_sum(s, scratch);
  if (threadIdx.x == 0) out[0] = static_cast<Out>((accumulate ? static_cast<double>(out[0]) : 0.0) + s);
}

// Block b adds elements b·1024 + threadIdx.x, + gridDim.x·1024, … in double.
template <typename T>
__global__ void sum_squares_partial_kernel(double* partials, const T* in, size_t n) {
  __shared__ double scratch[32];
  double s = 0.0;
  const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
  for (size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    const double x = static_cast<double>(to_float(in[i]));
    s += x * x;
  }
  s = block_sum(s, scratch);
  if (threadIdx.x == 0) partials[blockIdx.x] = s;
}

__global__ void sum_partials_kernel(double* out, const double* partials, int blocks, bool accumulate) {
  if (threadIdx.x != 0) return;
  double s = 0.0;
  for (int b = 0; b < blocks; ++b) s += partials[b];
  out[0] = (accumulate ? out[0] : 0.0) + s;
}

// Pass 1 of bias_backward: block (x, y) adds rows [y·per, (y + 1)·per) of columns x·32 … x·32 + 31.
template <typename T>
__global__ void bias_partials_kernel(float* partials, const T* dout, int rows, int cols, int per) {
  __shared__ float scratch[1][kColRows][33];
  const int col = static_cast<int>(blockIdx.x) * 32 + static_cast<int>(threadIdx.x);
  const int r0 = static_cast<int>(blockIdx.y) * per, r1 = min(rows, r0 + per);
  float acc[1];
  const auto term = [&](int r, int c, float(&a)[1]) {
    if (c < cols) a[0] += to_float(dout[static_cast<size_t>(r) * static_cast<size_t>(cols) + static_cast<size_t>(c)]);
  };
  column_partials<1>(r0, r1, col, term, acc, scratch);
  if (threadIdx.y == 0 && col < cols)
    partials[static_cast<size_t>(blockIdx.y) * static_cast<size_t>(cols) + col] = acc[0];
}

}  // namespace

void sum(DType out_t, void* out, const float* in, size_t n, bool accumulate, gpu::Stream stream) {
  const NvtxRange range("sum");
  if (out_t == DType::f64) {
    sum_kernel<double><<<1, kSumThreads, 0, st(stream)>>>(static_cast<double*>(out), in, n, accumulate);
  } else if (out_t == DType::f32) {
    sum_kernel<float><<<1, kSumThreads, 0, st(stream)>>>(static_cast<float*>(out), in, n, accumulate);
  } else {
    throw Fault("sum: the result is fp32 or fp64, not " + std::string(dtype_name(out_t)));
  }
  check_launch();
}

void sum_squares(DType t, double* out, const void* in, size_t n, bool accumulate, double* partials,
                 gpu::Stream stream) {
  const NvtxRange range("sum_squares");
  const auto per_block = static_cast<size_t>(kSumThreads);
  const int blocks =
      static_cast<int>(std::min<size_t>(kSumSquaresBlocks, std::max<size_t>(1, (n + per_block - 1) / per_block)));
  dispatch(t, "sum_squares", [&](auto tag) {
    using T = decltype(tag);
    sum_squares_partial_kernel<T>
        <<<static_cast<unsigned>(blocks), kSumThreads, 0, st(stream)>>>(partials, static_cast<const T*>(in), n);
  });
  check_launch();
  sum_partials_kernel<<<1, 32, 0, st(stream)>>>(out, partials, blocks, accumulate);
  check_launch();
}

void bias_backward(DType t, void* dbias, const void* dout, int rows, int cols, float* partials, gpu::Stream stream) {
  const NvtxRange range("bias_backward");
  GCB_CHECK(rows >= 0 && cols >= 0, "bias_backward: negative shape");
  if (cols == 0) return;
  const int splits = column_sum_splits(rows, cols), per = column_sum_rows_per_split(rows, splits);
  dispatch(t, "bias_backward", [&](auto tag) {
    using T = decltype(tag);
    bias_partials_kernel<T>
        <<<dim3(static_cast<unsigned>(ceil_div(cols, 32)), static_cast<unsigned>(splits)), dim3(32, kColRows), 0,
           st(stream)>>>(partials, static_cast<const T*>(dout), rows, cols, per);
    check_launch();
    column_finish_kernel<T><<<static_cast<unsigned>(ceil_div(cols, 256)), 256, 0, st(stream)>>>(static_cast<T*>(dbias),
                                                                                                partials, splits, cols);
  });
  check_launch();
}

}  // namespace gcb::kernels::train
