// Units of `gcbench compare`: a metric measured in GB/s on one side and MB/s on the other is
// compared after scaling, not as plain numbers (+99,900 %), and units of different kinds are not
// compared at all. Decimal prefixes for rates and times, as the result schema defines GB/s =
// 1e9 B/s; binary ones for KiB/MiB/GiB.
#include <array>
#include <optional>
#include <string_view>

#include "reports/compare.hpp"

namespace gcb {

namespace {

struct UnitScale {
  std::string_view unit, kind;
  double to_base;  // value × to_base = value in the kind's base unit
};

constexpr std::array<UnitScale, 33> kUnits = {{
    {"B/s", "bytes/s", 1},
    {"KB/s", "bytes/s", 1e3},
    {"MB/s", "bytes/s", 1e6},
    {"GB/s", "bytes/s", 1e9},
    {"TB/s", "bytes/s", 1e12},
    {"KiB/s", "bytes/s", 0x1p10},
    {"MiB/s", "bytes/s", 0x1p20},
    {"GiB/s", "bytes/s", 0x1p30},
    {"s", "seconds", 1},
    {"ms", "seconds", 1e-3},
    {"us", "seconds", 1e-6},
    {"µs", "seconds", 1e-6},
    {"ns", "seconds", 1e-9},
    {"FLOP/s", "flop/s", 1},
    {"GFLOP/s", "flop/s", 1e9},
    {"TFLOP/s", "flop/s", 1e12},
    {"PFLOP/s", "flop/s", 1e15},
    {"B", "bytes", 1},
    {"KB", "bytes", 1e3},
    {"MB", "bytes", 1e6},
    {"GB", "bytes", 1e9},
    {"KiB", "bytes", 0x1p10},
    {"MiB", "bytes", 0x1p20},
    {"GiB", "bytes", 0x1p30},
    {"Hz", "hertz", 1},
    {"kHz", "hertz", 1e3},
    {"MHz", "hertz", 1e6},
    {"GHz", "hertz", 1e9},
    {"tokens/s", "tokens/s", 1},
    {"%", "percent", 1},
    {"x", "ratio", 1},
    {"ratio", "ratio", 1},
    {"cycles", "cycles", 1},
}};

std::optional<UnitScale> find_unit(std::string_view unit) {
  for (const UnitScale& u : kUnits)
    if (u.unit == unit) return u;
  return std::nullopt;
}

}  // namespace

std::optional<double> unit_factor(std::string_view from, std::string_view to) {
  if (from == to) return 1.0;
  const auto f = find_unit(from), t = find_unit(to);
  if (!f || !t || f->kind != t->kind) return std::nullopt;
  return f->to_base / t->to_base;
}

}  // namespace gcb
