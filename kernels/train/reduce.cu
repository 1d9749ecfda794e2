// Reductions of the training backend: the loss sum (in double, one block, fixed order) and the
// bias gradient as deterministic column sums (train_common.cuh column_sum).
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

template <typename T>
__global__ void bias_backward_kernel(T* dbias, const T* dout, int rows, int cols) {
  __shared__ float scratch[kColRows][33];
  const int col = blockIdx.x * 32 + threadIdx.x;
  const auto term = [&](int r, int c) {
    return c < cols ? to_float(dout[static_cast<size_t>(r) * static_cast<size_t>(cols) + static_cast<size_t>(c)])
                    : 0.0f;
  };
  const float s = column_sum(rows, col, term, scratch);
  if (threadIdx.y == 0 && col < cols) dbias[col] = from_float<T>(to_float(dbias[col]) + s);
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

void bias_backward(DType t, void* dbias, const void* dout, int rows, int cols, gpu::Stream stream) {
  const NvtxRange range("bias_backward");
  GCB_CHECK(rows >= 0 && cols >= 0, "bias_backward: negative shape");
  if (cols == 0) return;
  dispatch(t, "bias_backward", [&](auto tag) {
    using T = decltype(tag);
    bias_backward_kernel<T><<<static_cast<unsigned>(ceil_div(cols, 32)), dim3(32, kColRows), 0, st(stream)>>>(
        static_cast<T*>(dbias), static_cast<const T*>(dout), rows, cols);
  });
  check_launch();
}

}  // namespace gcb::kernels::train
