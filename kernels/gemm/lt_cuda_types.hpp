// Our element and compute types as cuBLASLt's enums, for the cuBLASLt launchers of this folder
// (cublaslt_gemm.cpp, lt_linear_run.cpp). Includes cuBLASLt: for .cpp files of kernels/gemm only.
#pragma once

#include <cublasLt.h>

#include "core/error.hpp"
#include "kernels/gemm/gemm_types.hpp"

namespace gcb::kernels {

inline cudaDataType_t cuda_type(DType t) {
  switch (t) {
    case DType::f64: return CUDA_R_64F;
    case DType::f32:
    case DType::tf32: return CUDA_R_32F;
    case DType::f16: return CUDA_R_16F;
    case DType::bf16: return CUDA_R_16BF;
    case DType::fp8_e4m3: return CUDA_R_8F_E4M3;
    case DType::fp8_e5m2: return CUDA_R_8F_E5M2;
    case DType::i8: return CUDA_R_8I;
    case DType::i32: return CUDA_R_32I;
  }
  throw Fault("unknown dtype");
}

inline cublasComputeType_t cuda_compute(GemmCompute c) {
  switch (c) {
    case GemmCompute::f64: return CUBLAS_COMPUTE_64F;
    case GemmCompute::f32: return CUBLAS_COMPUTE_32F;
    case GemmCompute::f32_fast_tf32: return CUBLAS_COMPUTE_32F_FAST_TF32;
    case GemmCompute::i32: return CUBLAS_COMPUTE_32I;
  }
  throw Fault("unknown compute type");
}

// One cuBLASLt matrix layout (column-major, as cuBLASLt reads it).
inline cublasLtMatrixLayout_t make_lt_layout(const LtLayout& l) {
  cublasLtMatrixLayout_t out = nullptr;
  CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&out, cuda_type(l.type), static_cast<uint64_t>(l.rows),
                                          static_cast<uint64_t>(l.cols), l.ld));
  return out;
}

}  // namespace gcb::kernels
