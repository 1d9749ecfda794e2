// CPU GEMM through OpenBLAS's CBLAS interface (see cpu_gemm.hpp).
#include <cblas.h>
#include <fmt/format.h>

#include "core/error.hpp"
#include "kernels/gemm/cpu_gemm.hpp"

namespace gcb::kernels {

bool cpu_gemm_available(std::string*) { return true; }

std::string cpu_gemm_library() { return fmt::format("OpenBLAS {}", openblas_get_config()); }

void cpu_gemm(DType t, const GemmShape& s, const void* a, const void* b, void* d) {
  const auto m = static_cast<blasint>(s.m), n = static_cast<blasint>(s.n), k = static_cast<blasint>(s.k);
  // Row-major A[M,K] (lda K) times B[N,K]ᵀ (ldb K) into D[M,N] (ldd N).
  if (t == DType::f32)
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, m, n, k, 1.0f, static_cast<const float*>(a), k,
                static_cast<const float*>(b), k, 0.0f, static_cast<float*>(d), n);
  else if (t == DType::f64)
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, m, n, k, 1.0, static_cast<const double*>(a), k,
                static_cast<const double*>(b), k, 0.0, static_cast<double*>(d), n);
  else
    throw UsageError(fmt::format("the CPU GEMM path runs fp32 and fp64, not {}", dtype_name(t)));
}

void cpu_sgemm(bool trans_a, bool trans_b, int M, int N, int K, const float* A, const float* B, float* C, float beta) {
  const int lda = trans_a ? M : K;
  const int ldb = trans_b ? K : N;
  cblas_sgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans, trans_b ? CblasTrans : CblasNoTrans, M, N, K, 1.0f, A,
              lda, B, ldb, beta, C, N);
}

const char* cpu_sgemm_impl() { return "openblas"; }

void set_cpu_blas_threads(int threads) { openblas_set_num_threads(threads > 0 ? threads : openblas_get_num_procs()); }
int cpu_blas_threads() { return openblas_get_num_threads(); }

}  // namespace gcb::kernels
