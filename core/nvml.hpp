// NVML, loaded at run time with dlopen("libnvidia-ml.so.1") — no nvml.h exists on our build
// machines. Only the functions used are declared, by their versioned export names
// (NVML API reference, docs.nvidia.com/deploy/nvml-api). Missing library or symbol = "not available", never
// a crash: every query returns std::nullopt when NVML cannot answer.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace gcb::nvml {

// Throttle ("clocks event") reason bits, as nvml.h defines them.
inline constexpr uint64_t kGpuIdle = 0x1;
inline constexpr uint64_t kApplicationsClocksSetting = 0x2;
inline constexpr uint64_t kSwPowerCap = 0x4;
inline constexpr uint64_t kHwSlowdown = 0x8;
inline constexpr uint64_t kSyncBoost = 0x10;
inline constexpr uint64_t kSwThermalSlowdown = 0x20;
inline constexpr uint64_t kHwThermalSlowdown = 0x40;
inline constexpr uint64_t kHwPowerBrakeSlowdown = 0x80;
// The reasons that mean "this sample ran slower than the hardware can" (idle, application
// clocks and sync boost are not slowdowns).
inline constexpr uint64_t kThrottleMask =
    kSwPowerCap | kHwSlowdown | kSwThermalSlowdown | kHwThermalSlowdown | kHwPowerBrakeSlowdown;
std::vector<std::string> throttle_reason_names(uint64_t reasons);

const char* error_string(int status);

// True when the library loaded and nvmlInit_v2 succeeded; reason() says why not otherwise.
bool available();
std::string unavailable_reason();
std::string driver_version();

struct DeviceSample {
  std::optional<unsigned> sm_clock_mhz, sm_clock_max_mhz, mem_clock_mhz, mem_clock_max_mhz;
  std::optional<unsigned> power_mw, power_limit_mw, temperature_c;
  std::optional<uint64_t> throttle_reasons;
};

struct DeviceStatic {
  std::optional<unsigned> memory_bus_bits, mem_clock_max_mhz, pcie_gen_current, pcie_gen_max, pcie_width_current,
      pcie_width_max, power_limit_mw;
  std::optional<bool> ecc_enabled, mig_enabled;
};

// Counters NVML keeps running; read before and after a timed sample, their differences say what
// happened during it (core/nvml_window.hpp), where one reading after it says only how it ended.
struct DeviceCounters {
  double host_seconds = 0;            // steady clock when read
  std::optional<uint64_t> energy_mj;  // nvmlDeviceGetTotalEnergyConsumption (Volta+)
  // nvmlDeviceGetViolationStatus: ns the clocks were held below application clocks by power,
  // thermal, board-limit and reliability limits, and by any of them (NVML_PERF_POLICY_*).
  std::optional<uint64_t> power_violation_ns, thermal_violation_ns, board_violation_ns, reliability_violation_ns,
      any_violation_ns;
};

// `pci_bus_id` as the CUDA runtime prints it ("0000:1B:00.0"). Matching NVML to CUDA by bus id
// is what keeps CUDA_VISIBLE_DEVICES reorderings from pairing the wrong devices.
std::optional<DeviceSample> sample(const std::string& pci_bus_id);
std::optional<DeviceStatic> static_info(const std::string& pci_bus_id);
std::optional<uint64_t> throttle_reasons(const std::string& pci_bus_id);
std::optional<std::string> device_name(const std::string& pci_bus_id);
std::optional<DeviceCounters> counters(const std::string& pci_bus_id);

// The SM-clock samples the driver buffered (nvmlDeviceGetSamples, NVML_PROCESSOR_CLK_SAMPLES)
// after the time stamp `after_us` (NVML's own µs clock; 0 = all it holds): their mean and the
// last time stamp, to pass as `after_us` next time. nullopt when NVML cannot say.
struct ClockSamples {
  double mean_mhz = 0;
  unsigned count = 0;
  uint64_t last_us = 0;
};
std::optional<ClockSamples> sm_clock_samples(const std::string& pci_bus_id, uint64_t after_us);

// One active NVLink of a device: what is at its other end.
struct NvLinkPeer {
  unsigned link = 0;
  std::string remote_bus_id;  // as NVML prints it ("00000000:1B:00.0")
  int remote_type = -1;       // nvmlIntNvLinkDeviceType_t: 0 GPU, 1 IBM NPU, 2 switch, 255 unknown
};
// Links are probed until NVML says the index is invalid (the maximum grew 12 → 18 → 36 across
// headers, so no constant is trusted); only links whose state is enabled are listed.
std::vector<NvLinkPeer> nvlink_peers(const std::string& pci_bus_id);

}  // namespace gcb::nvml
