// Host memory a run may still take (host_memory.hpp): MemAvailable from /proc/meminfo capped by the cgroup's
// memory.max, check_host_memory's up-front refusal (exit 2), and the last-level cache size from sysfs.
#include "core/host_memory.hpp"

#include <unistd.h>

#include <charconv>
#include <fmt/format.h>
#include <fstream>
#include <optional>
#include <sstream>

#include "core/error.hpp"
#include "core/size.hpp"

namespace gcb {

namespace {

std::optional<uint64_t> read_number(const std::string& path) {
  std::ifstream f(path);
  std::string text;
  if (!(f >> text)) return std::nullopt;
  uint64_t v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;  // "max": no limit
  return v;
}

// The room left under the memory limit of this process's cgroup, if it has one.
std::optional<uint64_t> cgroup_room(const std::string& proc_root, const std::string& cgroup_root) {
  std::ifstream f(proc_root + "/self/cgroup");
  for (std::string line; std::getline(f, line);) {
    const size_t a = line.find(':'), b = line.find(':', a + 1);
    if (a == std::string::npos || b == std::string::npos) continue;
    const std::string controllers = line.substr(a + 1, b - a - 1), path = line.substr(b + 1);
    std::optional<uint64_t> limit, usage;
    // A container often mounts its own cgroup as the root: try the path, then the root.
    for (const std::string& dir : {path, std::string()}) {
      if (controllers.empty()) {  // v2
        limit = read_number(cgroup_root + dir + "/memory.max");
        usage = read_number(cgroup_root + dir + "/memory.current");
      } else if (controllers == "memory") {  // v1
        limit = read_number(cgroup_root + "/memory" + dir + "/memory.limit_in_bytes");
        usage = read_number(cgroup_root + "/memory" + dir + "/memory.usage_in_bytes");
      }
      if (limit && usage) break;
    }
    // v1 reports "no limit" as a huge page-rounded number.
    if (limit && usage && *limit < (uint64_t{1} << 62)) return *limit > *usage ? *limit - *usage : 0;
  }
  return std::nullopt;
}

}  // namespace

AvailableMemory host_memory_available(const std::string& proc_root, const std::string& cgroup_root) {
  AvailableMemory m;
  std::ifstream f(proc_root + "/meminfo");
  for (std::string line; std::getline(f, line);) {
    if (line.rfind("MemAvailable:", 0) != 0) continue;
    std::istringstream in(line.substr(13));
    uint64_t kib = 0;
    if (in >> kib) m = {true, kib * 1024, "MemAvailable"};
  }
  if (const auto room = cgroup_room(proc_root, cgroup_root); room && (!m.known || *room < m.available))
    m = {true, *room, "cgroup memory limit"};
  return m;
}

void check_host_memory(double needed, std::string_view what, const AvailableMemory& available) {
  if (!available.known || needed <= static_cast<double>(available.available)) return;
  throw UsageError(fmt::format("{} needs {} of host memory; {} are available ({})", what, format_bytes(needed),
                               format_bytes(static_cast<double>(available.available)), available.source));
}

void check_host_memory(double needed, std::string_view what) {
  check_host_memory(needed, what, host_memory_available());
}

}  // namespace gcb

namespace gcb {

size_t host_last_level_cache_bytes(const std::string& sys_root) {
  size_t best = 0;
  int best_level = 0;
  for (int i = 0; i < 16; ++i) {
    const std::string dir = fmt::format("{}/devices/system/cpu/cpu0/cache/index{}/", sys_root, i);
    std::ifstream level_file(dir + "level"), type_file(dir + "type"), size_file(dir + "size");
    int level = 0;
    std::string type, size;
    if (!(level_file >> level) || !(type_file >> type) || !(size_file >> size) || type == "Instruction") continue;
    size_t bytes = 0;
    const char* end = size.data() + size.size();
    const auto [unit, ec] = std::from_chars(size.data(), end, bytes);
    if (ec != std::errc() || bytes == 0) continue;
    const std::string suffix(unit, end);
    bytes *= suffix == "K" ? size_t{1} << 10 : suffix == "M" ? size_t{1} << 20 : suffix == "G" ? size_t{1} << 30 : 1;
    if (level > best_level || (level == best_level && bytes > best)) {
      best = bytes;
      best_level = level;
    }
  }
  if (best > 0) return best;
  long llc = sysconf(_SC_LEVEL3_CACHE_SIZE);
  if (llc <= 0) llc = sysconf(_SC_LEVEL2_CACHE_SIZE);
  return llc > 0 ? static_cast<size_t>(llc) : 0;
}

}  // namespace gcb
