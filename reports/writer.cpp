#include "reports/writer.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstring>
#include <fmt/format.h>

#include "reports/output_target.hpp"

namespace gcb {

namespace {

bool starts_with_proc(const std::string& p) { return p == "/proc" || p.rfind("/proc/", 0) == 0; }

// write(2) until everything is out; false with errno set on failure.
bool write_all(int fd, std::string_view text) {
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    if (n == 0) {
      errno = EIO;
      return false;
    }
    done += static_cast<size_t>(n);
  }
  return true;
}

// Whether the regular file's last byte is a newline (a killed writer may have left half a line).
bool ends_with_newline(const std::string& path, off_t size) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return true;
  char last = '\n';
  const bool read = ::pread(fd, &last, 1, size - 1) == 1;
  ::close(fd);
  return !read || last == '\n';
}

[[noreturn]] void fail_write(const std::string& path, int err) {
  throw WriteError(fmt::format("writing '{}' failed: {}", path, std::strerror(err)));
}

void write_in_place(const std::string& given, const std::string& target, std::string_view text) {
  const int fd = ::open(target.c_str(), O_WRONLY | O_APPEND | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) fail_write(given, errno);
  if (!write_all(fd, text)) {
    const int err = errno;
    ::close(fd);
    fail_write(given, err);
  }
  if (::close(fd) != 0) fail_write(given, errno);
}

// The folder's own entry must reach the disk too, or a crash after rename() can lose the file.
void fsync_folder(const std::string& given, const std::string& folder) {
  const int fd = ::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;                                       // the file is written; only its durability is unconfirmed
  const bool synced = ::fsync(fd) == 0 || errno == EINVAL;  // EINVAL: folder fsync not supported
  const int err = errno;
  ::close(fd);
  if (!synced) fail_write(given, err);
}

void write_atomically(const std::string& given, const OutputTarget& t, std::string_view text) {
  const std::string tmp = fmt::format("{}.tmp.{}", t.path, getpid());
  ::unlink(tmp.c_str());  // a leftover of a killed run with the same pid
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  if (fd < 0) fail_write(given, errno);
  auto abandon = [&](int err) {
    ::close(fd);
    ::unlink(tmp.c_str());
    fail_write(given, err);
  };
  if (t.kind == OutputTarget::Kind::regular && ::fchmod(fd, t.mode & 07777) != 0) abandon(errno);
  if (!write_all(fd, text)) abandon(errno);
  if (::fsync(fd) != 0) abandon(errno);  // delayed allocation reports ENOSPC here on some filesystems
  if (::close(fd) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    fail_write(given, err);
  }
  if (std::rename(tmp.c_str(), t.path.c_str()) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    fail_write(given, err);
  }
  fsync_folder(given, parent_folder(t.path));
}

}  // namespace

std::string parent_folder(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

OutputTarget resolve_output_target(const std::string& given) {
  OutputTarget t;
  std::string p = given;
  for (int hop = 0; hop <= 40; ++hop) {  // 40: the kernel's own limit on symlink hops
    if (starts_with_proc(p)) {
      t.kind = OutputTarget::Kind::in_place;
      t.path = given;
      struct stat st {};
      if (::stat(given.c_str(), &st) == 0) {
        t.dev = st.st_dev;
        t.ino = st.st_ino;
        t.mode = st.st_mode;
      }
      return t;
    }
    struct stat st {};
    if (::lstat(p.c_str(), &st) != 0) {
      t.path = p;
      if (errno != ENOENT) t.error = errno;
      return t;  // absent: created atomically
    }
    if (S_ISLNK(st.st_mode)) {
      char buf[PATH_MAX];
      const ssize_t n = ::readlink(p.c_str(), buf, sizeof(buf) - 1);
      if (n < 0) {
        t.path = p;
        t.error = errno;
        return t;
      }
      const std::string link(buf, static_cast<size_t>(n));
      p = !link.empty() && link[0] == '/' ? link : parent_folder(p) + "/" + link;
      continue;
    }
    t.path = p;
    t.dev = st.st_dev;
    t.ino = st.st_ino;
    t.mode = st.st_mode;
    t.kind = S_ISREG(st.st_mode)   ? OutputTarget::Kind::regular
             : S_ISDIR(st.st_mode) ? OutputTarget::Kind::folder
                                   : OutputTarget::Kind::in_place;
    return t;
  }
  t.path = p;
  t.error = ELOOP;
  return t;
}

void write_output(const std::string& path, std::string_view text) {
  const OutputTarget t = resolve_output_target(path);
  if (t.error != 0) fail_write(path, t.error);
  switch (t.kind) {
    case OutputTarget::Kind::folder: throw WriteError(fmt::format("cannot write '{}': it is a folder", path));
    case OutputTarget::Kind::in_place: write_in_place(path, t.path, text); return;
    case OutputTarget::Kind::regular:
    case OutputTarget::Kind::absent: write_atomically(path, t, text); return;
  }
}

void write_document(const std::string& path, const ResultDocument& doc) {
  write_output(path, to_json(doc).dump(2) + "\n");
}

JsonlSink::JsonlSink(const std::string& path) : path_(path) {}

JsonlSink::~JsonlSink() {
  if (fd_ >= 0) ::close(fd_);
}

void JsonlSink::append(const Result& r) {
  if (path_.empty() || !error_.empty()) return;
  auto fail = [&](int err) {
    error_ = fmt::format("appending to '{}' failed: {}", path_, std::strerror(err));
    fmt::print(stderr, "gcbench: warning: {}; later results go only to the final document\n", error_);
  };
  if (fd_ < 0) {
    fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_NOCTTY | O_CLOEXEC, 0666);
    if (fd_ < 0) return fail(errno);
    struct stat st {};
    regular_ = ::fstat(fd_, &st) == 0 && S_ISREG(st.st_mode);
    if (regular_ && st.st_size > 0 && !ends_with_newline(path_, st.st_size) && !write_all(fd_, "\n"))
      return fail(errno);
  }
  const nlohmann::json line = {{"schema", kResultSchema}, {"result", to_json(r)}};
  if (!write_all(fd_, line.dump() + "\n")) return fail(errno);
  if (regular_ && ::fsync(fd_) != 0) return fail(errno);
  ++appended_;
}

}  // namespace gcb
