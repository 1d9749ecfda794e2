// Host memory available to a run (core/host_memory.hpp) on fake /proc and cgroup trees, and the
// up-front refusal with bytes needed and available.
#include "core/host_memory.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "core/error.hpp"

namespace gcb {
namespace {

namespace fs = std::filesystem;

class HostMemoryTree : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("gcb-hostmem-" + std::to_string(getpid()));
    fs::remove_all(root_);
    write("proc/meminfo", "MemTotal:       32000000 kB\nMemAvailable:   16000000 kB\n");
  }
  void TearDown() override { fs::remove_all(root_); }
  void write(const std::string& rel, const std::string& text) {
    fs::create_directories((root_ / rel).parent_path());
    std::ofstream(root_ / rel) << text;
  }
  AvailableMemory read() const { return host_memory_available((root_ / "proc").string(), (root_ / "cg").string()); }
  fs::path root_;
};

TEST_F(HostMemoryTree, MemAvailableWithoutACgroupLimit) {
  write("proc/self/cgroup", "0::/job\n");
  write("cg/job/memory.max", "max\n");
  write("cg/job/memory.current", "1000\n");
  const AvailableMemory m = read();
  EXPECT_TRUE(m.known);
  EXPECT_EQ(m.available, 16000000ull * 1024);
  EXPECT_EQ(m.source, "MemAvailable");
}

TEST_F(HostMemoryTree, ACgroupV2LimitBelowMemAvailableWins) {
  write("proc/self/cgroup", "0::/job\n");
  write("cg/job/memory.max", "8589934592\n");
  write("cg/job/memory.current", "1073741824\n");
  const AvailableMemory m = read();
  EXPECT_EQ(m.available, 7ull << 30);
  EXPECT_EQ(m.source, "cgroup memory limit");
}

TEST_F(HostMemoryTree, ACgroupV1LimitMountedAtTheRoot) {
  write("proc/self/cgroup", "4:memory:/outside/view\n0::/\n");
  write("cg/memory/memory.limit_in_bytes", "4294967296\n");
  write("cg/memory/memory.usage_in_bytes", "1073741824\n");
  EXPECT_EQ(read().available, 3ull << 30);
  // v1's "unlimited" is a huge number, not a limit.
  write("cg/memory/memory.limit_in_bytes", "9223372036854771712\n");
  EXPECT_EQ(read().source, "MemAvailable");
}

TEST(HostMemory, RefusesWithBytesNeededAndAvailable) {
  const AvailableMemory m{true, 4ull << 30, "MemAvailable"};
  EXPECT_NO_THROW(check_host_memory(4.0 * (1ull << 30), "x", m));
  try {
    check_host_memory(6.0 * (1ull << 30), "coll -e 1 GiB on 6 rank(s)", m);
    FAIL() << "accepted";
  } catch (const UsageError& e) {
    EXPECT_STREQ(e.what(), "coll -e 1 GiB on 6 rank(s) needs 6 GiB of host memory; 4 GiB are available (MemAvailable)");
  }
  EXPECT_NO_THROW(check_host_memory(1e30, "unknown", AvailableMemory{}));  // nothing known: nothing refused
}

// The last-level cache from a fake sysfs tree: the highest level's data or unified cache wins,
// instruction caches and unreadable entries are skipped, K/M suffixes are bytes of 1024.
TEST_F(HostMemoryTree, LastLevelCacheFromSysfs) {
  auto cache = [&](int index, int level, const char* type, const char* size) {
    const std::string dir = fmt::format("sys/devices/system/cpu/cpu0/cache/index{}/", index);
    write(dir + "level", std::to_string(level) + "\n");
    write(dir + "type", std::string(type) + "\n");
    write(dir + "size", std::string(size) + "\n");
  };
  cache(0, 1, "Data", "32K");
  cache(1, 1, "Instruction", "32K");
  cache(2, 2, "Unified", "512K");
  EXPECT_EQ(host_last_level_cache_bytes((root_ / "sys").string()), 512u << 10);
  cache(3, 3, "Unified", "32768K");
  cache(4, 4, "Instruction", "256M");  // never a data cache, whatever its level
  EXPECT_EQ(host_last_level_cache_bytes((root_ / "sys").string()), 32u << 20);
}

}  // namespace
}  // namespace gcb
