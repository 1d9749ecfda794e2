// CPU GEMM through OpenBLAS's CBLAS interface (see cpu_gemm.hpp).
#include <cblas.h>
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "core/error.hpp"
#include "kernels/gemm/cpu_gemm.hpp"
#include "kernels/mem/host_mem.hpp"

namespace gcb::kernels {

namespace {
// Threads cpu_sgemm runs its panels on; 0 = OpenMP's default for the calling thread.
std::atomic<int> g_sgemm_threads{0};
}  // namespace

bool cpu_gemm_available(std::string*) { return true; }

std::string cpu_gemm_library() { return fmt::format("OpenBLAS {}", openblas_get_config()); }

void cpu_gemm(DType t, const GemmShape& s, const void* a, const void* b, void* d) {
  const auto m = static_cast<blasint>(s.m), n = static_cast<blasint>(s.n), k = static_cast<blasint>(s.k);
  // This call is OpenBLAS itself, threaded its own way: cpu_sgemm's single-threaded panels may have
  // left OpenBLAS's thread count at 1 (see cpu_sgemm), so it is set back to OpenMP's before each call.
  openblas_set_num_threads(host_threads());
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

// Bits that do not depend on the thread count, by construction. OpenBLAS's own threading splits the
// output among threads by their number, and some of its kernels (Haswell, Zen: OpenBLAS 0.3.21's
// AVX2 sgemm) then give an element other bits with 1 or 2 threads. Here the output is cut into
// panels whose sizes are a function of the shape alone (sgemm_panels), each panel is one
// single-threaded sgemm, and threads only decide who computes which panel: an element's bits depend
// on the shape, the data and OpenBLAS's kernel (the core type it runs), never on how many threads
// ran. Single-threaded: OpenBLAS built on OpenMP runs a call made inside an active parallel region
// on one thread (common_thread.h, num_cpu_avail: omp_in_parallel()); a team of one thread is not an
// active region, so each panel's task sets its own OpenMP thread count to 1 first, which OpenBLAS
// reads (omp_get_max_threads) — it also sets OpenBLAS's global count to 1, which cpu_gemm undoes.
// OpenBLAS on its own pthreads pool (or sequential) is set to one thread for the same reason.
void cpu_sgemm(bool trans_a, bool trans_b, int M, int N, int K, const float* A, const float* B, float* C, float beta) {
  if (M == 0 || N == 0) return;
  const int lda = trans_a ? M : K;
  const int ldb = trans_b ? K : N;
  const auto ta = trans_a ? CblasTrans : CblasNoTrans, tb = trans_b ? CblasTrans : CblasNoTrans;
  const SgemmPanels p = sgemm_panels(M, N);
  const int dim = p.rows ? M : N;
#ifdef _OPENMP
  const bool openmp_blas = openblas_get_parallel() == 2;
#else
  const bool openmp_blas = false;
#endif
  if (!openmp_blas) openblas_set_num_threads(1);
  const int wanted = g_sgemm_threads.load(std::memory_order_relaxed);
  const int threads = std::min(p.count, wanted > 0 ? wanted : host_threads());
#pragma omp parallel for schedule(static) num_threads(threads)
  for (int i = 0; i < p.count; ++i) {
#ifdef _OPENMP
    if (openmp_blas) omp_set_num_threads(1);  // this task's count only; ends with the region
#endif
    const int s = i * p.width, n = std::min(p.width, dim - s);
    const auto at = [](int r, int ld) { return static_cast<size_t>(r) * static_cast<size_t>(ld); };
    if (p.rows) {
      // Rows s..s+n of C: rows of A (columns of Aᵀ when trans_a), all of B.
      const float* a = trans_a ? A + s : A + at(s, K);
      cblas_sgemm(CblasRowMajor, ta, tb, n, N, K, 1.0f, a, lda, B, ldb, beta, C + at(s, N), N);
    } else {
      // Columns s..s+n of C: all of A, columns of B (rows of Bᵀ when trans_b).
      const float* b = trans_b ? B + at(s, K) : B + s;
      cblas_sgemm(CblasRowMajor, ta, tb, M, n, K, 1.0f, A, lda, b, ldb, beta, C + s, N);
    }
  }
}

const char* cpu_sgemm_impl() { return "openblas"; }
std::string cpu_blas_core() { return openblas_get_corename(); }

void set_cpu_blas_threads(int threads) { g_sgemm_threads.store(std::max(threads, 0), std::memory_order_relaxed); }
int cpu_blas_threads() {
  const int wanted = g_sgemm_threads.load(std::memory_order_relaxed);
  return wanted > 0 ? wanted : host_threads();
}

}  // namespace gcb::kernels
