// Writing results: a JSONL sink that appends one line per case the moment it ends (so nothing
// measured is lost if a later case crashes), and whole-file writers that go through a temporary
// file and rename, so a failed run never leaves a half-written document.
#pragma once

#include <cstdio>
#include <string>

#include "reports/result.hpp"

namespace gcb {

class JsonlSink {
 public:
  JsonlSink() = default;
  // Truncates `path` now; each append() adds one flushed, fsync'ed line
  // {"schema": "gcbench.result/1", "result": {...}}.
  explicit JsonlSink(const std::string& path);
  ~JsonlSink();
  JsonlSink(const JsonlSink&) = delete;
  JsonlSink& operator=(const JsonlSink&) = delete;
  bool is_open() const { return file_ != nullptr; }
  void append(const Result& r);

 private:
  std::FILE* file_ = nullptr;
  std::string path_;
};

// Writes `text` to `path` atomically (temporary file in the same folder, then rename).
void write_file_atomic(const std::string& path, const std::string& text);
void write_document(const std::string& path, const ResultDocument& doc);

// Checks up front that `path` can be created (folder exists and is writable), so a bad output
// path is reported before any measurement runs. Throws gcb::UsageError.
void check_writable(const std::string& path);

}  // namespace gcb
