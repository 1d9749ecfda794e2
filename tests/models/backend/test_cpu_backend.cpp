// CpuBackend ops: matmul against a double-precision reference, every backward against central
// finite differences of L = Σ w·y (w fixed random weights, sums in double), flash attention against
// the tiled reference of the GPU kernels (bitwise) and the FP64 reference, cross-entropy finite for
// confidently wrong predictions, and bf16 storage rounded to nearest even on every store.
//
// Tolerances. Ops run in fp32 and the FD quotient (L(x+ε) − L(x−ε)) / 2ε with ε = 1e-2 carries
// (a) rounding: fp32 outputs are off by ~1e-7 relative, so L (≈ Σ of a few hundred O(1) terms
// with O(1) weights) is off by ~1e-5, i.e. ~5e-4 in the quotient, and (b) truncation ε²·f'''/6,
// ~1e-4 for these smooth functions. Hence |analytic − fd| ≤ 2e-3 + 1e-2·|fd| per element.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "kernels/attention/attention_ref.hpp"
#include "kernels/attention/flash_attn.hpp"
#include "kernels/attention/flash_tiling.hpp"
#include "kernels/gemm/cpu_gemm.hpp"
#include "kernels/train/cross_entropy_math.hpp"
#include "models/backend/cpu/cpu_backend.hpp"
#include "models/engine/param_init.hpp"
#include "models/model/init_rng.hpp"
#include "models/model/param_layout.hpp"

