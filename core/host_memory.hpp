// How much host memory a run may still take, and the one refusal every subcommand makes up front
// when it needs more (bytes needed against bytes available, exit 2), instead of allocating for a
// while and then failing with exit 3 or meeting the OOM killer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace gcb {

struct AvailableMemory {
  bool known = false;      // false: neither meminfo nor a cgroup limit could be read
  uint64_t available = 0;  // bytes
  std::string source;      // "MemAvailable" or "cgroup memory limit"
};

// MemAvailable from <proc_root>/meminfo, lowered to the room left under this process's cgroup
// memory limit (v2 memory.max − memory.current, or v1 memory.limit_in_bytes − usage_in_bytes)
// when that is smaller. The roots let tests point at fake trees.
AvailableMemory host_memory_available(const std::string& proc_root = "/proc",
                                      const std::string& cgroup_root = "/sys/fs/cgroup");

// Throws gcb::UsageError "<what> needs N of host memory; M are available (<source>)" when needed
// exceeds what is available. An unknown availability refuses nothing.
// `needed` is a double so that products of huge flags cannot wrap around.
void check_host_memory(double needed, std::string_view what, const AvailableMemory& available);
void check_host_memory(double needed, std::string_view what);

// The largest data or unified cache of CPU 0 in bytes, as the kernel describes it
// (<sys_root>/devices/system/cpu/cpu0/cache/index*/{level,type,size}, Documentation/ABI/testing/
// sysfs-devices-system-cpu), else glibc's sysconf L3 (or L2) figure, else 0. sysfs first: glibc's
// figure can be far off in a VM (320 MiB on this project's 2-vCPU build machine, where sysfs and
// lscpu say 32 MiB). Sizes that follow from it (STREAM arrays, the harness's cache flush) come from
// this one function.
size_t host_last_level_cache_bytes(const std::string& sys_root = "/sys");

}  // namespace gcb
