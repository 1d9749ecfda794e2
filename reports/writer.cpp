// The output layer (writer.hpp): whole files written to a temporary beside the target, fsynced and renamed over it;
// special files written in place; rescue_path, the $TMPDIR name for a document its own path refused; JSONL appends
// (JsonlSink).
#include "reports/writer.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <fmt/format.h>

#include "core/hash.hpp"
#include "core/interrupt.hpp"
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

// STDOUT_FILENO or STDERR_FILENO when `fd` is the same file as this process's standard output
// or error (/dev/stdout, /proc/self/fd/1, the file behind a `>` redirection), else -1. Such a
// target is written through that descriptor, at its offset: a second open of a redirected file
// starts at offset 0 (without O_APPEND on the shell's side), so the summary line written later
// through fd 1 would overwrite the document's first bytes.
int own_stream_of(int fd) {
  struct stat mine {};
  if (::fstat(fd, &mine) != 0) return -1;
  for (const int stream : {STDOUT_FILENO, STDERR_FILENO}) {
    struct stat st {};
    if (::fstat(stream, &st) == 0 && st.st_dev == mine.st_dev && st.st_ino == mine.st_ino) return stream;
  }
  return -1;
}

// What the program printed through stdio before this write comes first in the stream.
void flush_stdio(int stream) { std::fflush(stream == STDOUT_FILENO ? stdout : stderr); }

void write_in_place(const std::string& given, const std::string& target, std::string_view text) {
  const int fd = ::open(target.c_str(), O_WRONLY | O_APPEND | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) fail_write(given, errno);
  const int stream = own_stream_of(fd);
  if (stream >= 0) flush_stdio(stream);
  if (!write_all(stream >= 0 ? stream : fd, text)) {
    const int err = errno;
    ::close(fd);
    fail_write(given, err);
  }
  if (::close(fd) != 0) fail_write(given, errno);
}

std::string base_name(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// The temporary file is named relative to its folder, opened once: ".gcbench-PID-HASH.tmp" (at
// most 40 bytes, a hash of the target's name) fits wherever the target's own name fits, and
// no path longer than the user's is ever handed to the kernel (PATH_MAX).
void write_atomically(const std::string& given, const OutputTarget& t, std::string_view text) {
  const std::string folder = parent_folder(t.path), name = base_name(t.path);
  const int dir = ::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir < 0) fail_write(given, errno);
  const std::string tmp = fmt::format(".gcbench-{}-{:016x}.tmp", getpid(), fnv1a64(name));
  ::unlinkat(dir, tmp.c_str(), 0);  // a leftover of a killed run with the same pid
  const int fd = ::openat(dir, tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  if (fd < 0) {
    const int err = errno;
    ::close(dir);
    fail_write(given, err);
  }
  set_pending_temp_file(dir, tmp.c_str());  // a second Ctrl-C removes it (core/interrupt.hpp)
  auto give_up = [&](int err, bool close_fd) {
    if (close_fd) ::close(fd);
    clear_pending_temp_file();
    ::unlinkat(dir, tmp.c_str(), 0);
    ::close(dir);
    fail_write(given, err);
  };
  if (t.kind == OutputTarget::Kind::regular && ::fchmod(fd, t.mode & 07777) != 0) give_up(errno, true);
  if (!write_all(fd, text)) give_up(errno, true);
  if (::fsync(fd) != 0) give_up(errno, true);  // delayed allocation reports ENOSPC here on some filesystems
  if (::close(fd) != 0) give_up(errno, false);
  if (::renameat(dir, tmp.c_str(), dir, name.c_str()) != 0) give_up(errno, false);
  clear_pending_temp_file();
  // The folder's own entry must reach the disk too, or a crash after rename() can lose the file.
  const bool synced = ::fsync(dir) == 0 || errno == EINVAL;  // EINVAL: folder fsync not supported
  const int err = errno;
  ::close(dir);
  if (!synced) fail_write(given, err);
}

// The kernel's protected_symlinks rule (Documentation/admin-guide/sysctl/fs.rst): in a sticky
// world-writable folder, a link is followed only when its owner is the follower or the
// folder's owner. gcbench resolves links itself (to keep a link a link), so it applies the
// rule itself, whatever the sysctl says.
std::string refused_link(const std::string& link, const struct stat& st) {
  const std::string folder = parent_folder(link);
  struct stat dir {};
  if (::stat(folder.c_str(), &dir) != 0) return {};
  const bool sticky_world_writable = (dir.st_mode & S_ISVTX) != 0 && (dir.st_mode & S_IWOTH) != 0;
  if (!sticky_world_writable || st.st_uid == ::geteuid() || st.st_uid == dir.st_uid) return {};
  return fmt::format(
      "the symlink '{}' belongs to uid {}, neither us nor the owner (uid {}) of its sticky world-writable folder "
      "'{}': not followed (the kernel's protected_symlinks rule)",
      link, st.st_uid, dir.st_uid, folder);
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
      t.refused = refused_link(p, st);
      if (!t.refused.empty()) {
        t.path = p;
        return t;
      }
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
  if (!t.refused.empty()) throw WriteError(fmt::format("cannot write '{}': {}", path, t.refused));
  switch (t.kind) {
    case OutputTarget::Kind::folder: throw WriteError(fmt::format("cannot write '{}': it is a folder", path));
    case OutputTarget::Kind::in_place: write_in_place(path, t.path, text); return;
    case OutputTarget::Kind::regular:
    case OutputTarget::Kind::absent: write_atomically(path, t, text); return;
  }
}

std::string rescue_path(const std::string& path) {
  const char* tmp = std::getenv("TMPDIR");
  std::string folder = tmp && *tmp ? tmp : "/tmp";
  std::string name = base_name(path);
  if (name.empty()) name = "result.json";
  const std::string prefix = fmt::format("gcbench-rescued-{}-", getpid());
  if (prefix.size() + name.size() > NAME_MAX) {
    // The end of the name (its extension) is kept, after a hash of the whole name; the cut never
    // splits a UTF-8 sequence.
    const std::string mark = fmt::format("{:08x}-", fnv1a64(name) & 0xffffffffu);
    size_t from = name.size() - (NAME_MAX - prefix.size() - mark.size());
    while (from < name.size() && (static_cast<unsigned char>(name[from]) & 0xC0) == 0x80) ++from;
    name = mark + name.substr(from);
  }
  if (folder.size() + 1 + prefix.size() + name.size() >= PATH_MAX) folder = "/tmp";
  return folder + "/" + prefix + name;
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
    stream_ = own_stream_of(fd_);
    if (stream_ >= 0) {  // our own standard output: one offset with what the program prints
      ::close(fd_);
      fd_ = ::fcntl(stream_, F_DUPFD_CLOEXEC, 0);
      if (fd_ < 0) return fail(errno);
      regular_ = false;  // not ours to fsync or to end a partial line of
    }
    if (regular_ && st.st_size > 0 && !ends_with_newline(path_, st.st_size) && !write_all(fd_, "\n"))
      return fail(errno);
  }
  const nlohmann::json line = {{"schema", kResultSchema}, {"result", to_json(r)}};
  if (stream_ >= 0) flush_stdio(stream_);
  if (!write_all(fd_, line.dump() + "\n")) return fail(errno);
  if (regular_ && ::fsync(fd_) != 0) return fail(errno);
  ++appended_;
}

}  // namespace gcb
