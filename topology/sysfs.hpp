// The sysfs readers both live discovery routes share (discover.cpp on its own, discover_hwloc.cpp
// for what hwloc does not export): attributes, PCIe generation/width, RDMA port and netdev state,
// and the last steps every live topology goes through. Not part of the public API.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "topology/topology.hpp"

namespace gcb::topo::detail {

// The first line of a sysfs attribute, trimmed; nullopt when absent or unreadable (some
// attributes, such as a down link's speed, fail on read).
std::optional<std::string> read_attr(const std::filesystem::path& path);
int read_int(const std::filesystem::path& path, int fallback);
std::vector<std::filesystem::path> list_dir(const std::filesystem::path& dir);  // sorted

// Current and maximum generation and width from a PCI function's directory
// (/sys/bus/pci/devices/0000:3b:00.0); 0 where the kernel does not say.
PcieLink read_pcie_link(const std::filesystem::path& pci_function);

// Port rate, state and link layer of the first port of an RDMA device
// (/sys/class/infiniband/mlx5_0); leaves `nic` unchanged where the files are missing.
void read_rdma_port(const std::filesystem::path& rdma_device, Nic& nic);
// Speed, operstate and link layer ("Ethernet") of a netdev (/sys/class/net/eth0).
void read_netdev(const std::filesystem::path& netdev, Nic& nic);

// "NVIDIA PCI device 0x2330": the marketing name needs NVML, and both routes must give the same
// name so that the fingerprint does not depend on the route.
std::string pci_gpu_name(const std::string& pci_device);

// The PCIe switches above a device, from its PCI bridges listed root port first (the device
// itself excluded): root port, then each switch's upstream/downstream port pair; a switch is
// named by its upstream port, as one nested <pci> of NCCL's XML. Both discovery routes use it.
std::vector<std::string> switches_from_bridges(const std::vector<std::string>& bridges);

// The last steps of a live or hwloc-XML topology: one NUMA node holding every CPU when the kernel
// has no NUMA, devices with an unknown node put on the only node, and the PCIe path matrix.
void finish_discovered(Topology& topo);

}  // namespace gcb::topo::detail