namespace gcb::models {
namespace {

std::vector<float> randn(size_t n, uint64_t stream, float std = 1.0f) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = std * counter_normal(99, stream, i);
  return v;
}

View f32(std::vector<float>& x) { return {x.data(), DType::f32}; }
View f32(const std::vector<float>& x) { return {const_cast<float*>(x.data()), DType::f32}; }

double dot(const std::vector<float>& a, const std::vector<float>& b) {
  double s = 0;
  for (size_t i = 0; i < a.size(); ++i) s += static_cast<double>(a[i]) * b[i];
  return s;
}

// Checks analytic dL/dx[i] against central differences for up to 24 spread-out elements of x.
// loss() recomputes L from the current x.
void check_fd(const char* what, std::vector<float>& x, const std::vector<float>& analytic,
              const std::function<double()>& loss, double eps = 1e-2, double atol = 2e-3, double rtol = 1e-2) {
  ASSERT_EQ(x.size(), analytic.size());
  const size_t stride = std::max<size_t>(1, x.size() / 24);
  for (size_t i = 0; i < x.size(); i += stride) {
    const float orig = x[i];
    x[i] = orig + static_cast<float>(eps);
    const double up = loss();
    x[i] = orig - static_cast<float>(eps);
    const double down = loss();
    x[i] = orig;
    const double fd = (up - down) / (2 * eps);
    EXPECT_NEAR(analytic[i], fd, atol + rtol * std::abs(fd)) << what << " element " << i;
  }
}

TEST(CpuBackend, GemmMatchesDoubleReferenceForAllTransposes) {
  CpuBackend be;
  const int M = 7, N = 5, K = 9;
  const auto A = randn(M * K, 1), B = randn(K * N, 2), bias = randn(N, 3), C0 = randn(M * N, 4);
  for (int ta = 0; ta < 2; ++ta) {
    for (int tb = 0; tb < 2; ++tb) {
      std::vector<float> C = C0;
      be.gemm({ta == 1, tb == 1, M, N, K, f32(A), f32(B), f32(C), 1.0f, f32(bias)});
      for (int i = 0; i < M; ++i) {
        for (int j = 0; j < N; ++j) {
          double s = C0[i * N + j] + static_cast<double>(bias[j]);
          for (int k = 0; k < K; ++k) {
            const double a = ta ? A[k * M + i] : A[i * K + k];
            const double b = tb ? B[j * K + k] : B[k * N + j];
            s += a * b;
          }
          // K = 9 products of O(1) values in fp32: error ≲ 1e-5.
          EXPECT_NEAR(C[i * N + j], s, 1e-5) << "ta " << ta << " tb " << tb;
        }
      }
    }
  }
  EXPECT_TRUE(std::string(cpu_matmul_impl()) == "openblas" || std::string(cpu_matmul_impl()) == "naive");
}

// A GEMM carrying the MLP's GELU (GemmGelu): forward stores the GELU input (product + bias) in
// gelu_aux and the tanh GELU of it in C; backward gives gelu'(gelu_aux)·product, where a fusing
// backend's epilogue would compute it. Against double references; K = 9 products as above.
TEST(CpuBackend, GemmWithGeluStoresItsInputAndAppliesTheTanhForm) {
  CpuBackend be;
  const int M = 4, N = 6, K = 9;
  const auto A = randn(M * K, 11), B = randn(N * K, 12), bias = randn(N, 13), dY = randn(M * K, 14),
             W = randn(K * N, 15);
  std::vector<float> C(M * N), aux(M * N), dX(M * N, 7.0f);
  be.gemm({false, true, M, N, K, f32(A), f32(B), f32(C), 0.0f, f32(bias), GemmGelu::forward, f32(aux)});
  be.gemm({false, false, M, N, K, f32(dY), f32(W), f32(dX), 0.0f, {}, GemmGelu::backward, f32(aux)});
  const double k = std::sqrt(2.0 / 3.141592653589793);
  for (int i = 0; i < M; ++i) {
    for (int j = 0; j < N; ++j) {
      double x = bias[j], p = 0;
      for (int q = 0; q < K; ++q) {
        x += static_cast<double>(A[i * K + q]) * B[j * K + q];
        p += static_cast<double>(dY[i * K + q]) * W[q * N + j];
      }
      const double t = std::tanh(k * (x + 0.044715 * x * x * x));
      const double gelu = 0.5 * x * (1 + t);
      const double dgelu = 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * k * (1 + 3 * 0.044715 * x * x);
      EXPECT_NEAR(aux[i * N + j], x, 1e-5);
      EXPECT_NEAR(C[i * N + j], gelu, 2e-5);
      EXPECT_NEAR(dX[i * N + j], dgelu * p, 2e-5 * (1 + std::abs(p)));
    }
  }
  // A GELU GEMM never accumulates (a fused epilogue would apply the GELU to β·C + product).
  EXPECT_THROW(be.gemm({false, true, M, N, K, f32(A), f32(B), f32(C), 1.0f, {}, GemmGelu::forward, f32(aux)}), Fault);
}

// The bitwise claims (reruns, MPI = threads, ZeRO = DP, threads vs processes) need every matmul to
// give the same bits whatever the number of threads. OpenBLAS's own threading does not promise
// that (0.3.21's Haswell and Zen sgemm give 512×96×32 other bits with 1 and 2 threads), so
// cpu_sgemm computes fixed panels (sgemm_panels: a function of the shape) each on one thread; the
// claim holds by construction and this test checks it on every OpenBLAS kernel the CPU can run
// (tests/models/backend/determinism.sh runs it once per OPENBLAS_CORETYPE). Shapes: the model's GEMMs
// (activations × weights, the weight gradients' long K = B·T), several panels along rows and along
// columns with a short last panel, every transpose combination, and accumulation into C (β = 1).
TEST(CpuBackend, MatmulResultsDoNotDependOnBlasThreadCount) {
  struct Shape {
    bool ta, tb;
    int M, N, K;
  };
  const Shape shapes[] = {{true, false, 512, 96, 32},  {true, false, 32, 128, 8192}, {false, true, 256, 256, 256},
                          {true, false, 8, 8, 200000}, {false, true, 64, 1000, 96},  {false, false, 700, 48, 80},
                          {true, true, 300, 272, 40},  {false, false, 96, 2304, 64}, {false, true, 1, 517, 33},
                          {true, false, 2176, 24, 100}};
  for (const auto& sh : shapes) {
    const auto A = randn(static_cast<size_t>(sh.M) * sh.K, 60), B = randn(static_cast<size_t>(sh.K) * sh.N, 61);
    const auto C0 = randn(static_cast<size_t>(sh.M) * sh.N, 62);
    const std::string what = fmt::format("{}{} {}x{}x{}", sh.ta ? 'T' : 'N', sh.tb ? 'T' : 'N', sh.M, sh.N, sh.K);
    std::vector<std::vector<float>> out;
    for (int threads : {1, 2, 3, 4, 7}) {
      set_cpu_matmul_threads(threads);
      std::vector<float> C = C0;
      cpu_sgemm(sh.ta, sh.tb, sh.M, sh.N, sh.K, A.data(), B.data(), C.data(), 1.0f);
      out.push_back(std::move(C));
    }
    for (size_t t = 1; t < out.size(); ++t) EXPECT_EQ(out[0], out[t]) << what << ": thread setting " << t;
    // And it is the product: a double reference within fp32 rounding of Σ|terms|.
    for (int i = 0; i < sh.M; i += std::max(1, sh.M / 7)) {
      for (int j = 0; j < sh.N; j += std::max(1, sh.N / 7)) {
        double ref = C0[static_cast<size_t>(i) * sh.N + j], mag = std::abs(ref);
        for (int k = 0; k < sh.K; ++k) {
          const double a = sh.ta ? A[static_cast<size_t>(k) * sh.M + i] : A[static_cast<size_t>(i) * sh.K + k];
          const double b = sh.tb ? B[static_cast<size_t>(j) * sh.K + k] : B[static_cast<size_t>(k) * sh.N + j];
          ref += a * b;
          mag += std::abs(a * b);
        }
        EXPECT_NEAR(out[0][static_cast<size_t>(i) * sh.N + j], ref, 1e-5 * mag) << what << " at " << i << "," << j;
      }
    }
  }
  set_cpu_matmul_threads(0);  // back to OpenMP's default
}

// The panels tile the longer side exactly, in widths that depend on the shape alone.
TEST(CpuBackend, SgemmPanelsTileTheLongerSide) {
  for (int M : {0, 1, 15, 128, 129, 768, 3072, 50257, 200000}) {
    for (int N : {1, 64, 768, 50304}) {
      const kernels::SgemmPanels p = kernels::sgemm_panels(M, N);
      const int side = p.rows ? M : N;
      EXPECT_EQ(p.rows, M >= N);
      EXPECT_GE(p.width, kernels::kSgemmMinPanel);
      EXPECT_EQ(p.width % 16, 0);
      EXPECT_LE(p.count, kernels::kSgemmMaxPanels);
      EXPECT_GE(static_cast<long>(p.count) * p.width, side) << M << "x" << N;
      EXPECT_LT(static_cast<long>(std::max(p.count - 1, 0)) * p.width, std::max(side, 1)) << M << "x" << N;
    }
  }
}

// tests/models/backend/determinism.sh sets OPENBLAS_CORETYPE and GCB_EXPECT_OPENBLAS_CORE together: the
// kernel OpenBLAS runs must be the one asked for, or the per-core-type entries would prove nothing.
TEST(CpuBackend, OpenBlasRunsTheCoreTypeAskedFor) {
  const char* want = std::getenv("GCB_EXPECT_OPENBLAS_CORE");
  if (want == nullptr || *want == 0) GTEST_SKIP() << "GCB_EXPECT_OPENBLAS_CORE is not set (determinism.sh sets it)";
  std::string got = kernels::cpu_blas_core(), asked = want;
  for (auto* s : {&got, &asked})
    for (char& c : *s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  EXPECT_EQ(got, asked);
}

TEST(CpuBackend, LossSumsInDouble) {
  // 2^20 per-token losses of 0.1f: a float running sum drifts by ~1 % (each addition rounds to a
  // spacing that grows with the sum); the double sum is exact to ~1e-16 before the final rounding.
  CpuBackend be;
  const std::vector<float> losses(size_t{1} << 20, 0.1f);
  double total = 0;
  be.sum({&total, DType::f64}, f32(losses), losses.size(), false);
  EXPECT_NEAR(total, static_cast<double>(0.1f) * (1 << 20), 1e-9);
  float single = 0;
  be.sum({&single, DType::f32}, f32(losses), losses.size(), false);
  EXPECT_EQ(single, static_cast<float>(static_cast<double>(0.1f) * (1 << 20)));  // rounded once, at the end
}

TEST(CpuBackend, LayerNormBackwardMatchesFiniteDifferences) {
  CpuBackend be;
  const int rows = 6, C = 16;
  auto x = randn(rows * C, 10), w = randn(C, 11), b = randn(C, 12);
  const auto wout = randn(rows * C, 13);
  std::vector<float> y(rows * C), mean(rows), rstd(rows);
  auto loss = [&] {
    be.layernorm_forward(f32(y), mean.data(), rstd.data(), f32(x), f32(w), f32(b), rows, C);
    return dot(y, wout);
  };
  loss();
  std::vector<float> dx(rows * C, 0.0f), dw(C, 0.0f), db(C, 0.0f);
  be.layernorm_backward(f32(dx), f32(dw), f32(db), f32(wout), f32(x), f32(w), mean.data(), rstd.data(), rows, C);
  check_fd("ln dx", x, dx, loss);
  check_fd("ln dw", w, dw, loss);
  check_fd("ln db", b, db, loss);
}

TEST(CpuBackend, GeluBackwardMatchesFiniteDifferences) {
  CpuBackend be;
  auto x = randn(64, 20, 2.0f);
  const auto wout = randn(64, 21);
  std::vector<float> y(64), dx(64);
  auto loss = [&] {
    be.gelu_forward(f32(y), f32(x), x.size());
    return dot(y, wout);
  };
  be.gelu_backward(f32(dx), f32(x), f32(wout), x.size());
  check_fd("gelu", x, dx, loss);
}

// qkv [B,T,3C] → the reference's [B,NH,T,hs] layout of q (part 0), k (1) or v (2).
std::vector<float> heads_of(const std::vector<float>& qkv, int part, int B, int T, int C, int NH) {
  const int hs = C / NH;
  std::vector<float> out(static_cast<size_t>(B) * T * C);
  for (int b = 0; b < B; ++b)
    for (int h = 0; h < NH; ++h)
      for (int t = 0; t < T; ++t)
        for (int e = 0; e < hs; ++e)
          out[((static_cast<size_t>(b) * NH + h) * T + t) * hs + e] =
              qkv[(static_cast<size_t>(b) * T + t) * 3 * C + part * C + h * hs + e];
  return out;
}

TEST(CpuBackend, FlashAttentionIsTheTiledReferenceBitForBitAndMatchesFp64) {
  CpuBackend be;
  // T = 150 spans three 64-row tiles (the last one partial), so the online softmax rescales.
  const int B = 2, T = 150, C = 32, NH = 2, hs = C / NH;
  const auto qkv = randn(static_cast<size_t>(B) * T * 3 * C, 30);
  const auto dout = randn(static_cast<size_t>(B) * T * C, 31);
  std::vector<float> out(static_cast<size_t>(B) * T * C), lse(static_cast<size_t>(B) * NH * T);
  std::vector<float> dqkv(qkv.size());
  be.attention_forward(f32(out), lse.data(), f32(qkv), B, T, C, NH);
  be.attention_backward(f32(dqkv), f32(dout), f32(qkv), f32(out), lse.data(), B, T, C, NH);

  namespace attn = gcb::kernels::attn;
  attn::AttnShape a;
  a.batch = B;
  a.heads = NH;
  a.seq = T;
  a.head_dim = hs;
  a.causal = true;
  const auto q = heads_of(qkv, 0, B, T, C, NH), k = heads_of(qkv, 1, B, T, C, NH), v = heads_of(qkv, 2, B, T, C, NH);
  std::vector<float> d_o(dout.size());  // dout [B,T,C] → [B,NH,T,hs]
  for (int b = 0; b < B; ++b)
    for (int h = 0; h < NH; ++h)
      for (int t = 0; t < T; ++t)
        for (int e = 0; e < hs; ++e)
          d_o[((static_cast<size_t>(b) * NH + h) * T + t) * hs + e] =
              dout[(static_cast<size_t>(b) * T + t) * C + h * hs + e];
  std::vector<float> o(a.elements()), l(a.rows()), dq(a.elements()), dk(a.elements()), dv(a.elements());
  attn::tiled_forward(a, attn::forward_tiles(hs), q.data(), k.data(), v.data(), o.data(), l.data());
  attn::tiled_backward(a, attn::backward_tiles(hs), q.data(), k.data(), v.data(), o.data(), d_o.data(), l.data(),
                       dq.data(), dk.data(), dv.data());
  // Same algorithm, same tiles, same fp32 operations: bitwise equal.
  EXPECT_EQ(lse, l);
  for (int b = 0; b < B; ++b)
    for (int h = 0; h < NH; ++h)
      for (int t = 0; t < T; ++t)
        for (int e = 0; e < hs; ++e) {
          const size_t ref = ((static_cast<size_t>(b) * NH + h) * T + t) * hs + e;
          const size_t row = (static_cast<size_t>(b) * T + t);
          ASSERT_EQ(out[row * C + h * hs + e], o[ref]);
          ASSERT_EQ(dqkv[row * 3 * C + h * hs + e], dq[ref]);
          ASSERT_EQ(dqkv[row * 3 * C + C + h * hs + e], dk[ref]);
          ASSERT_EQ(dqkv[row * 3 * C + 2 * C + h * hs + e], dv[ref]);
        }
  // And the exact FP64 attention: fp32 online softmax over ≤ 150 keys errs ~1e-6 on O(1) values.
  std::vector<double> qd(q.begin(), q.end()), kd(k.begin(), k.end()), vd(v.begin(), v.end()),
      dod(d_o.begin(), d_o.end());
  std::vector<double> od(a.elements()), ld(a.rows()), dqd(a.elements()), dkd(a.elements()), dvd(a.elements());
  attn::naive_forward(a, qd.data(), kd.data(), vd.data(), od.data(), ld.data());
  attn::naive_backward(a, qd.data(), kd.data(), vd.data(), dod.data(), dqd.data(), dkd.data(), dvd.data());
  EXPECT_LT(attn::compare(od.data(), o.data(), o.size()).max_abs, 1e-5);
  EXPECT_LT(attn::compare(ld.data(), l.data(), l.size()).max_abs, 1e-5);
  EXPECT_LT(attn::compare(dqd.data(), dq.data(), dq.size()).max_abs, 1e-4);
  EXPECT_LT(attn::compare(dkd.data(), dk.data(), dk.size()).max_abs, 1e-4);
  EXPECT_LT(attn::compare(dvd.data(), dv.data(), dv.size()).max_abs, 1e-4);
}

TEST(CpuBackend, AttentionBackwardMatchesFiniteDifferencesAndIsCausal) {
  CpuBackend be;
  const int B = 2, T = 5, C = 8, NH = 2;
  auto qkv = randn(B * T * 3 * C, 30);
  const auto wout = randn(B * T * C, 31);
  std::vector<float> out(B * T * C), lse(B * NH * T), dqkv(qkv.size());
  auto loss = [&] {
    be.attention_forward(f32(out), lse.data(), f32(qkv), B, T, C, NH);
    return dot(out, wout);
  };
  loss();
  be.attention_backward(f32(dqkv), f32(wout), f32(qkv), f32(out), lse.data(), B, T, C, NH);
  check_fd("attention dqkv", qkv, dqkv, loss);
  // Causality: the output at t = 0 depends on no later key or value.
  const std::vector<float> out0(out.begin(), out.begin() + C);
  qkv[(1 * 3 * C) + C] += 1.0f;  // key of t = 1, sequence 0
  loss();
  for (int i = 0; i < C; ++i) EXPECT_EQ(out[i], out0[i]);
}

// Softmax cross-entropy over the whole vocabulary (one shard: v0 = 0), as the engine runs it at
// tp = 1: max, sums, finish, backward.
void cross_entropy(CpuBackend& be, std::vector<float>& logits, const std::vector<int32_t>& targets, int rows, int V,
                   std::vector<float>& losses, std::vector<float>& probs) {
  std::vector<float> rowmax(rows), stats(2 * rows);
  be.cross_entropy_max(rowmax.data(), f32(logits), rows, V, V);
  be.cross_entropy_sums(stats.data(), f32(logits), rowmax.data(), targets.data(), 0, rows, V, V);
  be.cross_entropy_finish(losses.data(), f32(probs), f32(logits), rowmax.data(), stats.data(), rows, V, V);
}

// Vocabulary padding: columns past `valid` hold anything (here values that would dominate the
// softmax); the loss and the real columns' probabilities and gradients are bitwise those of the
// unpadded rows, and the padded columns get probability and gradient exactly 0.
TEST(CpuBackend, CrossEntropyLeavesPaddedColumnsOut) {
  CpuBackend be;
  const int rows = 3, V = 7, Vp = 10;
  const auto real = randn(rows * V, 41, 2.0f);
  std::vector<float> padded(rows * Vp, 50.0f);
  for (int r = 0; r < rows; ++r) std::copy_n(real.begin() + r * V, V, padded.begin() + r * Vp);
  const std::vector<int32_t> targets = {0, 6, 3};
  auto run = [&](std::vector<float> logits, int stride, std::vector<float>& losses, std::vector<float>& dlogits) {
    std::vector<float> rowmax(rows), stats(2 * rows);
    be.cross_entropy_max(rowmax.data(), f32(logits), rows, stride, V);
    be.cross_entropy_sums(stats.data(), f32(logits), rowmax.data(), targets.data(), 0, rows, stride, V);
    be.cross_entropy_finish(losses.data(), f32(logits), f32(logits), rowmax.data(), stats.data(), rows, stride, V);
    be.cross_entropy_backward(f32(dlogits), f32(logits), targets.data(), 0, rows, stride, 0.25f);
  };
  std::vector<float> loss_real(rows), loss_padded(rows), d_real(rows * V), d_padded(rows * Vp, 9.0f);
  run(real, V, loss_real, d_real);
  run(padded, Vp, loss_padded, d_padded);
  for (int r = 0; r < rows; ++r) {
    EXPECT_EQ(loss_padded[r], loss_real[r]) << "row " << r;
    for (int i = 0; i < V; ++i) EXPECT_EQ(d_padded[r * Vp + i], d_real[r * V + i]) << r << "," << i;
    for (int i = V; i < Vp; ++i) EXPECT_EQ(d_padded[r * Vp + i], 0.0f) << r << "," << i;
  }
}

// The fused finish + backward of the CUDA backend, described per element on the host
// (kernels/train/cross_entropy_math.hpp), against the CpuBackend's finish then backward: bitwise
// in fp32 (the same expf, product and difference, nothing rounded in between), with padding
// columns and a target outside the shard. The Backend's default (the CPU oracle's path) is the
// two ops exactly.
TEST(CpuBackend, FusedCrossEntropyArithmeticEqualsFinishThenBackward) {
  CpuBackend be;
  const int rows = 5, V = 9, valid = 7, v0 = 100;
  const auto logits = randn(rows * V, 42, 3.0f);
  const std::vector<int32_t> targets = {100, 106, 103, 7, 101};  // 7: another shard's token
  std::vector<float> rowmax(rows), stats(2 * rows), losses(rows);
  be.cross_entropy_max(rowmax.data(), f32(logits), rows, V, valid);
  be.cross_entropy_sums(stats.data(), f32(logits), rowmax.data(), targets.data(), v0, rows, V, valid);
  const float dloss = 1.0f / 48;
  std::vector<float> two_ops = logits;
  be.cross_entropy_finish(losses.data(), f32(two_ops), f32(two_ops), rowmax.data(), stats.data(), rows, V, valid);
  be.cross_entropy_backward(f32(two_ops), f32(two_ops), targets.data(), v0, rows, V, dloss);
  std::vector<float> fused_default = logits, default_losses(rows);
  be.cross_entropy_finish_backward(default_losses.data(), f32(fused_default), f32(fused_default), rowmax.data(),
                                   stats.data(), targets.data(), v0, rows, V, valid, dloss);
  EXPECT_EQ(fused_default, two_ops);
  EXPECT_EQ(default_losses, losses);
  for (int r = 0; r < rows; ++r) {
    const float inv = 1.0f / stats[2 * r];
    EXPECT_EQ(kernels::train::cross_entropy_row_loss(stats[2 * r], stats[2 * r + 1], rowmax[r]), losses[r]);
    for (int i = 0; i < V; ++i) {
      const float d = kernels::train::cross_entropy_dlogit(logits[r * V + i], rowmax[r], inv, targets[r] - v0 == i,
                                                           i >= valid, dloss);
      EXPECT_EQ(d, two_ops[r * V + i]) << r << "," << i;
    }
  }
}

// A shard made only of padding (valid = 0, e.g. the last tp rank of a small padded vocabulary):
// its maximum is −inf and its Σexp 0, so after the all-reduces it contributes nothing.
TEST(CpuBackend, CrossEntropyOfAnAllPaddingShardIsNeutral) {
  CpuBackend be;
  const int rows = 2, V = 4;
  std::vector<float> logits(rows * V, 3.0f), rowmax(rows), stats(2 * rows);
  const std::vector<int32_t> targets = {1, 2};
  be.cross_entropy_max(rowmax.data(), f32(logits), rows, V, 0);
  EXPECT_EQ(rowmax[0], -INFINITY);
  rowmax = {1.0f, 2.0f};  // the all-reduced maxima of the other shards
  be.cross_entropy_sums(stats.data(), f32(logits), rowmax.data(), targets.data(), 8, rows, V, 0);
  EXPECT_EQ(stats, (std::vector<float>{0.0f, 0.0f, 0.0f, 0.0f}));
}

TEST(CpuBackend, CrossEntropyBackwardMatchesFiniteDifferences) {
  CpuBackend be;
  const int rows = 4, V = 11;
  auto logits = randn(rows * V, 40, 2.0f);
  const std::vector<int32_t> targets = {0, 3, 10, 7};
  std::vector<float> losses(rows), probs(rows * V), dlogits(rows * V);
  auto loss = [&] {
    cross_entropy(be, logits, targets, rows, V, losses, probs);
    double s = 0;
    for (float l : losses) s += l;
    return s;
  };
  loss();
  be.cross_entropy_backward(f32(dlogits), f32(probs), targets.data(), 0, rows, V, 1.0f);
  check_fd("cross-entropy", logits, dlogits, loss);
}

TEST(CpuBackend, CrossEntropyIsFiniteForConfidentlyWrongPredictions) {
  CpuBackend be;
  // The target's logit lies 1000 below the maximum: p_target = e^-1000 underflows to 0 in fp32,
  // so −log(p) would be +inf; the log-sum-exp form gives the exact loss, 1000 + log(1 + e^-1000).
  std::vector<float> logits = {1000.0f, 0.0f, 0.0f, 3.0f, 2.0f, 1.0f};
  const std::vector<int32_t> targets = {1, 0};
  std::vector<float> losses(2), probs(6);
  cross_entropy(be, logits, targets, 2, 3, losses, probs);
  EXPECT_FLOAT_EQ(losses[0], 1000.0f);
  EXPECT_TRUE(std::isfinite(losses[0]));
  EXPECT_NEAR(losses[1], std::log(std::exp(3.0) + std::exp(2.0) + std::exp(1.0)) - 3.0, 1e-6);
}

TEST(CpuBackend, EmbeddingAndBiasBackwardMatchFiniteDifferences) {
  CpuBackend be;
  const int B = 2, T = 3, C = 4, V = 5;
  auto wte = randn(V * C, 50), wpe = randn(T * C, 51);
  const std::vector<int32_t> tokens = {1, 4, 1, 0, 2, 1};
  const auto wout = randn(B * T * C, 52);
  std::vector<float> out(B * T * C), dwte(V * C, 0.0f), dwpe(T * C, 0.0f);
  auto loss = [&] {
    be.embedding_forward(f32(out), tokens.data(), f32(wte), 0, V, f32(wpe), B, T, C);
    return dot(out, wout);
  };
  be.embedding_backward(f32(dwte), f32(dwpe), f32(wout), tokens.data(), 0, V, B, T, C);
  check_fd("dwte", wte, dwte, loss);
  check_fd("dwpe", wpe, dwpe, loss);

  std::vector<float> dbias(C, 0.0f);
  be.bias_backward(f32(dbias), f32(wout), B * T, C);
  for (int j = 0; j < C; ++j) {
    double s = 0;
    for (int r = 0; r < B * T; ++r) s += wout[r * C + j];
    EXPECT_NEAR(dbias[j], s, 1e-5);
  }
}

TEST(CpuBackend, AdamWMatchesClosedForm) {
  CpuBackend be;
  std::vector<float> p = {1.0f, -2.0f}, g = {0.5f, -0.25f}, m = {0.0f, 0.0f}, v = {0.0f, 0.0f};
  AdamWArgs a;
  a.lr = 0.1f;
  a.weight_decay = 0.01f;
  a.step = 1;
  be.adamw(f32(p), f32(g), m.data(), v.data(), nullptr, 2, a);
  // Step 1: m̂ = g, v̂ = g², so the update is lr·(sign(g)·|g|/(|g| + eps) + wd·p).
  EXPECT_NEAR(p[0], 1.0 - 0.1 * (0.5 / (0.5 + 1e-8) + 0.01 * 1.0), 1e-6);
  EXPECT_NEAR(p[1], -2.0 - 0.1 * (-0.25 / (0.25 + 1e-8) + 0.01 * -2.0), 1e-6);
  EXPECT_FLOAT_EQ(m[0], 0.05f);
  EXPECT_FLOAT_EQ(v[1], 0.05f * 0.0625f);
}

TEST(CpuBackend, MemoryAccountingTracksCurrentAndPeakInBytesOfEachType) {
  CpuBackend be;
  {
    Buffer a = be.alloc(MemCategory::grads, DType::f32, 250);
    Buffer b = be.alloc(MemCategory::grads, DType::bf16, 12);
    EXPECT_EQ(a.bytes(), 1000u);
    EXPECT_EQ(b.bytes(), 24u);
    EXPECT_EQ(be.memory()[MemCategory::grads].current, 1024u);
  }
  EXPECT_EQ(be.memory()[MemCategory::grads].current, 0u);
  EXPECT_EQ(be.memory()[MemCategory::grads].peak, 1024u);
  EXPECT_EQ(be.memory().total.peak, 1024u);
  EXPECT_EQ(be.memory()[MemCategory::params].peak, 0u);
}

TEST(CpuBackend, InitShardEqualsSliceOfFullTensor) {
  CpuBackend be;
  const ParamLayout pl(named_config("tiny"));
  for (int unit : {0, 1}) {
    const size_t n = pl.unit_size(unit);
    std::vector<float> full(n), part(100);
    init_range(pl, be, f32(full), unit, 0, n, 7);
    init_range(pl, be, f32(part), unit, 333, 433, 7);
    for (size_t i = 0; i < 100; ++i) EXPECT_EQ(part[i], full[333 + i]);
  }
}

TEST(CpuBackend, Bf16StoresRoundToNearestEvenOnceFromFp32Results) {
  CpuBackend be;
  // 1 + 2⁻⁸ lies exactly halfway between the bf16 neighbours 1 and 1 + 2⁻⁷: ties go to the even
  // mantissa, 1. 1 + 3·2⁻⁹ lies above the midpoint and rounds up to 1 + 2⁻⁷.
  const std::vector<float> a = {1.0f, 1.0f, -3.0f}, b = {0x1p-8f, 3 * 0x1p-9f, 0.0f};
  std::vector<uint16_t> out(3);
  const View o{out.data(), DType::bf16};
  be.add(o, f32(a), f32(b), 3);
  EXPECT_EQ(bf16_to_float(out[0]), 1.0f);
  EXPECT_EQ(bf16_to_float(out[1]), 1.0f + 0x1p-7f);
  EXPECT_EQ(bf16_to_float(out[2]), -3.0f);
  // A bf16 GEMM accumulates in fp32 and rounds each output once: K = 512 products of 1·2⁻⁹
  // sum to exactly 1. Rounding the running sum to bf16 after every product would stall at 0.5,
  // where adding 2⁻⁹ is a tie between 0.5 and 0.5 + 2⁻⁸ that goes to the even 0.5.
  const int K = 512;
  std::vector<uint16_t> A(K, float_to_bf16(1.0f)), B(K, float_to_bf16(0x1p-9f)), C(1);
  be.gemm({false, false, 1, 1, K, {A.data(), DType::bf16}, {B.data(), DType::bf16}, {C.data(), DType::bf16}, 0.0f, {}});
  EXPECT_EQ(bf16_to_float(C[0]), 1.0f);
  // Accumulating (beta = 1) reads the bf16 value, adds in fp32 and rounds once.
  be.gemm({false, false, 1, 1, K, {A.data(), DType::bf16}, {B.data(), DType::bf16}, {C.data(), DType::bf16}, 1.0f, {}});
  EXPECT_EQ(bf16_to_float(C[0]), 2.0f);
}

TEST(CpuBackend, MixedPrecisionAdamWKeepsTheMasterAndRoundsTheParameters) {
  CpuBackend be;
  std::vector<float> master = {1.0f}, m = {0.0f}, v = {0.0f};
  std::vector<uint16_t> param = {float_to_bf16(1.0f)}, grad = {float_to_bf16(0.5f)};
  AdamWArgs a;
  a.lr = 1e-3f;
  a.step = 1;
  const View p{param.data(), DType::bf16}, g{grad.data(), DType::bf16};
  be.adamw(p, g, m.data(), v.data(), master.data(), 1, a);
  // The update of 1e-3 survives in the fp32 master; bf16 resolves steps of 2⁻⁸ just below 1
  // (its nearest value below 1 is 1 − 2⁻⁸), so the stored parameter, the master rounded to
  // nearest, is still 1. Without a master, bf16 parameters would lose the update for good.
  EXPECT_NEAR(master[0], 1.0 - 1e-3, 1e-7);
  EXPECT_EQ(bf16_to_float(param[0]), 1.0f);
  EXPECT_THROW(be.adamw(p, g, m.data(), v.data(), nullptr, 1, a), Fault);
}

}  // namespace
}  // namespace gcb::models
