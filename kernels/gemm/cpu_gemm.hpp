// The CPU GEMM path: OpenBLAS sgemm/dgemm on the same row-major TN problem as the GPU path
// (D[M,N] = A[M,K]·B[N,K]ᵀ), so the gemm family runs on every machine. Two implementations:
// cpu_gemm_openblas.cpp (OpenBLAS found) and cpu_gemm_none.cpp (not found: the cases are WAIVED).
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

}  // namespace gcb::kernels
