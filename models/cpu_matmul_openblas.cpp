// CpuBackend matmul through OpenBLAS (linked when GCB_HAVE_OPENBLAS).
#include <cblas.h>

#include "models/cpu_backend.hpp"

namespace gcb::models {

const char* cpu_matmul_impl() { return "openblas"; }

void cpu_sgemm(bool trans_a, bool trans_b, int M, int N, int K, const float* A, const float* B,
               float* C, float beta) {
  const int lda = trans_a ? M : K;
  const int ldb = trans_b ? K : N;
  cblas_sgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans,
              trans_b ? CblasTrans : CblasNoTrans, M, N, K, 1.0f, A, lda, B, ldb, beta, C, N);
}

}  // namespace gcb::models
