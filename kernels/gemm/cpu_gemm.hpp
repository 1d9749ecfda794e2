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

// C[M,N] = op(A)·op(B) + beta·C, fp32, row-major, host pointers. Its bits never depend on the
// number of threads: with OpenBLAS, the output is cut into the panels of sgemm_panels (a function
// of M and N alone), each one single-threaded cblas_sgemm, threads sharing out the panels; without
// it, a loop that accumulates each element in double over k in ascending order. The bits do
// depend on OpenBLAS's kernel (OPENBLAS_CORETYPE / the CPU it detects) and version.
void cpu_sgemm(bool trans_a, bool trans_b, int M, int N, int K, const float* A, const float* B, float* C, float beta);
// Which cpu_sgemm is built in: "openblas" or "naive".
const char* cpu_sgemm_impl();
// The kernel family OpenBLAS runs on this CPU (openblas_get_corename: "Haswell", "Zen",
// "SkylakeX", ...; OPENBLAS_CORETYPE chooses another); "" without OpenBLAS.
std::string cpu_blas_core();
// Threads cpu_sgemm shares its panels among (0 = OpenMP's default for the calling thread); they
// change its speed, never its bits. The loop ignores it and cpu_blas_threads() is then 0.
void set_cpu_blas_threads(int threads);
int cpu_blas_threads();

// The panels of cpu_sgemm (OpenBLAS build): the longer side of C (rows when M ≥ N) cut into
// `count` panels of `width` (the last one shorter), width = max(kSgemmMinPanel, ⌈side /
// kSgemmMaxPanels⌉ rounded up to 16). Wide enough that repacking the other operand per panel costs
// little, many enough to share among the cores of a CPU training host.
inline constexpr int kSgemmMinPanel = 128;
inline constexpr int kSgemmMaxPanels = 64;
struct SgemmPanels {
  bool rows = true;
  int width = 0;
  int count = 0;
};
inline SgemmPanels sgemm_panels(int M, int N) {
  SgemmPanels p;
  p.rows = M >= N;
  const int side = p.rows ? M : N;
  const int per_panel = (side + kSgemmMaxPanels - 1) / kSgemmMaxPanels;
  p.width = per_panel <= kSgemmMinPanel ? kSgemmMinPanel : (per_panel + 15) / 16 * 16;
  p.count = side <= 0 ? 0 : (side + p.width - 1) / p.width;
  return p;
}

}  // namespace gcb::kernels
