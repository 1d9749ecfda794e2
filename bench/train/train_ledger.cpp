// add_step_ledgers (train_ledger.hpp): the planner's step ledger of each layout that ran, its floors at the run's peak
// and the GPU's spec bandwidth, into the results and the console.
#include "bench/train/train_ledger.hpp"

#include <fmt/format.h>

#include <iterator>
#include <string>

#include "core/gpu.hpp"
#include "models/planner/step_ledger.hpp"
#include "reports/specs.hpp"

namespace gcb::bench {
namespace {

// The memory bandwidth the floors use: the spec sheet's of the GPU a cuda run used; none for the
// CPU backend (its STREAM rate is `gcbench mem`'s to measure), said so.
std::pair<double, std::string> ledger_bandwidth(const models::TrainRequest& request) {
  if (request.backend.memory != MemorySpace::device)
    return {0.0, fmt::format("none for the {} backend: memory floors not computed", request.backend.name)};
  const auto& devices = gpu::runtime().devices;
  if (devices.empty()) return {0.0, "no GPU"};
  const std::optional<GpuSpec> spec = find_gpu_spec(devices.front().name);
  if (!spec || spec->hbm_gbps <= 0) return {0.0, fmt::format("{}: not in the spec table", devices.front().name)};
  return {spec->hbm_gbps * 1e9, fmt::format("spec:{} {} GB/s", spec->sku, spec->hbm_gbps)};
}

}  // namespace

std::string add_step_ledgers(const models::TrainRequest& request, std::vector<Result>& results) {
  std::string out;
  if (results.size() != request.layouts.size()) return out;
  auto to = std::back_inserter(out);
  const auto [bandwidth, bandwidth_source] = ledger_bandwidth(request);
  for (size_t i = 0; i < results.size(); ++i) {
    Result& r = results[i];
    if (r.status != Status::pass || !r.extra.contains("peak_flops")) continue;
    const models::TrainOptions o = models::layout_options(request, request.layouts[i]);
    const models::ParallelLayout lay = request.layouts[i].layout();
    const double peak = r.extra["peak_flops"].get<double>();
    const std::vector<models::planner::LedgerRow> rows = models::planner::step_ledger(o, lay, 0);
    const double step = r.metrics.empty() || !r.metrics.front().value ? 0.0 : *r.metrics.front().value;
    fmt::format_to(
        to, "\nstep ledger of {}, rank 0 (stage 0), per step: peak {:.4g} TFLOP/s ({}), memory bandwidth {}\n",
        r.params.value("layout", std::string("?")), peak / 1e12, r.extra.value("peak_source", std::string("?")),
        bandwidth > 0 ? fmt::format("{:.0f} GB/s ({})", bandwidth / 1e9, bandwidth_source) : bandwidth_source);
    fmt::format_to(to, "{:<26} {:>9} {:>11} {:>11} {:>11}\n", "family", "launches", "GFLOP", "MB", "floor ms");
    nlohmann::json j = nlohmann::json::array();
    double floor = 0;
    for (const auto& row : rows) {
      const bool known = row.floor_known(peak, bandwidth);
      const double f = row.floor_seconds(peak, bandwidth);
      floor += f;
      j.push_back({{"family", row.family},
                   {"launches", row.launches},
                   {"flops", row.flops},
                   {"bytes", row.bytes},
                   {"device_memory", row.device_memory},
                   {"floor_s", known ? nlohmann::json(f) : nlohmann::json(nullptr)}});
      fmt::format_to(to, "{:<26} {:>9.0f} {:>11.4g} {:>11.4g} {:>11}\n", row.family, row.launches, row.flops / 1e9,
                     row.bytes / 1e6, known ? fmt::format("{:.4g}", f * 1e3) : std::string("-"));
    }
    r.extra["step_ledger"] = j;
    r.extra["step_ledger_rates"] = {{"peak_flops", peak},
                                    {"peak_source", r.extra.value("peak_source", std::string())},
                                    {"bandwidth", bandwidth},
                                    {"bandwidth_source", bandwidth_source},
                                    {"floor_sum_s", floor}};
    fmt::format_to(to, "sum of the known floors {:.4g} ms{}\n", floor * 1e3,
                   step > 0
                       ? fmt::format(" against a measured step of {:.4g} ms ({:.1f} %)", step * 1e3, 100 * floor / step)
                       : "");
  }
  return out;
}

}  // namespace gcb::bench
