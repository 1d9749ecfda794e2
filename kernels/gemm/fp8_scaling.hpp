// Per-tensor FP8 scaling (TransformerEngine's delayed-scaling recipe, NVIDIA/TransformerEngine):
// quantise x as fp8(x · scale) with scale = fp8_max / amax / 2^margin, and hand cuBLASLt the
// inverse (the dequantisation factor) as the A/B scale pointer. Pure host arithmetic.
#pragma once

#include <string>

#include "core/dtype.hpp"

namespace gcb::kernels {

// Largest finite value: E4M3 448, E5M2 57344 (OCP FP8 spec). Throws UsageError for other types.
double fp8_max(DType t);

// scale = fp8_max / amax / 2^margin, so the largest |x| lands 2^margin below the format's
// maximum. amax = 0 (all zeros) or a non-finite amax keeps the previous scale (TE's rule: a
// broken amax must not poison the scale); `previous` defaults to 1. Never returns 0 or Inf.
double fp8_scale_from_amax(double amax, DType t, int margin = 0, double previous = 1.0);

// The factor cuBLASLt multiplies the FP8 product by to undo the scaling: 1 / scale.
double fp8_dequant_scale(double scale);

// "" when a GPU of compute capability major.minor runs FP8 matmuls (cuBLASLt FP8 needs sm_89
// or newer: Ada and Hopper, cuBLAS docs "cublasLtMatmul" FP8 notes); else the reason.
std::string fp8_unsupported_reason(int major, int minor);

}  // namespace gcb::kernels
