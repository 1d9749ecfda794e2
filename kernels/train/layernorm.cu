// LayerNorm forward and backward (llm.c layernorm_forward/backward; Ba et al. 2016): one warp per
// row for the row statistics and dx, deterministic two-pass column sums for dw and db (one read).
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

// Pass 1 of dw[i] += Σ_r norm[r,i]·dout[r,i], db[i] += Σ_r dout[r,i], both from one read of the
// rows [y·per, (y + 1)·per) of columns x·32 … x·32 + 31: dw's partials at partials, db's C·splits
// after.
template <typename T>
__global__ void layernorm_dwdb_partials_kernel(float* partials, const T* dout, const T* x, const float* mean,
                                               const float* rstd, int rows, int C, int per) {
  __shared__ float scratch[2][kColRows][33];
  const int col = static_cast<int>(blockIdx.x) * 32 + static_cast<int>(threadIdx.x);
  const int r0 = static_cast<int>(blockIdx.y) * per, r1 = min(rows, r0 + per);
  float acc[2];
  const auto term = [&](int r, int c, float(&a)[2]) {
    if (c >= C) return;
    const size_t k = row_at(r, C) + static_cast<size_t>(c);
    const float d = to_float(dout[k]);
    a[0] += (to_float(x[k]) - mean[r]) * rstd[r] * d;
    a[1] += d;
  };
  column_partials<2>(r0, r1, col, term, acc, scratch);
  if (threadIdx.y == 0 && col < C) {
    const size_t at = static_cast<size_t>(blockIdx.y) * static_cast<size_t>(C) + static_cast<size_t>(col);
    partials[at] = acc[0];
    partials[static_cast<size_t>(gridDim.y) * static_cast<size_t>(C) + at] = acc[1];
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
                        const float* mean, const float* rstd, int rows, int C, float* partials, gpu::Stream stream) {
  const NvtxRange range("layernorm_backward");
  GCB_CHECK(rows >= 0 && C > 0, "layernorm_backward: bad shape");
  if (rows == 0) return;
  const int splits = column_sum_splits(rows, C), per = column_sum_rows_per_split(rows, splits);
  dispatch(t, "layernorm_backward", [&](auto tag) {
    using T = decltype(tag);
    layernorm_dx_kernel<T><<<static_cast<unsigned>(ceil_div(rows, kRowWarps)), 32 * kRowWarps, 0, st(stream)>>>(
        static_cast<T*>(dx), static_cast<const T*>(dout), static_cast<const T*>(x), static_cast<const T*>(w), mean,
        rstd, rows, C);
    check_launch();
    layernorm_dwdb_partials_kernel<T>
        <<<dim3(static_cast<unsigned>(ceil_div(C, 32)), static_cast<unsigned>(splits)), dim3(32, kColRows), 0,
           st(stream)>>>(partials, static_cast<const T*>(dout), static_cast<const T*>(x), mean, rstd, rows, C, per);
    check_launch();
    const auto finish_blocks = static_cast<unsigned>(ceil_div(C, 256));
    column_finish_kernel<T><<<finish_blocks, 256, 0, st(stream)>>>(static_cast<T*>(dw), partials, splits, C);
    check_launch();
    column_finish_kernel<T><<<finish_blocks, 256, 0, st(stream)>>>(
        static_cast<T*>(db), partials + static_cast<size_t>(splits) * static_cast<size_t>(C), splits, C);
  });
  check_launch();
}

}  // namespace gcb::kernels::train
