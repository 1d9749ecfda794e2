// CpuBackend ops. Each output element is computed by one thread in a fixed order, and every
// reduction over rows runs serially per column, so results are bitwise independent of the OpenMP
// thread count — the property the "layout run twice is bitwise identical" tests rely on.
// Forward/backward formulas follow llm.c train_gpt2.c.
#include "models/backend/cpu/cpu_backend.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "models/backend/cpu/cpu_fp32_io.hpp"
#include "models/backend/host_adamw.hpp"
#include "models/model/init_rng.hpp"

namespace gcb::models {
namespace {

constexpr float kLayerNormEps = 1e-5f;
constexpr float kGeluScale = 0.7978845608028654f;  // sqrt(2/π)
// Below this many elements a parallel region costs more than it saves.
constexpr long kParallelMin = 1 << 14;

using Mode = Fp32Output::Mode;

size_t at(int r, int C) { return static_cast<size_t>(r) * static_cast<size_t>(C); }

}  // namespace

void* CpuBackend::raw_alloc(size_t bytes, MemCategory, AllocInit) {
  // 64-byte alignment for vector loads; zeroed whatever `init` says: the oracle's results never
  // depend on what an allocation held (the fake device's NaN fill checks the callers' AllocInit).
  const size_t rounded = std::max<size_t>(64, (bytes + 63) / 64 * 64);
  void* p = std::aligned_alloc(64, rounded);
  GCB_CHECK(p != nullptr, "CpuBackend: out of host memory");
  std::memset(p, 0, rounded);
  return p;
}

void CpuBackend::raw_free(void* p) { std::free(p); }

void CpuBackend::copy_to_host(void* host_dst, const void* src, size_t bytes) { std::memcpy(host_dst, src, bytes); }
void CpuBackend::copy_from_host(void* dst, const void* host_src, size_t bytes) { std::memcpy(dst, host_src, bytes); }

void CpuBackend::fill(View x, size_t n, float value) {
  if (x.dtype == DType::f64) {
    std::fill_n(static_cast<double*>(x.data), n, static_cast<double>(value));
    return;
  }
  Fp32Output out(x, n, Mode::overwrite);
  std::fill_n(out.get(), n, value);
  out.commit();
}

void CpuBackend::copy(View dst, View src, size_t n) {
  if (dst.dtype == src.dtype) {
    std::memmove(dst.data, src.data, n * dtype_size(dst.dtype));
    return;
  }
  for (size_t i = 0; i < n; ++i) store_as(dst.dtype, dst.data, i, load_as(src.dtype, src.data, i));
}

void CpuBackend::add(View out, View a, View b, size_t n) {
  const Fp32Input x(a, n), y(b, n);
  Fp32Output o(out, n, Mode::overwrite);
  float* po = o.get();
  const float *pa = x.get(), *pb = y.get();
#pragma omp parallel for if (static_cast <long>(n) > kParallelMin)
  for (size_t i = 0; i < n; ++i) po[i] = pa[i] + pb[i];
  o.commit();
}

void CpuBackend::scale(View x, double s, size_t n) {
  if (x.dtype == DType::f64) {
    auto* p = static_cast<double*>(x.data);
    for (size_t i = 0; i < n; ++i) p[i] *= s;
    return;
  }
  Fp32Output o(x, n, Mode::accumulate);
  const auto f = static_cast<float>(s);
  for (size_t i = 0; i < n; ++i) o.get()[i] *= f;
  o.commit();
}

void CpuBackend::init_normal(View x, size_t n, uint64_t seed, uint64_t stream, uint64_t first_index, float std) {
  Fp32Output o(x, n, Mode::overwrite);
  float* p = o.get();
#pragma omp parallel for if (static_cast <long>(n) > kParallelMin)
  for (size_t i = 0; i < n; ++i) p[i] = std * counter_normal(seed, stream, first_index + i);
  o.commit();
}

// In double: a float running sum over 0.5M per-token losses of ≈ 4 errs by ~1e-5 relative
// (n·2⁻²⁴), a double one by ~1e-13 before the final rounding.
void CpuBackend::sum(View out, View in, size_t n, bool accumulate) {
  const Fp32Input x(in, n);
  double s = accumulate ? load_as(out.dtype, out.data, 0) : 0.0;
  for (size_t i = 0; i < n; ++i) s += x.get()[i];
  GCB_CHECK(out.dtype == DType::f32 || out.dtype == DType::f64, "sum: the result is fp32 or fp64");
  store_as(out.dtype, out.data, 0, s);
}

// Sequential, in index order: the gradient norm of clipping, in the same order on every run.
void CpuBackend::sum_squares(View out, View in, size_t n, bool accumulate) {
  GCB_CHECK(out.dtype == DType::f64, "sum_squares: the result is fp64");
  const Fp32Input x(in, n);
  double s = accumulate ? load_as(out.dtype, out.data, 0) : 0.0;
  for (size_t i = 0; i < n; ++i) {
    const double v = x.get()[i];
    s += v * v;
  }
  store_as(out.dtype, out.data, 0, s);
}

void CpuBackend::gemm(const GemmArgs& a) {
  if (a.gelu != GemmGelu::none) {
    gemm_then_gelu(a);
    return;
  }
  const SpanScope span(phase_timer(), "matmul");
  const size_t mk = at(a.M, a.K), kn = at(a.K, a.N), mn = at(a.M, a.N);
  const Fp32Input A(a.A, mk), B(a.B, kn), bias(a.bias, static_cast<size_t>(a.N));
  Fp32Output C(a.C, mn, a.beta == 0.0f ? Mode::overwrite : Mode::accumulate);
  float* c = C.get();
  cpu_sgemm(a.trans_a, a.trans_b, a.M, a.N, a.K, A.get(), B.get(), c, a.beta);
  if (bias.get() != nullptr) {
    const float* pb = bias.get();
#pragma omp parallel for if (static_cast <long>(a.M) * a.N > kParallelMin)
    for (int i = 0; i < a.M; ++i) {
      float* row = c + at(i, a.N);
      for (int j = 0; j < a.N; ++j) row[j] += pb[j];
    }
  }
  C.commit();
}

void CpuBackend::bias_backward(View dbias, View dout, int M, int N) {
  const Fp32Input d(dout, at(M, N));
  Fp32Output db(dbias, static_cast<size_t>(N), Mode::accumulate);
  const float* pd = d.get();
  float* pb = db.get();
#pragma omp parallel for if (static_cast <long>(M) * N > kParallelMin)
  for (int j = 0; j < N; ++j) {
    float s = 0.0f;
    for (int i = 0; i < M; ++i) s += pd[at(i, N) + static_cast<size_t>(j)];
    pb[j] += s;
  }
  db.commit();
}

void CpuBackend::layernorm_forward(View out, float* mean, float* rstd, View x, View w, View b, int rows, int C) {
  const size_t n = at(rows, C), c = static_cast<size_t>(C);
  const Fp32Input X(x, n), W(w, c), Bias(b, c);
  Fp32Output O(out, n, Mode::overwrite);
  const float *px = X.get(), *pw = W.get(), *pb = Bias.get();
  float* po = O.get();
#pragma omp parallel for if (static_cast <long>(rows) * C > kParallelMin)
  for (int r = 0; r < rows; ++r) {
    const float* xr = px + at(r, C);
    float m = 0.0f;
    for (int i = 0; i < C; ++i) m += xr[i];
    m /= static_cast<float>(C);
    float var = 0.0f;
    for (int i = 0; i < C; ++i) var += (xr[i] - m) * (xr[i] - m);
    var /= static_cast<float>(C);
    const float s = 1.0f / std::sqrt(var + kLayerNormEps);
    float* o = po + at(r, C);
    for (int i = 0; i < C; ++i) o[i] = (xr[i] - m) * s * pw[i] + pb[i];
    mean[r] = m;
    rstd[r] = s;
  }
  O.commit();
}

void CpuBackend::layernorm_backward(View dx, View dw, View db, View dout, View x, View w, const float* mean,
                                    const float* rstd, int rows, int C) {
  const size_t n = at(rows, C), c = static_cast<size_t>(C);
  const Fp32Input X(x, n), W(w, c), D(dout, n);
  Fp32Output DX(dx, n, Mode::accumulate), DW(dw, c, Mode::accumulate), DB(db, c, Mode::accumulate);
  const float *px = X.get(), *pw = W.get(), *pd = D.get();
  float *pdx = DX.get(), *pdw = DW.get(), *pdb = DB.get();
  // dx: rows are independent.
#pragma omp parallel for if (static_cast <long>(rows) * C > kParallelMin)
  for (int r = 0; r < rows; ++r) {
    const float* xr = px + at(r, C);
    const float* dr = pd + at(r, C);
    float* dxr = pdx + at(r, C);
    float dnorm_mean = 0.0f, dnorm_norm_mean = 0.0f;
    for (int i = 0; i < C; ++i) {
      const float norm = (xr[i] - mean[r]) * rstd[r];
      const float dnorm = pw[i] * dr[i];
      dnorm_mean += dnorm;
      dnorm_norm_mean += dnorm * norm;
    }
    dnorm_mean /= static_cast<float>(C);
    dnorm_norm_mean /= static_cast<float>(C);
    for (int i = 0; i < C; ++i) {
      const float norm = (xr[i] - mean[r]) * rstd[r];
      const float dnorm = pw[i] * dr[i];
      dxr[i] += (dnorm - dnorm_mean - norm * dnorm_norm_mean) * rstd[r];
    }
  }
  // dw, db: reductions over rows, one column per thread, rows in order.
#pragma omp parallel for if (static_cast <long>(rows) * C > kParallelMin)
  for (int i = 0; i < C; ++i) {
    float sw = 0.0f, sb = 0.0f;
    for (int r = 0; r < rows; ++r) {
      const size_t k = at(r, C) + static_cast<size_t>(i);
      sw += (px[k] - mean[r]) * rstd[r] * pd[k];
      sb += pd[k];
    }
    pdw[i] += sw;
    pdb[i] += sb;
  }
  DX.commit();
  DW.commit();
  DB.commit();
}

void CpuBackend::gelu_forward(View out, View x, size_t n) {
  const Fp32Input X(x, n);
  Fp32Output O(out, n, Mode::overwrite);
  const float* px = X.get();
  float* po = O.get();
#pragma omp parallel for if (static_cast <long>(n) > kParallelMin)
  for (size_t i = 0; i < n; ++i) {
    const float v = px[i];
    po[i] = 0.5f * v * (1.0f + std::tanh(kGeluScale * (v + 0.044715f * v * v * v)));
  }
  O.commit();
}

void CpuBackend::gelu_backward(View dx, View x, View dout, size_t n) {
  const Fp32Input X(x, n), D(dout, n);
  Fp32Output DX(dx, n, Mode::overwrite);
  const float *px = X.get(), *pd = D.get();
  float* pdx = DX.get();
#pragma omp parallel for if (static_cast <long>(n) > kParallelMin)
  for (size_t i = 0; i < n; ++i) {
    const float v = px[i];
    const float u = kGeluScale * (v + 0.044715f * v * v * v);
    const float t = std::tanh(u);
    const float sech2 = 1.0f - t * t;
    const float grad = 0.5f * (1.0f + t) + 0.5f * v * sech2 * kGeluScale * (1.0f + 3.0f * 0.044715f * v * v);
    pdx[i] = grad * pd[i];
  }
  DX.commit();
}

void CpuBackend::adamw(View params, View grads, float* m, float* v, float* master, size_t n, const AdamWArgs& a) {
  host_adamw(params, grads, m, v, master, n, a);  // ZeRO-Offload's host optimizer is the same code
}

}  // namespace gcb::models
