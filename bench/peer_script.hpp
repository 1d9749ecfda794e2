// Peers measured the way their users measure them: a script in scripts/peers/ (python3, run via
// popen) times e.g. torch.matmul or SDPA with CUDA events and prints one JSON object as its last
// line. Shared by gemm and attn.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace gcb::bench {

struct PeerRun {
  nlohmann::json json;  // the script's last-line object; null when `error` is set
  std::string error;    // why there is no JSON (script missing, python3 failed, bad output)
};

// Runs scripts/peers/<script> (or $GCB_PEERS_DIR/<script>) with `args`.
PeerRun run_peer_script(const std::string& script, const std::string& args);

}  // namespace gcb::bench
