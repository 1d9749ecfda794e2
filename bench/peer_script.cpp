#include "bench/peer_script.hpp"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fmt/format.h>

#ifndef GCB_SOURCE_DIR
#define GCB_SOURCE_DIR "."
#endif

namespace gcb::bench {

PeerRun run_peer_script(const std::string& script, const std::string& args) {
  const char* dir = std::getenv("GCB_PEERS_DIR");
  const std::string path = dir ? std::string(dir) + "/" + script : std::string(GCB_SOURCE_DIR) + "/scripts/peers/" + script;
  if (!std::filesystem::exists(path)) return {nullptr, "peer script not found: " + path};
  FILE* pipe = popen(fmt::format("python3 '{}' {} 2>&1", path, args).c_str(), "r");
  if (!pipe) return {nullptr, "could not start python3"};
  std::string output;
  char buf[4096];
  for (size_t n; (n = fread(buf, 1, sizeof(buf), pipe)) > 0;) output.append(buf, n);
  const int rc = pclose(pipe);
  // The script prints one JSON object as its last line; anything before it is torch's chatter.
  const size_t last = output.rfind("\n{");
  const std::string json_text = last == std::string::npos ? output : output.substr(last + 1);
  nlohmann::json peer = nlohmann::json::parse(json_text, nullptr, false);
  if (peer.is_discarded() || !peer.is_object())
    return {nullptr, fmt::format("python3 peer {} failed (exit {}): {}", script, rc, output.substr(0, 300))};
  return {std::move(peer), {}};
}

}  // namespace gcb::bench
