// Reading the files a user hands gcbench (result documents, topology dumps, model configs):
// only regular files of bounded size — a FIFO would block forever, /dev/zero would be read
// until memory runs out, a folder is not a document — and JSON with bounded nesting, since a
// document nested 100,000 deep overflows the stack of every recursive consumer (copying,
// dumping, walking). Every refusal is a gcb::UsageError (exit 2) naming the file.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "core/error.hpp"

namespace gcb {

// The largest input read: result documents with raw samples reach tens of MB; 1 GiB leaves room
// and still fails fast on a wrong file.
inline constexpr size_t kMaxInputBytes = size_t{1} << 30;
// Nesting deeper than any document gcbench writes (results: about 6 levels) by a wide margin.
inline constexpr int kMaxJsonDepth = 256;

// Refuses (gcb::UsageError) a path that is not a regular file, without opening it: for inputs
// streamed by their reader (token files, checkpoints), whose size the reader bounds itself.
void check_input_file(const std::string& path, std::string_view what);

// The whole file. `what` names it in messages ("result file", "topology file").
std::string read_input_file(const std::string& path, std::string_view what, size_t max_bytes = kMaxInputBytes);

// Text that is not JSON. truncated(): only its end is missing (a line cut short by a crash or a
// full disk), told from the parser's error position.
class JsonSyntaxError : public UsageError {
 public:
  JsonSyntaxError(const std::string& what, bool truncated) : UsageError(what), truncated_(truncated) {}
  bool truncated() const { return truncated_; }

 private:
  bool truncated_;
};

// nlohmann::json::parse with a depth limit. Throws JsonSyntaxError "<what> is not valid JSON: ..."
// and gcb::UsageError for nesting deeper than max_depth or a number beyond double's range (1e400).
nlohmann::json parse_json_input(std::string_view text, std::string_view what, int max_depth = kMaxJsonDepth);

}  // namespace gcb
