// run_peer_script runs a script of scripts/peers/ (python3 via popen) and parses the JSON object on its last line;
// torch_ratios turns its times into vs_torch ratios of our results. Used by gemm and attn.
#include "bench/common/peer_script.hpp"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fmt/format.h>
#include <map>
#include <utility>

#ifndef GCB_SOURCE_DIR
#define GCB_SOURCE_DIR ""
#endif

namespace gcb::bench {

std::vector<std::filesystem::path> peer_script_candidates(const std::string& script, const char* env_dir,
                                                          const std::filesystem::path& exe,
                                                          const std::string& source_dir) {
  namespace fs = std::filesystem;
  if (env_dir != nullptr) return {fs::path(env_dir) / script};
  std::vector<fs::path> out;
  if (!exe.empty()) {
    const fs::path dir = exe.parent_path();
    out.push_back(dir / "peers" / script);
    out.push_back(dir.parent_path() / "peers" / script);
  }
  if (!source_dir.empty()) out.push_back(fs::path(source_dir) / "scripts" / "peers" / script);
  return out;
}

std::optional<std::filesystem::path> find_peer_script(const std::string& script, const char* env_dir,
                                                      const std::filesystem::path& exe, const std::string& source_dir) {
  std::error_code ec;
  for (const auto& p : peer_script_candidates(script, env_dir, exe, source_dir))
    if (std::filesystem::is_regular_file(p, ec)) return p;
  return std::nullopt;
}

PeerRun run_peer_script(const std::string& script, const std::string& args) {
  std::error_code ec;
  std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) exe.clear();
  const char* env_dir = std::getenv("GCB_PEERS_DIR");
  const auto found = find_peer_script(script, env_dir, exe, GCB_SOURCE_DIR);
  if (!found) {
    std::string tried;
    for (const auto& p : peer_script_candidates(script, env_dir, exe, GCB_SOURCE_DIR))
      tried += (tried.empty() ? "" : ", ") + p.string();
    return {nullptr, "peer script not found: " + tried};
  }
  const std::string path = found->string();
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

std::vector<Result> torch_ratios(const std::vector<Result>& rs, const nlohmann::json& peer, const TorchJoin& join) {
  if (!peer.value("available", false))
    return {waived_result(join.waived_key,
                          "torch peer unavailable: " + peer.value("reason", std::string("no reason given")))};
  std::map<std::string, const nlohmann::json*> by_id;
  for (const auto& e : peer.at("results")) by_id[join.id(e)] = &e;
  std::vector<Result> out;
  for (const auto& r : rs) {
    if (!join.compares(r)) continue;
    Result x;
    x.key = join.key(r);
    x.params = r.params;
    const auto it = by_id.find(join.id(r.params));
    const Metric* ours = r.metric("tflops");
    if (it == by_id.end() || !it->second->contains("tflops") || it->second->at("tflops").is_null()) {
      x.status = Status::waived;
      x.reason = it == by_id.end() ? join.no_entry : "torch: " + it->second->value("reason", std::string("no timing"));
    } else if (!ours || !ours->value) {
      x.status = Status::waived;
      x.reason = "our result has no TFLOP/s";
    } else {
      const double theirs = it->second->at("tflops").get<double>();
      x.metrics.push_back(Metric{"ratio", *ours->value / theirs, "x", true, std::nullopt, ""});
      x.extra = {{"compares", join.what},
                 {"ours_tflops", *ours->value},
                 {"torch_tflops", theirs},
                 {"torch", peer.value("torch", "")}};
      for (const auto& f : join.entry_fields)
        x.extra["torch_" + f] = it->second->contains(f) ? it->second->at(f) : nlohmann::json(nullptr);
    }
    out.push_back(std::move(x));
  }
  return out;
}

}  // namespace gcb::bench
