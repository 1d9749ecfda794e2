// Pure descriptions of one GEMM, shared by the cuBLASLt launcher, the OpenBLAS path, the FP64
// reference check and the benchmarks: the problem (shape, dtype), its FLOP and byte counts, and
// the cuBLASLt layout plan as a plain struct (testable without a GPU or CUDA headers).
#pragma once

#include <cstdint>
#include <string>

#include "core/dtype.hpp"

namespace gcb::kernels {

// Row-major D[M,N] = A[M,K] · B[N,K]ᵀ: A is the activation, B the weight as nn.Linear stores it
// (K contiguous in both). This is cuBLASLt's "TN" layout, the only one FP8 accepts on Hopper
// (cuBLAS docs, cublasLtMatmulDescCreate), so every dtype uses it and the numbers compare across dtypes.
struct GemmShape {
  int64_t m = 0, n = 0, k = 0;
  bool operator==(const GemmShape&) const = default;
};

// 2·M·N·K (one multiply and one add per term; NVIDIA Matrix Multiplication Background User's Guide).
double gemm_flops(const GemmShape& s);
// Compulsory bytes e_in·(MK + NK) + e_out·MN with β = 0 (NVIDIA Matrix Multiplication Background User's Guide):
// the traffic a memory-bound GEMM (small M) cannot avoid.
double gemm_bytes(const GemmShape& s, DType input, DType output);

// The accumulation a GEMM of this input type uses and the type it writes.
enum class GemmCompute { f64, f32, f32_fast_tf32, i32 };
std::string_view gemm_compute_name(GemmCompute c);

// One cuBLASLt matrix layout, column-major as cuBLASLt reads it.
struct LtLayout {
  DType type = DType::f32;
  int64_t rows = 0, cols = 0, ld = 0;
  bool operator==(const LtLayout&) const = default;
};

// Everything cuBLASLt needs to be told about a problem, before any CUDA type is involved.
// Row-major D[M,N] is column-major Dᵀ[N,M] = B·Aᵀ, so cuBLASLt's (m, n, k) = (N, M, K), its "A"
// is our B (stored K×N, ld K, op T) and its "B" is our A (stored K×M, ld K, op N).
struct LtGemmPlan {
  int64_t lt_m = 0, lt_n = 0, lt_k = 0;
  bool trans_a = true, trans_b = false;  // TN
  LtLayout a, b, c, d;                   // cuBLASLt's A (= our B), B (= our A), C, D
  GemmCompute compute = GemmCompute::f32;
  DType scale_type = DType::f32;  // type of alpha/beta (and of FP8 scale factors)
  bool fp8 = false;               // A/B scale pointers apply; TN is mandatory
  bool fast_accum = false;        // CUBLASLT_MATMUL_DESC_FAST_ACCUM (FP8 only)
};

// The output type each input type writes in our benchmarks: fp32/tf32 → fp32, fp16 → fp16,
// bf16 → bf16, fp8 → bf16 (TransformerEngine's usual forward output), int8 → int32.
DType gemm_output_type(DType input);

// Storage type of B for an input type: the input type itself (tf32 → fp32), except fp8_e5m2,
// whose B is E4M3 because cuBLASLt has no E5M2×E5M2 kernel (pytorch/pytorch#132005): an
// "fp8_e5m2" GEMM is E5M2 activations/gradients × E4M3 weights, TransformerEngine's dgrad.
DType gemm_b_type(DType input);

// Builds the plan for `input` (fp32, tf32, fp16, bf16, fp8_e4m3, fp8_e5m2, int8). Throws
// gcb::UsageError for other types, non-positive dims, or a shape cuBLASLt cannot take for that
// type (FP8: K and both leading dimensions multiples of 16 bytes; INT8: multiples of 4; see
// the cuBLAS docs on FP8 and IMMA layouts).
LtGemmPlan make_lt_gemm_plan(const GemmShape& s, DType input, bool fast_accum = false);

// Cache key of a plan for the autotuner: every field that changes which kernels are valid or
// fastest ("tn/m=…/n=…/k=…/a=…/b=…/d=…/compute=…/fast_accum=…").
std::string lt_plan_key(const LtGemmPlan& p);

}  // namespace gcb::kernels
