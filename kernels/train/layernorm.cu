// LayerNorm forward and backward (llm.c layernorm_forward/backward; Ba et al. 2016): one warp per
// row for the row statistics and dx, deterministic column sums for dw and db.
#include "kernels/train/train_common.cuh"
#include "kernels/train/train_kernels.hpp"

namespace gcb::kernels::train {
namespace {

constexpr float kEps = 1e-5f;
constexpr int kRowWarps = 8;  // rows per block of the row kernels
__device__ size_t row_at(int r, int C) { return static_cast<size_t>(r) * static_cast<size_t>(C); }

// mean, then the variance around it (two passes, as the CPU oracle), then the normalised output.
template <typename T>
__global__ void layernorm_forward_kernel(T* out, float* mean, float* rstd, const T* x, const T* w, const T* b, int rows,
                                         int C) {
  const int row = blockIdx.x * kRowWarps + threadIdx.x / 32, lane = threadIdx.x % 32;
  if (row >= rows) return;
  const T* xr = x + row_at(row, C);
  float s = 0.0f;
  for (int i = lane; i < C; i += 32) s += to_float(xr[i]);
  const float m = warp_sum(s) / static_cast<float>(C);
  float v = 0.0f;
  for (int i = lane; i < C; i += 32) {
    const float d = to_float(xr[i]) - m;
    v += d * d;
  }
  const float r = 1.0f / sqrtf(warp_sum(v) / static_cast<float>(C) + kEps);
  T* o = out + row_at(row, C);
  for (int i = lane; i < C; i += 32) o[i] = from_float<T>((to_float(xr[i]) - m) * r * to_float(w[i]) + to_float(b[i]));
  if (lane == 0) {
    mean[row] = m;
    rstd[row] = r;
  }
}

// dx += (dnorm − mean(dnorm) − norm·mean(dnorm·norm))·rstd with dnorm = w·dout.
template <typename T>
__global__ void layernorm_dx_kernel(T* dx, const T* dout, const T* x, const T* w, const float* mean, const float* rstd,
                                    int rows, int C) {
  const int row = blockIdx.x * kRowWarps + threadIdx.x / 32, lane = threadIdx.x % 32;
  if (row >= rows) return;
  const T* xr = x + row_at(row, C);
  const T* dr = dout + row_at(row, C);
  const float m = mean[row], r = rstd[row];
  float dnorm_mean = 0.0f, dnorm_norm_mean = 0.0f;
  for (int i = lane; i < C; i += 32) {
    const float norm = (to_float(xr[i]) - m) * r;
    const float dnorm = to_float(w[i]) * to_float(dr[i]);
    dnorm_mean += dnorm;
    dnorm_norm_mean += dnorm * norm;
  }
  dnorm_mean = warp_sum(dnorm_mean) / static_cast<float>(C);
  dnorm_norm_mean = warp_sum(dnorm_norm_mean) / static_cast<float>(C);
  T* dxr = dx + row_at(row, C);
  for (int i = lane; i < C; i += 32) {
    const float norm = (to_float(xr[i]) - m) * r;
    const float dnorm = to_float(w[i]) * to_float(dr[i]);
    dxr[i] = from_float<T>(to_float(dxr[i]) + (dnorm - dnorm_mean - norm * dnorm_norm_mean) * r);
  }
}

// dw[i] += Σ_r norm[r,i]·dout[r,i], db[i] += Σ_r dout[r,i].
template <typename T>
__global__ void layernorm_dwdb_kernel(T* dw, T* db, const T* dout, const T* x, const float* mean, const float* rstd,
                                      int rows, int C) {
  __shared__ float scratch[kColRows][33];
  const int col = blockIdx.x * 32 + threadIdx.x;
  const auto dw_term = [&](int r, int c) {
    if (c >= C) return 0.0f;
    const size_t k = row_at(r, C) + static_cast<size_t>(c);
    return (to_float(x[k]) - mean[r]) * rstd[r] * to_float(dout[k]);
  };
  const auto db_term = [&](int r, int c) {
    return c < C ? to_float(dout[row_at(r, C) + static_cast<size_t>(c)]) : 0.0f;
  };
  const float sw = column_sum(rows, col, dw_term, scratch);
  const float sb = column_sum(rows, col, db_term, scratch);
  if (threadIdx.y == 0 && col < C) {
    dw[col] = from_float<T>(to_float(dw[col]) + sw);
    db[col] = from_float<T>(to_float(db[col]) + sb);
  }
}

}  // namespace

void layernorm_forward(DType t, void* out, float* mean, float* rstd, const void* x, const void* w, const void* b,
                       int rows, int C, gpu::Stream stream) {
  const NvtxRange range("layernorm_forward");
  GCB_CHECK(rows >= 0 && C > 0, "layernorm_forward: bad shape");
  if (rows == 0) return;
  dispatch(t, "layernorm_forward", [&](auto tag) {
    using T = decltype(tag);
    layernorm_forward_kernel<T><<<static_cast<unsigned>(ceil_div(rows, kRowWarps)), 32 * kRowWarps, 0, st(stream)>>>(
        static_cast<T*>(out), mean, rstd, static_cast<const T*>(x), static_cast<const T*>(w), static_cast<const T*>(b),
        rows, C);
  });
  check_launch();
}

void layernorm_backward(DType t, void* dx, void* dw, void* db, const void* dout, const void* x, const void* w,
                        const float* mean, const float* rstd, int rows, int C, gpu::Stream stream) {
  const NvtxRange range("layernorm_backward");
  GCB_CHECK(rows >= 0 && C > 0, "layernorm_backward: bad shape");
  if (rows == 0) return;
  dispatch(t, "layernorm_backward", [&](auto tag) {
    using T = decltype(tag);
    layernorm_dx_kernel<T><<<static_cast<unsigned>(ceil_div(rows, kRowWarps)), 32 * kRowWarps, 0, st(stream)>>>(
        static_cast<T*>(dx), static_cast<const T*>(dout), static_cast<const T*>(x), static_cast<const T*>(w), mean,
        rstd, rows, C);
    check_launch();
    layernorm_dwdb_kernel<T><<<static_cast<unsigned>(ceil_div(C, 32)), dim3(32, kColRows), 0, st(stream)>>>(
        static_cast<T*>(dw), static_cast<T*>(db), static_cast<const T*>(dout), static_cast<const T*>(x), mean, rstd,
        rows, C);
  });
  check_launch();
}

}  // namespace gcb::kernels::train
