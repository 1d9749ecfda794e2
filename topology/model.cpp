// The Topology model's own operations and the helpers every topology format shares: path type
// names, cpulist/cpumask conversion, PCIe speed names, and the PCI-tree path classifier.
#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdio>

#include <fmt/format.h>

#include "core/error.hpp"
#include "topology/detail.hpp"
#include "topology/topology.hpp"

namespace gcb::topo {

std::string to_string(Link link) {
  switch (link.type) {
    case PathType::X: return "X";
    case PathType::NV: return fmt::format("NV{}", link.nvlinks);
    case PathType::PIX: return "PIX";
    case PathType::PXB: return "PXB";
    case PathType::PHB: return "PHB";
    case PathType::NODE: return "NODE";
    case PathType::SYS: return "SYS";
    case PathType::unknown: break;
  }
  return "N/A";
}

Link parse_link(std::string_view cell) {
  cell = detail::trim(cell);
  if (cell == "X") return {PathType::X, 0};
  if (cell == "PIX") return {PathType::PIX, 0};
  if (cell == "PXB") return {PathType::PXB, 0};
  if (cell == "PHB") return {PathType::PHB, 0};
  if (cell == "NODE") return {PathType::NODE, 0};
  if (cell == "SYS" || cell == "SOC") return {PathType::SYS, 0};
  if (cell == "N/A") return {PathType::unknown, 0};
  if (const auto n = detail::label_number(cell, "NV"); n && *n > 0) return {PathType::NV, *n};
  throw UsageError(
      fmt::format("unknown topology path type '{}' (expected X, NV#, PIX, PXB, PHB, "
                  "NODE or SYS)",
                  cell));
}

std::string Topology::device_label(std::size_t device) const {
  if (device < gpus.size()) return fmt::format("GPU{}", device);
  return fmt::format("NIC{}", device - gpus.size());
}

void Topology::reset_links() {
  const std::size_t n = device_count();
  links.assign(n * n, Link{});
  for (std::size_t i = 0; i < n; ++i) link(i, i) = {PathType::X, 0};
}

namespace detail {

std::string_view trim(std::string_view s) {
  const auto is_space = [](char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; };
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}

std::vector<std::string> split_whitespace(std::string_view s) {
  std::vector<std::string> out;
  std::size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
    const std::size_t start = i;
    while (i < s.size() && !std::isspace(static_cast<unsigned char>(s[i]))) ++i;
    if (i > start) out.emplace_back(s.substr(start, i - start));
  }
  return out;
}

std::vector<std::string> split_lines(std::string_view text) {
  std::vector<std::string> lines;
  std::string current;
  for (const char c : text) {
    if (c == '\n') {
      lines.push_back(std::move(current));
      current.clear();
    } else if (c != '\r') {
      current.push_back(c);
    }
  }
  if (!current.empty()) lines.push_back(std::move(current));
  return lines;
}

std::string strip_ansi(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\x1b' && i + 1 < s.size() && s[i + 1] == '[') {
      // CSI: parameter and intermediate bytes, then one final byte in 0x40..0x7e.
      std::size_t j = i + 2;
      while (j < s.size() && (s[j] < 0x40 || s[j] > 0x7e)) ++j;
      i = j;
      continue;
    }
    out.push_back(s[i]);
  }
  return out;
}

bool starts_with(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

std::optional<long long> parse_integer(std::string_view s) {
  s = trim(s);
  int base = 10;
  bool negative = false;
  if (!s.empty() && s.front() == '-') {
    negative = true;
    s.remove_prefix(1);
  }
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
    base = 16;
    s.remove_prefix(2);
  }
  if (s.empty()) return std::nullopt;
  long long value = 0;
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), value, base);
  if (ec != std::errc{} || ptr != s.data() + s.size()) return std::nullopt;
  return negative ? -value : value;
}

std::optional<int> label_number(std::string_view label, std::string_view prefix) {
  if (!starts_with(label, prefix) || label.size() == prefix.size()) return std::nullopt;
  const std::string_view digits = label.substr(prefix.size());
  if (!std::all_of(digits.begin(), digits.end(),
                   [](char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }))
    return std::nullopt;
  const auto n = parse_integer(digits);
  if (!n || *n > 1000000) return std::nullopt;
  return static_cast<int>(*n);
}

std::vector<int> cpulist_to_cpus(std::string_view cpulist) {
  std::vector<int> cpus;
  std::size_t pos = 0;
  cpulist = trim(cpulist);
  while (pos < cpulist.size()) {
    std::size_t comma = cpulist.find(',', pos);
    if (comma == std::string_view::npos) comma = cpulist.size();
    const std::string_view range = trim(cpulist.substr(pos, comma - pos));
    pos = comma + 1;
    if (range.empty()) continue;
    const std::size_t dash = range.find('-');
    const auto lo = parse_integer(range.substr(0, dash));
    const auto hi = dash == std::string_view::npos ? lo : parse_integer(range.substr(dash + 1));
    if (!lo || !hi || *lo < 0 || *hi < *lo || *hi > 1 << 20) throw UsageError(fmt::format("bad cpulist '{}'", cpulist));
    for (long long c = *lo; c <= *hi; ++c) cpus.push_back(static_cast<int>(c));
  }
  std::sort(cpus.begin(), cpus.end());
  cpus.erase(std::unique(cpus.begin(), cpus.end()), cpus.end());
  return cpus;
}

