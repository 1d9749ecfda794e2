// input_file.hpp's checks on the files a user hands gcbench: check_input_file (regular files only), read_input_file
// (bounded size) and parse_json_input (bounded nesting), each refusal a UsageError naming the file.
#include "core/input_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fmt/format.h>

#include "core/error.hpp"

namespace gcb {

namespace {

std::string_view kind_of(mode_t mode) {
  if (S_ISDIR(mode)) return "a folder";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

struct TooDeep {};

}  // namespace

void check_input_file(const std::string& path, std::string_view what) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0)
    throw UsageError(fmt::format("cannot open {} '{}': {}", what, path, std::strerror(errno)));
  if (!S_ISREG(st.st_mode))
    throw UsageError(fmt::format("cannot open {} '{}': it is {}, not a regular file", what, path, kind_of(st.st_mode)));
}

std::string read_input_file(const std::string& path, std::string_view what, size_t max_bytes) {
  // O_NONBLOCK: opening a FIFO with no writer must not block before we can refuse it.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) throw UsageError(fmt::format("cannot read {} '{}': {}", what, path, std::strerror(errno)));
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0) throw UsageError(fmt::format("cannot read {} '{}': {}", what, path, std::strerror(errno)));
  if (!S_ISREG(st.st_mode))
    throw UsageError(fmt::format("cannot read {} '{}': it is {}, not a regular file", what, path, kind_of(st.st_mode)));
  if (static_cast<size_t>(st.st_size) > max_bytes)
    throw UsageError(fmt::format("{} '{}' is {} bytes, more than the {} bytes an input may have", what, path,
                                 st.st_size, max_bytes));
  std::string text(static_cast<size_t>(st.st_size), '\0');
  size_t done = 0;
  while (done < text.size()) {  // the size may shrink while we read; never read past it
    const ssize_t n = ::read(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw UsageError(fmt::format("cannot read {} '{}': {}", what, path, std::strerror(errno)));
    if (n == 0) break;
    done += static_cast<size_t>(n);
  }
  text.resize(done);
  if (text.empty()) throw UsageError(fmt::format("{} '{}' is empty", what, path));
  return text;
}

nlohmann::json parse_json_input(std::string_view text, std::string_view what, int max_depth) {
  try {
    return nlohmann::json::parse(text, [max_depth](int depth, nlohmann::json::parse_event_t, nlohmann::json&) {
      if (depth > max_depth) throw TooDeep{};
      return true;
    });
  } catch (const TooDeep&) {
    throw UsageError(fmt::format("{}: JSON nested more than {} levels deep", what, max_depth));
  } catch (const nlohmann::json::parse_error& e) {
    // nlohmann reports a premature end one byte past the input.
    throw JsonSyntaxError(fmt::format("{} is not valid JSON: {}", what, e.what()), e.byte > text.size());
  } catch (const nlohmann::json::exception& e) {
    // out_of_range.406: a number beyond double's range (1e400).
    throw UsageError(fmt::format("{}: {}", what, e.what()));
  }
}

}  // namespace gcb
