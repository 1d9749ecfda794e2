#include "reports/writer.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fmt/format.h>

#include "core/error.hpp"

namespace gcb {

namespace fs = std::filesystem;

JsonlSink::JsonlSink(const std::string& path) : path_(path) {
  file_ = std::fopen(path.c_str(), "w");
  if (!file_) throw UsageError(fmt::format("cannot write '{}': {}", path, std::strerror(errno)));
}

JsonlSink::~JsonlSink() {
  if (file_) std::fclose(file_);
}

void JsonlSink::append(const Result& r) {
  if (!file_) return;
  const nlohmann::json line = {{"schema", kResultSchema}, {"result", to_json(r)}};
  const std::string text = line.dump() + "\n";
  if (std::fwrite(text.data(), 1, text.size(), file_) != text.size() || std::fflush(file_) != 0)
    check_failed("io", "fwrite", fmt::format("writing '{}': {}", path_, std::strerror(errno)), __FILE__, __LINE__);
  fsync(fileno(file_));
}

void check_writable(const std::string& path) {
  const fs::path p(path);
  const fs::path dir = p.has_parent_path() ? p.parent_path() : fs::path(".");
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) throw UsageError(fmt::format("cannot write '{}': folder '{}' does not exist", path, dir.string()));
  if (access(dir.c_str(), W_OK) != 0)
    throw UsageError(fmt::format("cannot write '{}': folder '{}' is not writable", path, dir.string()));
  if (fs::is_directory(p, ec)) throw UsageError(fmt::format("cannot write '{}': it is a folder", path));
}

void write_file_atomic(const std::string& path, const std::string& text) {
  const std::string tmp = fmt::format("{}.tmp.{}", path, getpid());
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) throw UsageError(fmt::format("cannot write '{}': {}", path, std::strerror(errno)));
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0) {
      const int err = errno;
      ::close(fd);
      ::unlink(tmp.c_str());
      throw UsageError(fmt::format("writing '{}': {}", path, std::strerror(err)));
    }
    done += static_cast<size_t>(n);
  }
  fsync(fd);
  ::close(fd);
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    throw UsageError(fmt::format("cannot write '{}': {}", path, std::strerror(err)));
  }
}

void write_document(const std::string& path, const ResultDocument& doc) {
  write_file_atomic(path, to_json(doc).dump(2) + "\n");
}

}  // namespace gcb
