// Stages 2 and 3: per device (HBM triad and a BF16 GEMM burn per GPU; host STREAM triad and
// sgemm per CPU-only node) and intra-node links (the GPU-pair copy matrix of each node, copy
// engines and SM copies), through the mem, gemm and p2p families' own cases.
#include <fmt/format.h>

#include "bench/scan/judge.hpp"
#include "bench/scan/scan_run.hpp"
#include "bench/scan/stage_cases.hpp"
#include "core/context.hpp"
#include "core/gpu.hpp"

namespace gcb::scan {

namespace {

std::vector<Result> run_cases(bench::CaseList cases, const HarnessOptions& h) {
  bench::Runner local(bench::RunnerOptions{h, false, true, false}, nullptr);  // no local stop: ranks agree
  local.run_all(cases);
  return local.results();
}

std::string sku_of(int gpu) {
  if (gpu < 0) return cpu_model();
  const auto& d = gpu::runtime().devices;
  return gpu < static_cast<int>(d.size()) ? d[static_cast<size_t>(gpu)].name : "unknown GPU";
}

}  // namespace

void ScanRun::device() {
  const StageCost cost = stage_cost("device", 0, 0, 0, 0);
  const double budget = begin_stage(
      "device", gpu_ >= 0 ? "HBM triad and a bf16 GEMM burn per GPU" : "host STREAM triad (fp64) and sgemm per node",
      cost);
  if (skipped_for_budget("device")) return;
  std::vector<Result> mine;
  if (gpu_ >= 0 || me().local == 0) {  // CPU-only nodes: the node's first rank measures the host
    DeviceCases cases = device_cases(gpu_, o_, seed_);
    const HarnessOptions h = harness_for(per_measurement_seconds(cost, budget), 5);
    HarnessOptions burn = h;
    if (gpu_ >= 0 && o_.burn > 0) {  // a burn: at least this long under load, whatever the noise
      burn.min_time = o_.burn;
      burn.max_time = std::max(burn.max_time, o_.burn);
    }
    mine = run_cases(std::move(cases.memory), h);
    auto g = run_cases(std::move(cases.gemm), burn);
    mine.insert(mine.end(), g.begin(), g.end());
    for (auto& r : mine) tag(r, {{"stage", "device"}, {"node", me().node}, {"gpu", gpu_}, {"sku", sku_of(gpu_)}});
  }
  auto all = gather(mine);
  if (!leader()) return;
  auto findings = judge_device(all, layout_.nodes, o_.rule);
  end_stage("device", std::move(all), std::move(findings));
}

void ScanRun::links() {
  const int gpus = gpu::device_count();
  // The cost of rank 0's node decides for every node (rank 0 decides, begin_stage).
  const int cases_here = gpus >= 2 ? static_cast<int>(link_cases(gpus, o_, seed_).size()) : 0;
  const double budget = begin_stage("links", "GPU-pair copy bandwidth per node (copy engine and SM, peer access)",
                                    stage_cost("links", 0, 0, 0, cases_here));
  if (skipped_for_budget("links")) return;
  std::vector<Result> mine;
  if (gpu_ >= 0 && me().local == 0 && gpus >= 2) {
    bench::CaseList cases = link_cases(gpus, o_, seed_);
    const double per_case = per_measurement_seconds(
        stage_cost("links", 0, 0, 0, static_cast<int>(std::max<size_t>(cases.size(), 1))), budget);
    mine = run_cases(std::move(cases), harness_for(per_case, 3));
    for (auto& r : mine) tag(r, {{"stage", "links"}, {"node", me().node}});
  }
  const auto all = gather(mine);
  if (!leader()) return;
  if (all.empty()) {
    skip_stage("links", "no node has two GPUs: no intra-node link to measure");
    return;
  }
  end_stage("links", all, judge_links(all, layout_.nodes, o_.rule));
}

}  // namespace gcb::scan
