// Where an output path really leads, decided once for the writer and the up-front checks: the
// final target after following symlinks, and whether it is a regular file (written atomically),
// absent (created atomically), or something else (written in place). Paths that pass through
// /proc (/dev/stdout, /dev/fd/N) are always "in place": they name an open file descriptor,
// and replacing the file behind it would detach it from the shell's redirection.
#pragma once

#include <sys/types.h>

#include <string>

namespace gcb {

struct OutputTarget {
  enum class Kind { absent, regular, in_place, folder };
  Kind kind = Kind::absent;
  std::string path;  // the final target (symlinks followed); for in_place the path as given
  dev_t dev = 0;     // device and inode of an existing target
  ino_t ino = 0;
  mode_t mode = 0;
  int error = 0;  // errno when the path could not be resolved (ELOOP, EACCES, ...)
  // Why the path is refused although it resolves: a symlink that the kernel's protected_symlinks
  // rule would not follow (in a sticky world-writable folder, owned by neither the folder's owner
  // nor us). Empty when it is not refused.
  std::string refused;
};

OutputTarget resolve_output_target(const std::string& path);

// "folder" part of a path, "." when it has none.
std::string parent_folder(const std::string& path);

}  // namespace gcb
