// Byte sizes (size.hpp): parse_size with binary suffixes as nccl-tests reads them, format_bytes, and size_sweep from
// min to max by factor or increment.
#include "core/size.hpp"

#include <cctype>
#include <charconv>
#include <cmath>
#include <fmt/format.h>

#include "core/error.hpp"

namespace gcb {

uint64_t parse_size(std::string_view text) {
  const std::string original(text);
  auto bad = [&](const char* why) {
    return UsageError(fmt::format("invalid size '{}': {} (expected e.g. 4096, 64K, 1M, 8G)", original, why));
  };
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.remove_suffix(1);
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front()))) text.remove_prefix(1);
  if (text.empty()) throw bad("empty");
  double value = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec == std::errc::result_out_of_range) throw bad("too large");
  if (ec != std::errc() || ptr == text.data()) throw bad("no number");
  if (value < 0 || !std::isfinite(value)) throw bad("must be a non-negative number");
  std::string_view suffix(ptr, static_cast<size_t>(text.data() + text.size() - ptr));
  while (!suffix.empty() && suffix.front() == ' ') suffix.remove_prefix(1);
  double scale = 1;
  if (!suffix.empty()) {
    const char u = static_cast<char>(std::toupper(static_cast<unsigned char>(suffix.front())));
    switch (u) {
      case 'K': scale = 0x1p10; break;
      case 'M': scale = 0x1p20; break;
      case 'G': scale = 0x1p30; break;
      case 'T': scale = 0x1p40; break;
      case 'B': scale = 1; break;
      default: throw bad("unknown unit");
    }
    if (u != 'B') {
      suffix.remove_prefix(1);
      if (suffix == "iB" || suffix == "ib" || suffix == "B" || suffix == "b") suffix = {};
    } else {
      suffix.remove_prefix(1);
    }
    if (!suffix.empty()) throw bad("unknown unit");
  }
  const double bytes = value * scale;
  if (bytes != std::floor(bytes)) throw bad("not a whole number of bytes");
  if (bytes >= 0x1p63) throw bad("too large");
  return static_cast<uint64_t>(bytes);
}

std::string format_bytes(double bytes) {
  static constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  int unit = 0;
  while (std::fabs(bytes) >= 1024.0 && unit < 5) {
    bytes /= 1024.0;
    ++unit;
  }
  if (unit == 0) return fmt::format("{:.0f} B", bytes);
  return fmt::format("{:.4g} {}", bytes, kUnits[unit]);
}

std::vector<uint64_t> size_sweep(uint64_t min, uint64_t max, uint64_t factor, uint64_t increment) {
  if (min > max) throw UsageError(fmt::format("size sweep: minimum {} exceeds maximum {}", min, max));
  if (increment == 0 && factor < 2 && min != max)
    throw UsageError("size sweep: the step factor must be at least 2 (or give an increment)");
  std::vector<uint64_t> sizes;
  for (uint64_t s = min; s <= max;) {
    sizes.push_back(s);
    const uint64_t next = increment > 0 ? s + increment : (s == 0 ? 1 : s * factor);
    if (next <= s) break;  // overflow, or a zero-size sweep with a single point
    s = next;
  }
  return sizes;
}

}  // namespace gcb
