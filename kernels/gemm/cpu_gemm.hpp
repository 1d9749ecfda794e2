// The one home of gcbench's CPU BLAS calls. cpu_gemm: OpenBLAS sgemm/dgemm on the same row-major
// TN problem as the GPU path (D[M,N] = A[M,K]·B[N,K]ᵀ), so the gemm family runs on every machine.
// cpu_sgemm: the training CpuBackend's matmul. Two implementations: cpu_gemm_openblas.cpp
// (OpenBLAS found) and cpu_gemm_none.cpp (not found: cpu_gemm's cases are WAIVED, cpu_sgemm is a
// blocked loop).
#pragma once

#include <string>

#include "core/dtype.hpp"
#include "kernels/gemm/gemm_types.hpp"

namespace gcb::kernels {

// Whether a CPU BLAS was built in; when not, `reason` says why.
bool cpu_gemm_available(std::string* reason);
// "OpenBLAS <version/config>" for the result's params; "" when not built.
std::string cpu_gemm_library();
// D = A·Bᵀ for t = f32 (cblas_sgemm) or f64 (cblas_dgemm); blocking, host pointers, α = 1,
// β = 0. Throws gcb::UsageError for other types and gcb::Fault when no BLAS was built.
void cpu_gemm(DType t, const GemmShape& s, const void* a, const void* b, void* d);

// C[M,N] = op(A)·op(B) + beta·C, fp32, row-major, host pointers (cblas_sgemm, or a loop that
// accumulates each element in double over k in ascending order, independent of threads).
void cpu_sgemm(bool trans_a, bool trans_b, int M, int N, int K, const float* A, const float* B, float* C, float beta);
// Which cpu_sgemm is built in: "openblas" or "naive".
const char* cpu_sgemm_impl();
// Threads OpenBLAS may use (openblas_set_num_threads; 0 = all cores); the loop ignores it and
// cpu_blas_threads() is then 0.
void set_cpu_blas_threads(int threads);
int cpu_blas_threads();

}  // namespace gcb::kernels
