// Peers measured the way their users measure them: a script in scripts/peers/ (python3, run via
// popen) times e.g. torch.matmul or SDPA with CUDA events and prints one JSON object as its last
// line. Shared by gemm and attn.
#pragma once

#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "reports/result.hpp"
#include "reports/waived_result.hpp"

namespace gcb::bench {

struct PeerRun {
  nlohmann::json json;  // the script's last-line object; null when `error` is set
  std::string error;    // why there is no JSON (script missing, python3 failed, bad output)
};

// Where a peer script is looked up, in this order: `env_dir` ($GCB_PEERS_DIR) alone when set; else
// beside the binary — <exe dir>/peers, then <exe dir>/../peers (the bundle of scripts/gpu-bundle.sh:
// bin/ and peers/ side by side, wherever it is copied) — and last `source_dir`/scripts/peers (a
// build tree: the source folder it was configured from). Nothing here needs the build-time path.
std::vector<std::filesystem::path> peer_script_candidates(const std::string& script, const char* env_dir,
                                                          const std::filesystem::path& exe,
                                                          const std::string& source_dir);
// The first of peer_script_candidates that exists; nullopt when none does.
std::optional<std::filesystem::path> find_peer_script(const std::string& script, const char* env_dir,
                                                      const std::filesystem::path& exe, const std::string& source_dir);

// Runs the peer script found for this process ($GCB_PEERS_DIR, beside /proc/self/exe, the source
// folder; find_peer_script) with `args`.
PeerRun run_peer_script(const std::string& script, const std::string& args);

// How one family's results meet the entries of its torch peer's JSON ({"available", "reason",
// "torch", "results": [entry…]}, each entry with "tflops" or null and a "reason").
struct TorchJoin {
  std::string waived_key;                                // the one WAIVED row when there is no peer
  std::function<bool(const Result&)> compares;           // which of our results have a peer
  std::function<std::string(const nlohmann::json&)> id;  // join key, from our params or an entry
  std::function<std::string(const Result&)> key;         // the ratio's key, "<family>/…/vs_torch"
  std::string what;                                      // extra.compares
  std::string no_entry;                                  // reason when the peer lacks the case
  std::vector<std::string> entry_fields;                 // entry fields copied to extra as torch_<f>
};
// One ratio (ours / torch, TFLOP/s) per result `join.compares` selects, WAIVED with the reason
// where either side has no figure; one WAIVED `join.waived_key` row when the peer is unavailable.
std::vector<Result> torch_ratios(const std::vector<Result>& rs, const nlohmann::json& peer, const TorchJoin& join);

}  // namespace gcb::bench
