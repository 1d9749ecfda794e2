// Peers measured the way their users measure them: a script in scripts/peers/ (python3, run via
// popen) times e.g. torch.matmul or SDPA with CUDA events and prints one JSON object as its last
// line. Shared by gemm and attn.
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "reports/result.hpp"
#include "reports/waived_result.hpp"

namespace gcb::bench {

struct PeerRun {
  nlohmann::json json;  // the script's last-line object; null when `error` is set
  std::string error;    // why there is no JSON (script missing, python3 failed, bad output)
};

// Runs scripts/peers/<script> (or $GCB_PEERS_DIR/<script>) with `args`.
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
