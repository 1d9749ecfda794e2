// Data types used across the suite: names, sizes, and host conversions with round-to-nearest-
// even. The bit-level conversions are what GPU kernels do in hardware (__float2bfloat16_rn,
// __float2half_rn, __nv_cvt_float_to_fp8 with saturation), so host references match exactly.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gcb {

enum class DType : uint8_t { f64, f32, tf32, f16, bf16, fp8_e4m3, fp8_e5m2, i8, i32 };

// Canonical short names: "fp64", "fp32", "tf32", "fp16", "bf16", "fp8_e4m3", "fp8_e5m2", "int8", "int32".
std::string_view dtype_name(DType t);
// Accepts the canonical names and common aliases ("f32", "float", "half", "e4m3", ...);
// std::nullopt for anything else.
std::optional<DType> parse_dtype(std::string_view name);
// Storage bytes of one element (tf32 is stored as 4 bytes).
size_t dtype_size(DType t);
bool dtype_is_float(DType t);
const std::vector<DType>& all_dtypes();

// Host conversions. Float → narrow types round to nearest even. NaN stays NaN.
// fp16/bf16/fp8_e5m2 overflow to ±Inf as IEEE does; fp8_e4m3 (no Inf encoding) saturates to
// ±448 like __nv_cvt_float_to_fp8(..., __NV_SATFINITE, __NV_E4M3) (OCP FP8 spec, "E4M3").
uint16_t float_to_bf16(float x);
float bf16_to_float(uint16_t bits);
uint16_t float_to_fp16(float x);
float fp16_to_float(uint16_t bits);
uint8_t float_to_fp8_e4m3(float x);
float fp8_e4m3_to_float(uint8_t bits);
uint8_t float_to_fp8_e5m2(float x);
float fp8_e5m2_to_float(uint8_t bits);
// tf32 keeps fp32's exponent and 10 mantissa bits; rounded to nearest even, still stored as fp32.
float round_to_tf32(float x);

// Stores `x` in element `i` of a buffer of type `t` (round to nearest even), and reads it back
// as double. Used by host references and by seeded initialisation of typed buffers.
void store_as(DType t, void* buffer, size_t i, double x);
double load_as(DType t, const void* buffer, size_t i);

}  // namespace gcb
