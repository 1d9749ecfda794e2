// The torch.matmul peer of `gcbench gemm`: runs scripts/peers/torch_matmul.py (python3, via
// popen) on the shapes and dtypes of the GPU results that passed, and turns its JSON into
// "gemm/<dtype>/vs_torch" ratios. The script times itself with CUDA events: a peer is measured
// the way its users measure it, not by our harness.
#include <cstdio>
#include <filesystem>
#include <fmt/format.h>
#include <map>
#include <set>

#include "bench/gemm/gemm.hpp"
#include "bench/common/peer_script.hpp"

namespace gcb::bench {

namespace {

Result waived(std::string reason) { return waived_result("gemm/vs_torch", std::move(reason)); }

bool is_gpu_gemm(const Result& r) {
  return r.family() == "gemm" && r.status == Status::pass && r.params.value("impl", "") == "cublaslt";
}

}  // namespace

std::vector<Result> gemm_torch_ratios(const std::vector<Result>& rs, const nlohmann::json& peer) {
  TorchJoin join;
  join.waived_key = "gemm/vs_torch";
  join.compares = is_gpu_gemm;
  join.id = [](const nlohmann::json& p) {  // "dtype/m/n/k": our params and the script's entries alike
    return fmt::format("{}/{}/{}/{}", p.at("dtype").get<std::string>(), p.at("m").get<int64_t>(),
                       p.at("n").get<int64_t>(), p.at("k").get<int64_t>());
  };
  join.key = [](const Result& r) { return fmt::format("gemm/{}/vs_torch", r.params.at("dtype").get<std::string>()); };
  join.what = "gcbench cuBLASLt / torch.matmul TFLOP/s (median; torch: CUDA events, median)";
  join.no_entry = "torch peer has no entry for this shape and dtype";
  join.entry_fields = {"op", "calls_per_sample"};
  return torch_ratios(rs, peer, join);
}

std::vector<Result> gemm_torch_peer_results(const std::vector<Result>& rs) {
  std::set<std::string> shapes;
  std::set<std::string> dtypes;
  int device = -1;
  for (const auto& r : rs) {
    if (!is_gpu_gemm(r)) continue;
    shapes.insert(fmt::format("{}x{}x{}", r.params.at("m").get<int64_t>(), r.params.at("n").get<int64_t>(),
                              r.params.at("k").get<int64_t>()));
    dtypes.insert(r.params.at("dtype").get<std::string>());
    if (device < 0) device = std::stoi(r.params.at("device").get<std::string>().substr(4));
  }
  if (shapes.empty()) return {waived("no GPU gemm case passed, nothing to compare with torch")};
  std::string shape_list, dtype_list;
  for (const auto& s : shapes) shape_list += (shape_list.empty() ? "" : ",") + s;
  for (const auto& d : dtypes) dtype_list += (dtype_list.empty() ? "" : ",") + d;
  const PeerRun peer = run_peer_script(
      "torch_matmul.py", fmt::format("--device {} --shapes {} --dtypes {}", device, shape_list, dtype_list));
  if (!peer.error.empty()) return {waived(peer.error)};
  return gemm_torch_ratios(rs, peer.json);
}

}  // namespace gcb::bench
