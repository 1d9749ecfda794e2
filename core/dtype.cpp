// The dtype table (names, sizes, float or not) and dtype.hpp's host conversions: round-to-nearest-even narrowing to
// bf16, fp16 and fp8 with saturation, and exact widening, bit for bit as the GPU intrinsics.
#include "core/dtype.hpp"

#include <array>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>

#include "core/error.hpp"

namespace gcb {

namespace {

struct DTypeInfo {
  DType type;
  std::string_view name;
  size_t size;
  bool is_float;
};

constexpr std::array<DTypeInfo, 9> kInfo{{
    {DType::f64, "fp64", 8, true},
    {DType::f32, "fp32", 4, true},
    {DType::tf32, "tf32", 4, true},
    {DType::f16, "fp16", 2, true},
    {DType::bf16, "bf16", 2, true},
    {DType::fp8_e4m3, "fp8_e4m3", 1, true},
    {DType::fp8_e5m2, "fp8_e5m2", 1, true},
    {DType::i8, "int8", 1, false},
    {DType::i32, "int32", 4, false},
}};

const DTypeInfo& info(DType t) {
  for (const auto& i : kInfo)
    if (i.type == t) return i;
  check_failed("gcbench", "info(t)", "unknown dtype", __FILE__, __LINE__);
}

// Generic float32 → small float with `exp_bits` exponent and `man_bits` mantissa bits, IEEE-like
// bias, round to nearest even, subnormals kept. Returns the magnitude bits (sign added by caller)
// or `overflow` when the rounded value exceeds `max_bits`.
uint32_t narrow_magnitude(float ax, int exp_bits, int man_bits, uint32_t max_bits, uint32_t overflow) {
  const int bias = (1 << (exp_bits - 1)) - 1;
  const uint32_t f = std::bit_cast<uint32_t>(ax);
  const int e32 = static_cast<int>(f >> 23);  // biased fp32 exponent
  uint32_t mant = (f & 0x7FFFFFu);
  if (e32 == 0 && mant == 0) return 0;
  int e = e32 - 127 + bias;  // target biased exponent
  // Full 24-bit significand (implicit bit for normals).
  uint32_t sig = e32 == 0 ? mant : (mant | 0x800000u);
  int shift = 23 - man_bits;  // bits to drop for a normal result
  if (e <= 0) {               // subnormal in the target: shift further right
    shift += 1 - e;
    e = 0;
  }
  if (shift > 24) return 0;  // underflows to zero even after rounding
  const uint32_t dropped = sig & ((1u << shift) - 1u);
  const uint32_t half = 1u << (shift - 1);
  uint32_t kept = sig >> shift;
  if (dropped > half || (dropped == half && (kept & 1u))) ++kept;  // ties to even
  // Recombine: for normals, `kept` includes the implicit bit at position man_bits.
  uint32_t bits;
  if (e == 0) {
    bits = kept;  // subnormal (a carry into bit man_bits makes it the smallest normal, correctly)
  } else {
    if (kept >> (man_bits + 1)) {  // rounding carried into a new binade
      kept >>= 1;
      ++e;
    }
    bits = (static_cast<uint32_t>(e) << man_bits) | (kept & ((1u << man_bits) - 1u));
  }
  return bits > max_bits ? overflow : bits;
}

float widen(uint32_t bits, int exp_bits, int man_bits, bool has_inf) {
  const int bias = (1 << (exp_bits - 1)) - 1;
  const uint32_t sign = bits >> (exp_bits + man_bits);
  const uint32_t e = (bits >> man_bits) & ((1u << exp_bits) - 1u);
  const uint32_t m = bits & ((1u << man_bits) - 1u);
  const float s = sign ? -1.0f : 1.0f;
  if (has_inf && e == (1u << exp_bits) - 1u)
    return m == 0 ? s * std::numeric_limits<float>::infinity() : std::numeric_limits<float>::quiet_NaN();
  if (e == 0) return s * std::ldexp(static_cast<float>(m), 1 - bias - man_bits);
  return s * std::ldexp(static_cast<float>(m | (1u << man_bits)), static_cast<int>(e) - bias - man_bits);
}

}  // namespace

std::string_view dtype_name(DType t) { return info(t).name; }
size_t dtype_size(DType t) { return info(t).size; }
bool dtype_is_float(DType t) { return info(t).is_float; }

const std::vector<DType>& all_dtypes() {
  static const std::vector<DType> all = [] {
    std::vector<DType> v;
    for (const auto& i : kInfo) v.push_back(i.type);
    return v;
  }();
  return all;
}

std::optional<DType> parse_dtype(std::string_view name) {
  for (const auto& i : kInfo)
    if (i.name == name) return i.type;
  struct Alias {
    std::string_view alias;
    DType type;
  };
  static constexpr std::array<Alias, 16> kAliases{{
      {"f64", DType::f64},
      {"double", DType::f64},
      {"f32", DType::f32},
      {"float", DType::f32},
      {"f16", DType::f16},
      {"half", DType::f16},
      {"bfloat16", DType::bf16},
      {"e4m3", DType::fp8_e4m3},
      {"fp8", DType::fp8_e4m3},
      {"e5m2", DType::fp8_e5m2},
      {"i8", DType::i8},
      {"int8_t", DType::i8},
      {"i32", DType::i32},
      {"int", DType::i32},
      {"int32_t", DType::i32},
      {"tf32", DType::tf32},
  }};
  for (const auto& a : kAliases)
    if (a.alias == name) return a.type;
  return std::nullopt;
}

uint16_t float_to_bf16(float x) {
  const uint32_t f = std::bit_cast<uint32_t>(x);
  if (std::isnan(x)) return static_cast<uint16_t>((f >> 16) | 0x40u);  // keep sign, force quiet
  // Round to nearest even on the 16 dropped bits; overflow rounds to Inf naturally.
  const uint32_t rounded = f + 0x7FFFu + ((f >> 16) & 1u);
  return static_cast<uint16_t>(rounded >> 16);
}

float bf16_to_float(uint16_t bits) { return std::bit_cast<float>(static_cast<uint32_t>(bits) << 16); }

uint16_t float_to_fp16(float x) {
  const uint32_t sign = (std::bit_cast<uint32_t>(x) >> 16) & 0x8000u;
  if (std::isnan(x)) return static_cast<uint16_t>(sign | 0x7E00u);
  if (std::isinf(x)) return static_cast<uint16_t>(sign | 0x7C00u);
  const uint32_t mag = narrow_magnitude(std::fabs(x), 5, 10, 0x7BFFu, 0x7C00u);
  return static_cast<uint16_t>(sign | mag);
}

float fp16_to_float(uint16_t bits) { return widen(bits, 5, 10, true); }

uint8_t float_to_fp8_e4m3(float x) {
  const uint32_t sign = (std::bit_cast<uint32_t>(x) >> 24) & 0x80u;
  if (std::isnan(x)) return static_cast<uint8_t>(sign | 0x7Fu);
  // E4M3 has no Inf: largest finite is 0x7E = 448; saturate (SATFINITE).
  const uint32_t mag = std::isinf(x) ? 0x7Eu : narrow_magnitude(std::fabs(x), 4, 3, 0x7Eu, 0x7Eu);
  return static_cast<uint8_t>(sign | mag);
}

float fp8_e4m3_to_float(uint8_t bits) {
  if ((bits & 0x7Fu) == 0x7Fu) return std::numeric_limits<float>::quiet_NaN();
  return widen(bits, 4, 3, false);
}

uint8_t float_to_fp8_e5m2(float x) {
  const uint32_t sign = (std::bit_cast<uint32_t>(x) >> 24) & 0x80u;
  if (std::isnan(x)) return static_cast<uint8_t>(sign | 0x7Fu);
  if (std::isinf(x)) return static_cast<uint8_t>(sign | 0x7Cu);
  const uint32_t mag = narrow_magnitude(std::fabs(x), 5, 2, 0x7Bu, 0x7Cu);
  return static_cast<uint8_t>(sign | mag);
}

float fp8_e5m2_to_float(uint8_t bits) { return widen(bits, 5, 2, true); }

float round_to_tf32(float x) {
  if (!std::isfinite(x)) return x;
  const uint32_t f = std::bit_cast<uint32_t>(x);
  const uint32_t rounded = (f + 0xFFFu + ((f >> 13) & 1u)) & ~0x1FFFu;
  return std::bit_cast<float>(rounded);
}

void store_as(DType t, void* buffer, size_t i, double x) {
  const float xf = static_cast<float>(x);
  switch (t) {
    case DType::f64: static_cast<double*>(buffer)[i] = x; return;
    case DType::f32: static_cast<float*>(buffer)[i] = xf; return;
    case DType::tf32: static_cast<float*>(buffer)[i] = round_to_tf32(xf); return;
    case DType::f16: static_cast<uint16_t*>(buffer)[i] = float_to_fp16(xf); return;
    case DType::bf16: static_cast<uint16_t*>(buffer)[i] = float_to_bf16(xf); return;
    case DType::fp8_e4m3: static_cast<uint8_t*>(buffer)[i] = float_to_fp8_e4m3(xf); return;
    case DType::fp8_e5m2: static_cast<uint8_t*>(buffer)[i] = float_to_fp8_e5m2(xf); return;
    case DType::i8: static_cast<int8_t*>(buffer)[i] = static_cast<int8_t>(std::lrint(x)); return;
    case DType::i32: static_cast<int32_t*>(buffer)[i] = static_cast<int32_t>(std::lrint(x)); return;
  }
}

double load_as(DType t, const void* buffer, size_t i) {
  switch (t) {
    case DType::f64: return static_cast<const double*>(buffer)[i];
    case DType::f32:
    case DType::tf32: return static_cast<const float*>(buffer)[i];
    case DType::f16: return fp16_to_float(static_cast<const uint16_t*>(buffer)[i]);
    case DType::bf16: return bf16_to_float(static_cast<const uint16_t*>(buffer)[i]);
    case DType::fp8_e4m3: return fp8_e4m3_to_float(static_cast<const uint8_t*>(buffer)[i]);
    case DType::fp8_e5m2: return fp8_e5m2_to_float(static_cast<const uint8_t*>(buffer)[i]);
    case DType::i8: return static_cast<const int8_t*>(buffer)[i];
    case DType::i32: return static_cast<const int32_t*>(buffer)[i];
  }
  return 0.0;
}

}  // namespace gcb
