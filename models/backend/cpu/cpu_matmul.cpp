// CpuBackend's matmul: the CPU BLAS of kernels/gemm/cpu_gemm.hpp (OpenBLAS, or a blocked loop in
// builds without it).
#include "kernels/gemm/cpu_gemm.hpp"
#include "models/backend/cpu/cpu_backend.hpp"

namespace gcb::models {

const char* cpu_matmul_impl() { return kernels::cpu_sgemm_impl(); }

void cpu_sgemm(bool trans_a, bool trans_b, int M, int N, int K, const float* A, const float* B, float* C, float beta) {
  kernels::cpu_sgemm(trans_a, trans_b, M, N, K, A, B, C, beta);
}

void set_cpu_matmul_threads(int threads) { kernels::set_cpu_blas_threads(threads); }
int cpu_matmul_threads() { return kernels::cpu_blas_threads(); }

}  // namespace gcb::models
