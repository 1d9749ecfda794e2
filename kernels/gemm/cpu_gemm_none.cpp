// CPU GEMM when gcbench was built without OpenBLAS: the CPU gemm cases are WAIVED with this reason.
// cpu_sgemm, the training backend's matmul, is then a cache-blocked loop, rows split across OpenMP
// threads. Each C element accumulates over k in ascending order, so the result does not depend on
// threads. The accumulator is double, rounded to float once: a float running sum over k errs by up
// to k·2⁻²⁴ of Σ|terms|, and the layouts of the parallel tests reorder exactly these sums (over the
// vocabulary under tp, over rows under sp), so a cancelling sum (the tied-embedding gradient of a
// rare token) differed between layouts by more than the tests' 1e-6 floor after Adam. OpenBLAS's
// SIMD partial sums err far less; this oracle path now errs less than either.
#include <algorithm>
#include <vector>

#include "core/error.hpp"
#include "kernels/gemm/cpu_gemm.hpp"

namespace gcb::kernels {

bool cpu_gemm_available(std::string* reason) {
  if (reason) *reason = "gcbench was built without OpenBLAS (pkg-config found no openblas; install libopenblas-dev)";
  return false;
}

std::string cpu_gemm_library() { return {}; }

void cpu_gemm(DType, const GemmShape&, const void*, const void*, void*) {
  throw Fault("cpu_gemm called in a build without OpenBLAS");
}

const char* cpu_sgemm_impl() { return "naive"; }
std::string cpu_blas_core() { return {}; }

// The loop's results do not depend on its threads (each C element sums k in order): nothing to pin.
void set_cpu_blas_threads(int) {}
int cpu_blas_threads() { return 0; }

void cpu_sgemm(bool trans_a, bool trans_b, int M, int N, int K, const float* A, const float* B, float* C, float beta) {
  constexpr int kBlock = 64;
  auto a_at = [&](int i, int k) {
    return trans_a ? A[static_cast<size_t>(k) * M + i] : A[static_cast<size_t>(i) * K + k];
  };
  auto b_at = [&](int k, int j) {
    return trans_b ? B[static_cast<size_t>(j) * K + k] : B[static_cast<size_t>(k) * N + j];
  };
#pragma omp parallel for if (1L * M * N * K > (1L << 18))
  for (int i = 0; i < M; ++i) {
    float* c = C + static_cast<size_t>(i) * N;
    std::vector<double> acc(static_cast<size_t>(N), 0.0);
    for (int k0 = 0; k0 < K; k0 += kBlock) {
      const int k1 = std::min(K, k0 + kBlock);
      for (int k = k0; k < k1; ++k) {
        const double a = a_at(i, k);
        for (int j = 0; j < N; ++j) acc[j] += a * b_at(k, j);
      }
    }
    for (int j = 0; j < N; ++j)
      c[j] = static_cast<float>((beta == 0.0f ? 0.0 : static_cast<double>(beta) * c[j]) + acc[j]);
  }
}

}  // namespace gcb::kernels
