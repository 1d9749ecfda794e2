// The single reporter behind every check macro in error.hpp.
#include "core/error.hpp"

#include <unistd.h>

#include <atomic>
#include <fmt/format.h>

namespace gcb {

namespace {
thread_local int t_rank = -1;
}

void set_error_rank(int rank) { t_rank = rank; }
int error_rank() { return t_rank; }

std::string host_name() {
  char buf[256] = {};
  if (gethostname(buf, sizeof(buf) - 1) != 0) return "unknown-host";
  return buf;
}

void check_failed(const char* lib, const char* expr, const std::string& what, const char* file, int line) {
  const std::string rank = t_rank >= 0 ? fmt::format("rank {}", t_rank) : std::string("no rank");
  throw Fault(
      fmt::format("{} error: {} in `{}` at {}:{} (host {}, {})", lib, what, expr, file, line, host_name(), rank));
}

}  // namespace gcb
