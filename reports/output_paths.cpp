// Up-front checks of output paths (writer.hpp): run before anything is measured or created, so
// a bad path is exit 2 with one line and an input is never overwritten by an output.
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <fmt/format.h>
#include <optional>

#include "reports/output_target.hpp"
#include "reports/writer.hpp"

namespace gcb {

namespace {

// What makes two paths the same file: device and inode when it exists, else the resolved path
// with its folder canonicalised. nullopt for in-place targets, which may repeat.
std::optional<std::string> identity_of(const OutputTarget& t) {
  if (t.kind == OutputTarget::Kind::in_place) return std::nullopt;
  if (t.kind != OutputTarget::Kind::absent) return fmt::format("inode {}:{}", t.dev, t.ino);
  const std::string folder = parent_folder(t.path);
  char buf[PATH_MAX];
  const std::string canonical = ::realpath(folder.c_str(), buf) ? std::string(buf) : folder;
  const size_t slash = t.path.find_last_of('/');
  return "path " + canonical + "/" + (slash == std::string::npos ? t.path : t.path.substr(slash + 1));
}

// Inputs that do not exist (or are not files) cannot be overwritten; their readers refuse them.
std::optional<std::string> input_identity(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return std::nullopt;
  return fmt::format("inode {}:{}", st.st_dev, st.st_ino);
}

}  // namespace

void check_writable(const std::string& path) {
  const OutputTarget t = resolve_output_target(path);
  if (t.error == ENAMETOOLONG)
    throw UsageError(fmt::format("cannot write '{}': {} (a name may have {} bytes, a path {})", path,
                                 std::strerror(t.error), NAME_MAX, PATH_MAX - 1));
  if (t.error != 0) throw UsageError(fmt::format("cannot write '{}': {}", path, std::strerror(t.error)));
  if (!t.refused.empty()) throw UsageError(fmt::format("cannot write '{}': {}", path, t.refused));
  switch (t.kind) {
    case OutputTarget::Kind::folder: throw UsageError(fmt::format("cannot write '{}': it is a folder", path));
    case OutputTarget::Kind::in_place:
      if (::access(path.c_str(), W_OK) != 0)
        throw UsageError(fmt::format("cannot write '{}': {}", path, std::strerror(errno)));
      return;
    case OutputTarget::Kind::regular:
      if (::access(t.path.c_str(), W_OK) != 0)
        throw UsageError(fmt::format("cannot write '{}': {}", path, std::strerror(errno)));
      break;
    case OutputTarget::Kind::absent: break;
  }
  const std::string folder = parent_folder(t.path);
  struct stat st {};
  if (::stat(folder.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    throw UsageError(fmt::format("cannot write '{}': folder '{}' does not exist", path, folder));
  if (::access(folder.c_str(), W_OK) != 0)
    throw UsageError(fmt::format("cannot write '{}': folder '{}' is not writable", path, folder));
}

void check_output_paths(const std::vector<NamedPath>& outputs, const std::vector<NamedPath>& inputs) {
  std::vector<std::pair<std::string, const NamedPath*>> seen;  // identity → first output with it
  for (const NamedPath& out : outputs) {
    if (out.path.empty()) continue;
    check_writable(out.path);
    const auto id = identity_of(resolve_output_target(out.path));
    if (!id) continue;
    for (const NamedPath& in : inputs) {
      if (in.path.empty()) continue;
      if (input_identity(in.path) == id)
        throw UsageError(fmt::format("{} '{}' is the input {} '{}': refusing to overwrite an input", out.flag, out.path,
                                     in.flag, in.path));
    }
    for (const auto& [other_id, other] : seen)
      if (other_id == *id)
        throw UsageError(fmt::format("{} '{}' and {} '{}' are the same file: give each output its own path",
                                     other->flag, other->path, out.flag, out.path));
    seen.emplace_back(*id, &out);
  }
}

}  // namespace gcb
