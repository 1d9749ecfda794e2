// CpuBackend matmul through OpenBLAS (linked when GCB_HAVE_OPENBLAS).
#include <cblas.h>

#include "models/cpu_backend.hpp"

namespace gcb::models {

const char* cpu_matmul_impl() { return "openblas"; }

void set_cpu_matmul_threads(int threads) {
  openblas_set_num_threads(threads > 0 ? threads : openblas_get_num_procs());
}
int cpu_matmul_threads() { return openblas_get_num_threads(); }

void cpu_sgemm(bool trans_a, bool trans_b, int M, int N, int K, const float* A, const float* B,
               float* C, float beta) {
  const int lda = trans_a ? M : K;
  const int ldb = trans_b ? K : N;
  cblas_sgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans,
              trans_b ? CblasTrans : CblasNoTrans, M, N, K, 1.0f, A, lda, B, ldb, beta, C, N);
}

}  // namespace gcb::models
