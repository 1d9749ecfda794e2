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

}  // namespace gcb::kernels
