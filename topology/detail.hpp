// Helpers shared by the topology parsers, renderers and discovery; not part of the public API.
// Text utilities, cpulist/cpumask conversion, PCIe speed names and the PCI path classifier.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "topology/topology.hpp"

namespace gcb::topo::detail {

std::string_view trim(std::string_view s);
std::vector<std::string> split_whitespace(std::string_view s);
std::vector<std::string> split_lines(std::string_view text);  // also drops '\r'
// Removes ANSI CSI sequences such as "\x1b[4m" and "\x1b[0m".
std::string strip_ansi(std::string_view s);
bool starts_with(std::string_view s, std::string_view prefix);
std::optional<long long> parse_integer(std::string_view s);  // whole string, base 10 or 0x..
// Integer after `prefix` ("GPU12" with "GPU" -> 12), nullopt when the rest is not digits.
std::optional<int> label_number(std::string_view label, std::string_view prefix);

// cpulist "0-3,8" <-> sysfs cpumask "0000010f" (comma-separated 32-bit hex groups, high first).
std::vector<int> cpulist_to_cpus(std::string_view cpulist);
std::string cpus_to_cpulist(const std::vector<int>& cpus);
std::string cpumask_to_cpulist(std::string_view mask);
std::string cpulist_to_cpumask(std::string_view cpulist, int groups);

// PCIe generation from a transfer rate "32.0 GT/s PCIe" / "8 GT/s" and back ("32.0 GT/s PCIe").
int pcie_gen_from_speed(std::string_view speed);
std::string pcie_speed_name(int gen);

// The nvidia-smi classification of the PCIe path between two devices (never X or NV):
// different NUMA -> SYS; different host bridges -> NODE; no shared switch -> PHB when both sit
// under the same known host bridge, else NODE; shared switch with both devices directly below
// the deepest shared one -> PIX, otherwise PXB. Identical non-empty bus ids (ports of one card)
// -> PIX.
PathType classify_pci_path(const std::string& bus_a, const PciPlacement& a, int numa_a, const std::string& bus_b,
                           const PciPlacement& b, int numa_b);

// Fills topo.links from the devices' bus ids, PCI placements, NUMA nodes and NVLink lists.
void derive_links_from_pci(Topology& topo);

std::string format_double(double v);  // shortest text that reads back the same ("200", "12.5")

}  // namespace gcb::topo::detail