std::string cpus_to_cpulist(const std::vector<int>& cpus) {
  std::string out;
  for (std::size_t i = 0; i < cpus.size();) {
    std::size_t j = i;
    while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1) ++j;
    if (!out.empty()) out += ',';
    out += j == i ? fmt::format("{}", cpus[i]) : fmt::format("{}-{}", cpus[i], cpus[j]);
    i = j + 1;
  }
  return out;
}

std::string cpumask_to_cpulist(std::string_view mask) {
  std::vector<std::string_view> groups;
  std::size_t pos = 0;
  mask = trim(mask);
  while (pos <= mask.size()) {
    std::size_t comma = mask.find(',', pos);
    if (comma == std::string_view::npos) comma = mask.size();
    groups.push_back(trim(mask.substr(pos, comma - pos)));
    pos = comma + 1;
  }
  std::vector<int> cpus;
  // The last group holds CPUs 0..31.
  for (std::size_t g = 0; g < groups.size(); ++g) {
    const std::string_view hex = groups[groups.size() - 1 - g];
    unsigned long long bits = 0;
    const auto [ptr, ec] = std::from_chars(hex.data(), hex.data() + hex.size(), bits, 16);
    if (hex.empty() || hex.size() > 8 || ec != std::errc{} || ptr != hex.data() + hex.size())
      throw UsageError(fmt::format("bad cpumask '{}' (expected comma-separated hex groups)", mask));
    for (int b = 0; b < 32; ++b)
      if (bits >> b & 1ULL) cpus.push_back(static_cast<int>(g) * 32 + b);
  }
  std::sort(cpus.begin(), cpus.end());
  return cpus_to_cpulist(cpus);
}

std::string cpulist_to_cpumask(std::string_view cpulist, int groups) {
  const std::vector<int> cpus = cpulist_to_cpus(cpulist);
  const int needed = cpus.empty() ? 1 : cpus.back() / 32 + 1;
  groups = std::max(groups, needed);
  std::vector<unsigned> words(static_cast<std::size_t>(groups), 0U);
  for (const int c : cpus) words[static_cast<std::size_t>(c / 32)] |= 1U << (c % 32);
  std::string out;
  for (std::size_t g = words.size(); g-- > 0;) {
    if (!out.empty()) out += ',';
    out += fmt::format("{:08x}", words[g]);
  }
  return out;
}

int pcie_gen_from_speed(std::string_view speed) {
  // PCIe 1.0 .. 7.0 transfer rates in GT/s.
  static constexpr double kRates[] = {2.5, 5.0, 8.0, 16.0, 32.0, 64.0, 128.0};
  double rate = 0;
  const std::string text(trim(speed));
  if (std::sscanf(text.c_str(), "%lf", &rate) != 1) return 0;
  for (int g = 0; g < 7; ++g)
    if (rate > kRates[g] * 0.9 && rate < kRates[g] * 1.1) return g + 1;
  return 0;
}

std::string pcie_speed_name(int gen) {
  static constexpr const char* kNames[] = {"2.5 GT/s PCIe",  "5.0 GT/s PCIe",  "8.0 GT/s PCIe",  "16.0 GT/s PCIe",
                                           "32.0 GT/s PCIe", "64.0 GT/s PCIe", "128.0 GT/s PCIe"};
  if (gen < 1 || gen > 7) return "";
  return kNames[gen - 1];
}

PathType classify_pci_path(const std::string& bus_a, const PciPlacement& a, int numa_a, const std::string& bus_b,
                           const PciPlacement& b, int numa_b) {
  if (!bus_a.empty() && bus_a == bus_b) return PathType::PIX;
  if (numa_a >= 0 && numa_b >= 0 && numa_a != numa_b) return PathType::SYS;
  const bool bridges_known = !a.host_bridge.empty() && !b.host_bridge.empty();
  if (bridges_known && a.host_bridge != b.host_bridge) return PathType::NODE;
  std::size_t common = 0;
  while (common < a.switches.size() && common < b.switches.size() && a.switches[common] == b.switches[common]) ++common;
  if (common == 0) return bridges_known ? PathType::PHB : PathType::NODE;
  const bool both_directly_below = a.switches.size() == common && b.switches.size() == common;
  return both_directly_below ? PathType::PIX : PathType::PXB;
}

std::string format_double(double v) { return fmt::format("{}", v); }

}  // namespace detail
}  // namespace gcb::topo
