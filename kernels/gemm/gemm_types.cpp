// Shape arithmetic and the cuBLASLt layout plan (see gemm_types.hpp).
#include "kernels/gemm/gemm_types.hpp"

#include <fmt/format.h>

#include "core/error.hpp"

namespace gcb::kernels {

double gemm_flops(const GemmShape& s) {
  return 2.0 * static_cast<double>(s.m) * static_cast<double>(s.n) * static_cast<double>(s.k);
}

double gemm_bytes(const GemmShape& s, DType input, DType output) {
  const double m = static_cast<double>(s.m), n = static_cast<double>(s.n), k = static_cast<double>(s.k);
  return static_cast<double>(dtype_size(input)) * (m * k + n * k) + static_cast<double>(dtype_size(output)) * m * n;
}

std::string_view gemm_compute_name(GemmCompute c) {
  switch (c) {
    case GemmCompute::f64: return "64F";
    case GemmCompute::f32: return "32F";
    case GemmCompute::f32_fast_tf32: return "32F_FAST_TF32";
    case GemmCompute::i32: return "32I";
  }
  return "?";
}

DType gemm_output_type(DType input) {
  switch (input) {
    case DType::f64: return DType::f64;
    case DType::f32:
    case DType::tf32: return DType::f32;
    case DType::f16: return DType::f16;
    case DType::bf16:
    case DType::fp8_e4m3:
    case DType::fp8_e5m2: return DType::bf16;
    case DType::i8: return DType::i32;
    case DType::i32: break;
  }
  throw UsageError(fmt::format("no GEMM for input type {}", dtype_name(input)));
}

DType gemm_b_type(DType input) {
  if (input == DType::fp8_e5m2) return DType::fp8_e4m3;
  return input == DType::tf32 ? DType::f32 : input;
}

LtGemmPlan make_lt_gemm_plan(const GemmShape& s, DType input, bool fast_accum) {
  if (s.m <= 0 || s.n <= 0 || s.k <= 0)
    throw UsageError(fmt::format("GEMM dims must be positive (m={} n={} k={})", s.m, s.n, s.k));
  if (input == DType::f64 || input == DType::i32)
    throw UsageError(fmt::format("cuBLASLt GEMM path does not take {}", dtype_name(input)));
  const bool fp8 = input == DType::fp8_e4m3 || input == DType::fp8_e5m2;
  // FP8 needs M, N, K multiples of 16 (16-byte leading dimensions; cuBLAS docs, PyTorch
  // _scaled_mm checks %16); IMMA with CUBLASLT_ORDER_COL needs 4-element alignment of N and K
  // (cuBLAS docs, cublasLtMatmulDescCreate).
  if (fp8 && (s.m % 16 != 0 || s.n % 16 != 0 || s.k % 16 != 0))
    throw UsageError(fmt::format("{} GEMM needs M, N and K to be multiples of 16 (got m={} n={} k={})",
                                 dtype_name(input), s.m, s.n, s.k));
  if (input == DType::i8 && (s.n % 4 != 0 || s.k % 4 != 0))
    throw UsageError(fmt::format("int8 GEMM needs N and K to be multiples of 4 (got m={} n={} k={})", s.m, s.n, s.k));
  LtGemmPlan p;
  p.lt_m = s.n;
  p.lt_n = s.m;
  p.lt_k = s.k;
  p.trans_a = true;
  p.trans_b = false;
  // tf32 is stored as fp32; only the compute type differs.
  const DType storage = input == DType::tf32 ? DType::f32 : input;
  const DType out = gemm_output_type(input);
  p.a = {gemm_b_type(input), s.k, s.n, s.k};  // our B[N,K] row-major = K×N column-major
  p.b = {storage, s.k, s.m, s.k};             // our A[M,K] row-major = K×M column-major
  p.c = {out, s.n, s.m, s.n};                 // our D[M,N] row-major = N×M column-major
  p.d = p.c;
  p.compute = input == DType::tf32 ? GemmCompute::f32_fast_tf32
              : input == DType::i8 ? GemmCompute::i32
                                   : GemmCompute::f32;
  p.scale_type = input == DType::i8 ? DType::i32 : DType::f32;
  p.fp8 = fp8;
  p.fast_accum = fp8 && fast_accum;
  return p;
}

std::string lt_plan_key(const LtGemmPlan& p) {
  return fmt::format("{}{}/m={}/n={}/k={}/a={}/b={}/d={}/compute={}/fast_accum={}", p.trans_a ? 't' : 'n',
                     p.trans_b ? 't' : 'n', p.lt_m, p.lt_n, p.lt_k, dtype_name(p.a.type), dtype_name(p.b.type),
                     dtype_name(p.d.type), gemm_compute_name(p.compute), p.fast_accum ? 1 : 0);
}

}  // namespace gcb::kernels
