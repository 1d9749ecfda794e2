// NVML through dlopen (nvml.hpp): the versioned symbols gcbench uses, bound once (Api), and the device queries —
// clocks, power, energy, throttle reasons, violation times, PCI — each std::nullopt when NVML cannot answer.
#include "core/nvml.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <mutex>
#include <vector>

namespace gcb::nvml {

namespace {

using Device = struct nvmlDevice_st*;
using Ret = int;  // nvmlReturn_t
constexpr Ret kSuccess = 0;
constexpr unsigned kClockSm = 1, kClockMem = 2;  // nvmlClockType_t
constexpr unsigned kTemperatureGpu = 0;          // nvmlTemperatureSensors_t
constexpr Ret kInvalidArgument = 2, kNotSupported = 3, kNotFound = 6;

// nvmlViolationTime_t: referenceTime in host µs, violationTime in ns (nvml.h).
struct ViolationTime {
  unsigned long long reference_us, violation_ns;
};
// nvmlPerfPolicyType_t values.
constexpr unsigned kPolicyPower = 0, kPolicyThermal = 1, kPolicyBoardLimit = 3, kPolicyReliability = 5,
                   kPolicyTotalAppClocks = 10;
// nvmlSample_t: host µs time stamp and a value union (8 bytes); NVML_PROCESSOR_CLK_SAMPLES = 5.
struct Sample {
  unsigned long long timestamp_us;
  union {
    double d;
    unsigned int ui;
    unsigned long ul;
    unsigned long long ull;
    long long sll;
  } value;
};
constexpr unsigned kProcessorClockSamples = 5;
enum ValueType : int { kDouble = 0, kUnsignedInt = 1, kUnsignedLong = 2, kUnsignedLongLong = 3, kSignedLongLong = 4 };

// nvmlPciInfo_t as filled by the _v2/_v3 entry points (the CUDA toolkit's nvml.h, NVML API Reference
// "Device Queries": busIdLegacy[16], domain, bus, device, pciDeviceId, pciSubSystemId, busId[32]).
struct PciInfo {
  char bus_id_legacy[16];
  unsigned domain, bus, device, pci_device_id, pci_sub_system_id;
  char bus_id[32];
};

struct Api {
  void* handle = nullptr;
  std::string reason;
  Ret (*init)() = nullptr;
  const char* (*error_string)(Ret) = nullptr;
  Ret (*system_driver_version)(char*, unsigned) = nullptr;
  Ret (*handle_by_bus_id)(const char*, Device*) = nullptr;
  Ret (*clock_info)(Device, unsigned, unsigned*) = nullptr;
  Ret (*max_clock_info)(Device, unsigned, unsigned*) = nullptr;
  Ret (*power_usage)(Device, unsigned*) = nullptr;
  Ret (*power_limit)(Device, unsigned*) = nullptr;
  Ret (*temperature)(Device, unsigned, unsigned*) = nullptr;
  Ret (*clock_events)(Device, unsigned long long*) = nullptr;
  Ret (*bus_width)(Device, unsigned*) = nullptr;
  Ret (*pcie_gen)(Device, unsigned*) = nullptr;
  Ret (*pcie_gen_max)(Device, unsigned*) = nullptr;
  Ret (*pcie_width)(Device, unsigned*) = nullptr;
  Ret (*pcie_width_max)(Device, unsigned*) = nullptr;
  Ret (*ecc_mode)(Device, int*, int*) = nullptr;
  Ret (*mig_mode)(Device, unsigned*, unsigned*) = nullptr;
  Ret (*name)(Device, char*, unsigned) = nullptr;
  Ret (*nvlink_state)(Device, unsigned, int*) = nullptr;
  Ret (*nvlink_remote_pci)(Device, unsigned, PciInfo*) = nullptr;
  Ret (*nvlink_remote_type)(Device, unsigned, int*) = nullptr;
  Ret (*total_energy)(Device, unsigned long long*) = nullptr;
  Ret (*violation_status)(Device, unsigned, ViolationTime*) = nullptr;
  Ret (*samples)(Device, unsigned, unsigned long long, int*, unsigned*, Sample*) = nullptr;
};

template <typename F>
void bind(void* h, F& fn, const char* name, const char* fallback = nullptr) {
  void* p = dlsym(h, name);
  if (!p && fallback) p = dlsym(h, fallback);
  fn = reinterpret_cast<F>(p);
}

const Api& api() {
  static Api a;
  static std::once_flag once;
  std::call_once(once, [] {
    a.handle = dlopen("libnvidia-ml.so.1", RTLD_LAZY | RTLD_LOCAL);
    if (!a.handle) {
      a.reason = "libnvidia-ml.so.1 not found (no NVIDIA driver)";
      return;
    }
    bind(a.handle, a.init, "nvmlInit_v2");
    bind(a.handle, a.error_string, "nvmlErrorString");
    bind(a.handle, a.system_driver_version, "nvmlSystemGetDriverVersion");
    bind(a.handle, a.handle_by_bus_id, "nvmlDeviceGetHandleByPciBusId_v2");
    bind(a.handle, a.clock_info, "nvmlDeviceGetClockInfo");
    bind(a.handle, a.max_clock_info, "nvmlDeviceGetMaxClockInfo");
    bind(a.handle, a.power_usage, "nvmlDeviceGetPowerUsage");
    bind(a.handle, a.power_limit, "nvmlDeviceGetEnforcedPowerLimit");
    bind(a.handle, a.temperature, "nvmlDeviceGetTemperature");
    // The old name is deprecated in CUDA 13 headers; older drivers export only it.
    bind(a.handle, a.clock_events, "nvmlDeviceGetCurrentClocksEventReasons",
         "nvmlDeviceGetCurrentClocksThrottleReasons");
    bind(a.handle, a.bus_width, "nvmlDeviceGetMemoryBusWidth");
    bind(a.handle, a.pcie_gen, "nvmlDeviceGetCurrPcieLinkGeneration");
    bind(a.handle, a.pcie_gen_max, "nvmlDeviceGetMaxPcieLinkGeneration");
    bind(a.handle, a.pcie_width, "nvmlDeviceGetCurrPcieLinkWidth");
    bind(a.handle, a.pcie_width_max, "nvmlDeviceGetMaxPcieLinkWidth");
    bind(a.handle, a.ecc_mode, "nvmlDeviceGetEccMode");
    bind(a.handle, a.mig_mode, "nvmlDeviceGetMigMode");
    bind(a.handle, a.name, "nvmlDeviceGetName");
    bind(a.handle, a.nvlink_state, "nvmlDeviceGetNvLinkState");
    bind(a.handle, a.nvlink_remote_pci, "nvmlDeviceGetNvLinkRemotePciInfo_v2");
    bind(a.handle, a.nvlink_remote_type, "nvmlDeviceGetNvLinkRemoteDeviceType");
    bind(a.handle, a.total_energy, "nvmlDeviceGetTotalEnergyConsumption");
    bind(a.handle, a.violation_status, "nvmlDeviceGetViolationStatus");
    bind(a.handle, a.samples, "nvmlDeviceGetSamples");
    if (!a.init || !a.handle_by_bus_id) {
      a.reason = "libnvidia-ml.so.1 lacks nvmlInit_v2";
      a.init = nullptr;
      return;
    }
    const Ret r = a.init();
    if (r != kSuccess) {
      a.reason = std::string("nvmlInit_v2 failed: ") + (a.error_string ? a.error_string(r) : "unknown");
      a.init = nullptr;
    }
  });
  return a;
}

std::optional<Device> device(const std::string& bus_id) {
  const Api& a = api();
  if (!a.init) return std::nullopt;
  Device d = nullptr;
  if (a.handle_by_bus_id(bus_id.c_str(), &d) != kSuccess) return std::nullopt;
  return d;
}

std::optional<unsigned> query(Ret (*fn)(Device, unsigned*), Device d) {
  unsigned v = 0;
  if (!fn || fn(d, &v) != kSuccess) return std::nullopt;
  return v;
}

std::optional<unsigned> query(Ret (*fn)(Device, unsigned, unsigned*), Device d, unsigned arg) {
  unsigned v = 0;
  if (!fn || fn(d, arg, &v) != kSuccess) return std::nullopt;
  return v;
}

}  // namespace

std::vector<std::string> throttle_reason_names(uint64_t r) {
  static constexpr std::pair<uint64_t, const char*> kNames[] = {
      {kGpuIdle, "gpu_idle"},
      {kApplicationsClocksSetting, "applications_clocks"},
      {kSwPowerCap, "sw_power_cap"},
      {kHwSlowdown, "hw_slowdown"},
      {kSyncBoost, "sync_boost"},
      {kSwThermalSlowdown, "sw_thermal_slowdown"},
      {kHwThermalSlowdown, "hw_thermal_slowdown"},
      {kHwPowerBrakeSlowdown, "hw_power_brake"},
  };
  std::vector<std::string> names;
  for (const auto& [bit, name] : kNames)
    if (r & bit) names.emplace_back(name);
  return names;
}

const char* error_string(int status) {
  const Api& a = api();
  return a.error_string ? a.error_string(status) : "NVML not loaded";
}

bool available() { return api().init != nullptr; }
std::string unavailable_reason() { return api().reason; }

std::string driver_version() {
  const Api& a = api();
  char buf[96] = {};
  if (!a.init || !a.system_driver_version || a.system_driver_version(buf, sizeof(buf)) != kSuccess) return {};
  return buf;
}

std::optional<uint64_t> throttle_reasons(const std::string& bus_id) {
  const auto d = device(bus_id);
  const Api& a = api();
  if (!d || !a.clock_events) return std::nullopt;
  unsigned long long r = 0;
  if (a.clock_events(*d, &r) != kSuccess) return std::nullopt;
  return static_cast<uint64_t>(r);
}

std::optional<std::string> device_name(const std::string& bus_id) {
  const auto d = device(bus_id);
  const Api& a = api();
  char buf[96] = {};
  if (!d || !a.name || a.name(*d, buf, sizeof(buf)) != kSuccess) return std::nullopt;
  return std::string(buf);
}

std::vector<NvLinkPeer> nvlink_peers(const std::string& bus_id) {
  std::vector<NvLinkPeer> peers;
  const auto d = device(bus_id);
  const Api& a = api();
  if (!d || !a.nvlink_state || !a.nvlink_remote_pci) return peers;
  for (unsigned link = 0; link < 64; ++link) {
    int state = 0;
    const Ret r = a.nvlink_state(*d, link, &state);
    if (r == kInvalidArgument || r == kNotSupported) break;
    if (r != kSuccess || state == 0) continue;
    PciInfo pci{};
    if (a.nvlink_remote_pci(*d, link, &pci) != kSuccess) continue;
    NvLinkPeer p;
    p.link = link;
    p.remote_bus_id = pci.bus_id;
    int type = -1;
    if (a.nvlink_remote_type && a.nvlink_remote_type(*d, link, &type) == kSuccess) p.remote_type = type;
    peers.push_back(std::move(p));
  }
  return peers;
}

std::optional<DeviceSample> sample(const std::string& bus_id) {
  const auto d = device(bus_id);
  if (!d) return std::nullopt;
  const Api& a = api();
  DeviceSample s;
  s.sm_clock_mhz = query(a.clock_info, *d, kClockSm);
  s.sm_clock_max_mhz = query(a.max_clock_info, *d, kClockSm);
  s.mem_clock_mhz = query(a.clock_info, *d, kClockMem);
  s.mem_clock_max_mhz = query(a.max_clock_info, *d, kClockMem);
  s.power_mw = query(a.power_usage, *d);
  s.power_limit_mw = query(a.power_limit, *d);
  s.temperature_c = query(a.temperature, *d, kTemperatureGpu);
  s.throttle_reasons = throttle_reasons(bus_id);
  return s;
}

std::optional<DeviceCounters> counters(const std::string& bus_id) {
  const auto d = device(bus_id);
  if (!d) return std::nullopt;
  const Api& a = api();
  DeviceCounters c;
  c.host_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
  unsigned long long energy = 0;
  if (a.total_energy && a.total_energy(*d, &energy) == kSuccess) c.energy_mj = energy;
  const auto violation = [&](unsigned policy) -> std::optional<uint64_t> {
    ViolationTime v{};
    if (!a.violation_status || a.violation_status(*d, policy, &v) != kSuccess) return std::nullopt;
    return v.violation_ns;
  };
  c.power_violation_ns = violation(kPolicyPower);
  c.thermal_violation_ns = violation(kPolicyThermal);
  c.board_violation_ns = violation(kPolicyBoardLimit);
  c.reliability_violation_ns = violation(kPolicyReliability);
  c.any_violation_ns = violation(kPolicyTotalAppClocks);
  return c;
}

std::optional<ClockSamples> sm_clock_samples(const std::string& bus_id, uint64_t after_us) {
  const auto d = device(bus_id);
  const Api& a = api();
  if (!d || !a.samples) return std::nullopt;
  int type = 0;
  unsigned count = 0;
  // First call without a buffer: NVML says how many samples it may return.
  const Ret first = a.samples(*d, kProcessorClockSamples, after_us, &type, &count, nullptr);
  if (first == kNotFound) return ClockSamples{0, 0, after_us};  // nothing sampled since after_us
  if (first != kSuccess) return std::nullopt;
  std::vector<Sample> buf(count);
  if (count > 0 && a.samples(*d, kProcessorClockSamples, after_us, &type, &count, buf.data()) != kSuccess)
    return std::nullopt;
  ClockSamples out;
  out.last_us = after_us;
  double sum = 0;
  for (unsigned i = 0; i < std::min<size_t>(count, buf.size()); ++i) {
    const Sample& s = buf[i];
    if (s.timestamp_us <= after_us) continue;
    double mhz = 0;
    switch (type) {
      case kDouble: mhz = s.value.d; break;
      case kUnsignedInt: mhz = s.value.ui; break;
      case kUnsignedLong: mhz = static_cast<double>(s.value.ul); break;
      case kUnsignedLongLong: mhz = static_cast<double>(s.value.ull); break;
      case kSignedLongLong: mhz = static_cast<double>(s.value.sll); break;
      default: return std::nullopt;
    }
    sum += mhz;
    ++out.count;
    out.last_us = std::max<uint64_t>(out.last_us, s.timestamp_us);
  }
  out.mean_mhz = out.count ? sum / out.count : 0;
  return out;
}

std::optional<DeviceStatic> static_info(const std::string& bus_id) {
  const auto d = device(bus_id);
  if (!d) return std::nullopt;
  const Api& a = api();
  DeviceStatic s;
  s.memory_bus_bits = query(a.bus_width, *d);
  s.mem_clock_max_mhz = query(a.max_clock_info, *d, kClockMem);
  s.pcie_gen_current = query(a.pcie_gen, *d);
  s.pcie_gen_max = query(a.pcie_gen_max, *d);
  s.pcie_width_current = query(a.pcie_width, *d);
  s.pcie_width_max = query(a.pcie_width_max, *d);
  s.power_limit_mw = query(a.power_limit, *d);
  int cur = 0, pending = 0;
  if (a.ecc_mode && a.ecc_mode(*d, &cur, &pending) == kSuccess) s.ecc_enabled = cur != 0;
  unsigned mig = 0, mig_pending = 0;
  if (a.mig_mode && a.mig_mode(*d, &mig, &mig_pending) == kSuccess) s.mig_enabled = mig != 0;
  return s;
}

}  // namespace gcb::nvml
