// The torch.matmul peer of `gcbench gemm`: runs scripts/peers/torch_matmul.py (python3, via
// popen) on the shapes and dtypes of the GPU results that passed, and turns its JSON into
// "gemm/<dtype>/vs_torch" ratios. The script times itself with CUDA events: a peer is measured
// the way its users measure it, not by our harness.
#include <cstdio>
#include <filesystem>
#include <fmt/format.h>
#include <map>
#include <set>

#include "bench/gemm.hpp"
#include "bench/peer_script.hpp"

namespace gcb::bench {

namespace {

Result waived(std::string reason) {
  Result r;
  r.key = "gemm/vs_torch";
  r.status = Status::waived;
  r.reason = std::move(reason);
  return r;
}

bool is_gpu_gemm(const Result& r) {
  return r.family() == "gemm" && r.status == Status::pass && r.params.value("impl", "") == "cublaslt";
}

}  // namespace

std::vector<Result> gemm_torch_ratios(const std::vector<Result>& rs, const nlohmann::json& peer) {
  if (!peer.value("available", false)) return {waived("torch peer unavailable: " + peer.value("reason", std::string("no reason given")))};
  std::map<std::string, const nlohmann::json*> by_shape;  // "dtype/m/n/k" → peer entry
  for (const auto& e : peer.at("results"))
    by_shape[fmt::format("{}/{}/{}/{}", e.at("dtype").get<std::string>(), e.at("m").get<int64_t>(), e.at("n").get<int64_t>(),
                         e.at("k").get<int64_t>())] = &e;
  std::vector<Result> out;
  for (const auto& r : rs) {
    if (!is_gpu_gemm(r)) continue;
    const auto& p = r.params;
    const std::string id = fmt::format("{}/{}/{}/{}", p.at("dtype").get<std::string>(), p.at("m").get<int64_t>(),
                                       p.at("n").get<int64_t>(), p.at("k").get<int64_t>());
    Result x;
    x.key = fmt::format("gemm/{}/vs_torch", p.at("dtype").get<std::string>());
    x.params = p;
    const auto it = by_shape.find(id);
    const Metric* ours = r.metric("tflops");
    if (it == by_shape.end() || !it->second->contains("tflops") || it->second->at("tflops").is_null()) {
      x.status = Status::waived;
      x.reason = it == by_shape.end() ? "torch peer has no entry for this shape and dtype"
                                      : "torch: " + it->second->value("reason", std::string("no timing"));
    } else if (!ours || !ours->value) {
      x.status = Status::waived;
      x.reason = "our result has no TFLOP/s";
    } else {
      const double theirs = it->second->at("tflops").get<double>();
      x.metrics.push_back(Metric{"ratio", *ours->value / theirs, "x", true, std::nullopt, ""});
      x.extra = {{"compares", "gcbench cuBLASLt / torch.matmul TFLOP/s (median; torch: CUDA events, median)"},
                 {"ours_tflops", *ours->value}, {"torch_tflops", theirs}, {"torch", peer.value("torch", "")},
                 {"torch_op", it->second->value("op", "")}};
    }
    out.push_back(std::move(x));
  }
  return out;
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
  const PeerRun peer = run_peer_script("torch_matmul.py", fmt::format("--device {} --shapes {} --dtypes {}", device, shape_list, dtype_list));
  if (!peer.error.empty()) return {waived(peer.error)};
  return gemm_torch_ratios(rs, peer.json);
}

}  // namespace gcb::bench
