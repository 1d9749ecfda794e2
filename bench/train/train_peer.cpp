// Runs the torch peer of `gcbench train --peer-torch` (scripts/peers/torch_gpt.py) on the inputs
// models/run/torch_peer.hpp writes, alternating with runs of ours (models::kPeerOrder), and turns the
// JSON into rows next to ours.
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>

#include "bench/common/peer_script.hpp"
#include "bench/train/train.hpp"
#include "models/run/torch_peer.hpp"

namespace gcb::bench {

std::vector<PeerRun> run_train_torch_peer(const models::TrainRequest& r, const std::vector<std::string>& rounds) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / fmt::format("gcb-torch-peer-{}", getpid());
  fs::create_directories(dir);
  const std::string args = models::write_torch_peer_inputs(r, dir);
  std::vector<PeerRun> runs;
  for (const std::string& modes : rounds) runs.push_back(run_peer_script("torch_gpt.py", args + " --modes " + modes));
  std::error_code ignored;
  fs::remove_all(dir, ignored);
  return runs;
}

std::vector<Result> train_torch_peer_results(const models::TrainRequest& r, const std::vector<Result>& ours,
                                             const std::function<std::vector<Result>()>& ours_again) {
  // Nothing of ours ran (no GPU, say): no figure to compare, so torch is not run either.
  if (std::none_of(ours.begin(), ours.end(), [](const Result& x) { return x.status == Status::pass; })) {
    return models::train_torch_ratios(
        ours, {{"available", true}, {"results", {{{"mode", "eager"}}, {{"mode", "compile"}}}}}, r.base.precision);
  }
  // models::kPeerOrder: ours (already run), torch twice with the modes in both orders, ours again.
  const std::vector<PeerRun> peer = run_train_torch_peer(r, {"eager,compile", "compile,eager"});
  std::vector<nlohmann::json> rounds;
  for (const PeerRun& p : peer) {
    if (!p.error.empty()) return {waived_result("train/vs_torch", p.error)};
    rounds.push_back(p.json);
  }
  std::vector<std::vector<Result>> ours_rounds{ours};
  if (ours_again) ours_rounds.push_back(ours_again());
  return models::train_torch_ratios(models::merge_our_rounds(ours_rounds), models::merge_torch_rounds(rounds),
                                    r.base.precision);
}

}  // namespace gcb::bench
