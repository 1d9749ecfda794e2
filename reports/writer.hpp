// The one output layer every file gcbench writes goes through. Whole files (--json, --csv,
// report/compare/export/topo outputs, --dump) are written so that a failed run never leaves a
// half-written document and never replaces what the path is: a regular file (or a new one) is
// written to a temporary file in the same folder and renamed over it, then the folder is
// fsync'ed; a symlink's final target is written (the link stays a link); anything that is not a
// regular file — /dev/null, /dev/stdout, a FIFO, a terminal — is written in place, appended
// (through fd 1 or 2 itself when it is this process's own standard output or error). A symlink
// in a sticky world-writable folder is followed only when the kernel's protected_symlinks rule
// would follow it (owned by us or by the folder's owner). The temporary file's name is short
// (".gcbench-PID-HASH.tmp", opened relative to the folder), so any name that fits fits its
// temporary too.
// The JSONL sink appends one line per case the moment it ends, so nothing measured is lost if a
// later case crashes. Write failures (disk full, I/O error) are gcb::WriteError: a fault of the
// run, never "bad input".
#pragma once

#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.hpp"
#include "reports/result.hpp"

namespace gcb {

// Writing an output failed after the run (ENOSPC, EIO, a device that refuses data): exit 3.
class WriteError : public Fault {
 public:
  using Fault::Fault;
};

// Writes `text` to `path` as described above. Throws gcb::WriteError naming the path and the
// system's reason; a regular target is left as it was.
void write_output(const std::string& path, std::string_view text);
void write_document(const std::string& path, const ResultDocument& doc);

// Where a document goes when its own path cannot take it (disk full, I/O error): the temporary
// folder ($TMPDIR, else /tmp; often another filesystem), as gcbench-rescued-PID-NAME. A NAME too
// long for that (NAME_MAX) keeps its last bytes behind a hash of the whole name; a $TMPDIR too
// long for PATH_MAX gives way to /tmp.
std::string rescue_path(const std::string& path);

class JsonlSink {
 public:
  JsonlSink() = default;
  // Nothing is created until the first append(), so a run that stops before its first result
  // leaves no empty file. Appends to an existing file (a rerun after an interruption keeps the
  // earlier lines); a partial last line left by a killed writer is ended first, so it stays
  // one unreadable line that readers skip with a warning.
  explicit JsonlSink(const std::string& path);
  ~JsonlSink();
  JsonlSink(const JsonlSink&) = delete;
  JsonlSink& operator=(const JsonlSink&) = delete;
  // Adds one flushed, fsync'ed line {"schema": "gcbench.result/1", "result": {...}}. Never
  // throws: the first failure is printed as a warning on stderr, kept in error(), and later
  // results are not appended (the run goes on; its exit code reports the failure).
  void append(const Result& r);
  const std::string& path() const { return path_; }
  size_t appended() const { return appended_; }
  const std::string& error() const { return error_; }

 private:
  int fd_ = -1;
  int stream_ = -1;  // STDOUT_FILENO/STDERR_FILENO when the path is our own standard output/error
  bool regular_ = false;
  std::string path_;
  std::string error_;
  size_t appended_ = 0;
};

// An output or input path and the flag that named it ("--json", "-o", "BASE"), for messages.
struct NamedPath {
  std::string flag;
  std::string path;
};

// Everything about output paths that can be known before a run starts, creating nothing:
// each output's folder exists and is writable; no output is a folder; no output is one of the
// inputs or another output (the same file by device and inode, or the same resolved path when
// it does not exist yet). Non-regular targets (/dev/null, /dev/stdout, FIFOs) may repeat.
// Empty paths are skipped. Throws gcb::UsageError (exit 2).
void check_output_paths(const std::vector<NamedPath>& outputs, const std::vector<NamedPath>& inputs = {});

// One output path alone (the first check of check_output_paths).
void check_writable(const std::string& path);

}  // namespace gcb
