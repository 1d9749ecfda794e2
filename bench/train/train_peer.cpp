// Runs the torch peer of `gcbench train --peer-torch` (scripts/peers/torch_gpt.py) on the inputs
// models/torch_peer.hpp writes, and turns its JSON into rows next to ours.
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>

#include "bench/common/peer_script.hpp"
#include "bench/train/train.hpp"
#include "models/torch_peer.hpp"

namespace gcb::bench {

PeerRun run_train_torch_peer(const models::TrainRequest& r) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / fmt::format("gcb-torch-peer-{}", getpid());
  fs::create_directories(dir);
  PeerRun run = run_peer_script("torch_gpt.py", models::write_torch_peer_inputs(r, dir));
  std::error_code ignored;
  fs::remove_all(dir, ignored);
  return run;
}

std::vector<Result> train_torch_peer_results(const models::TrainRequest& r, const std::vector<Result>& ours) {
  // Nothing of ours ran (no GPU, say): no figure to compare, so torch is not run either.
  if (std::none_of(ours.begin(), ours.end(), [](const Result& x) { return x.status == Status::pass; })) {
    return models::train_torch_ratios(
        ours, {{"available", true}, {"results", {{{"mode", "eager"}}, {{"mode", "compile"}}}}}, r.base.precision);
  }
  const PeerRun peer = run_train_torch_peer(r);
  if (!peer.error.empty()) return {waived_result("train/vs_torch", peer.error)};
  return models::train_torch_ratios(ours, peer.json, r.base.precision);
}

}  // namespace gcb::bench
