// The torch SDPA peer of `gcbench attn`: runs scripts/peers/torch_sdpa.py (python3, via popen)
// on the shapes of our GPU results that passed, flash backend forced, and turns its JSON into
// "attn/<pass>/vs_torch" ratios. The script times itself with CUDA events (median): a peer is
// measured the way its users measure it, not by our harness.
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fmt/format.h>
#include <map>
#include <set>

#include "bench/attn/attn.hpp"
#include "bench/common/peer_script.hpp"

namespace gcb::bench {

namespace {

Result waived(std::string reason) { return waived_result("attn/vs_torch", std::move(reason)); }

bool is_ours_on_gpu(const Result& r) {
  return r.family() == "attn" && r.status == Status::pass && r.params.value("impl", "") == "ours" &&
         r.params.value("device", "").rfind("gpu:", 0) == 0;
}

// "b:h:s:d:causal:dtype:pass", the script's case syntax and our join key.
std::string case_id(const nlohmann::json& p) {
  return fmt::format("{}:{}:{}:{}:{}:{}:{}", p.at("batch").get<int>(), p.at("heads").get<int>(), p.at("seq").get<int>(),
                     p.at("head_dim").get<int>(), p.at("causal").get<bool>() ? 1 : 0, p.at("dtype").get<std::string>(),
                     p.at("pass").get<std::string>());
}

}  // namespace

std::vector<Result> attn_torch_ratios(const std::vector<Result>& rs, const nlohmann::json& peer) {
  TorchJoin join;
  join.waived_key = "attn/vs_torch";
  join.compares = is_ours_on_gpu;
  join.id = case_id;
  join.key = [](const Result& r) { return fmt::format("attn/{}/vs_torch", r.params.at("pass").get<std::string>()); };
  join.what = "gcbench flash kernel / torch SDPA (flash backend) TFLOP/s, FA convention, medians";
  join.no_entry = "torch peer has no entry for this case";
  join.entry_fields = {"calls_per_sample"};
  return torch_ratios(rs, peer, join);
}

std::vector<Result> attn_torch_peer_results(const std::vector<Result>& rs) {
  std::set<std::string> cases;
  int device = -1;
  for (const auto& r : rs) {
    if (!is_ours_on_gpu(r)) continue;
    cases.insert(case_id(r.params));
    if (device < 0) device = std::stoi(r.params.at("device").get<std::string>().substr(4));
  }
  if (cases.empty()) return {waived("no GPU attention case of ours passed, nothing to compare with torch")};
  std::string list;
  for (const auto& c : cases) list += (list.empty() ? "" : ",") + c;
  const PeerRun peer = run_peer_script("torch_sdpa.py", fmt::format("--device {} --cases {}", device, list));
  if (!peer.error.empty()) return {waived(peer.error)};
  return attn_torch_ratios(rs, peer.json);
}

}  // namespace gcb::bench
