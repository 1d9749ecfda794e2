// The scan's budget plan and its skip reasons (budget.hpp).
#include "bench/scan/budget.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>

namespace gcb::scan {

double stage_weight(const std::string& stage) {
  static const std::map<std::string, double> w = {{"inventory", 0.02}, {"device", 0.25}, {"links", 0.13},
                                                  {"pairs", 0.35},     {"coll", 0.20},   {"reference", 0.05}};
  return w.at(stage);
}

double stage_share(const std::string& stage, const std::vector<std::string>& stages_left, double budget_s,
                   double elapsed_s) {
  double weights = 0;
  for (const auto& s : stages_left) weights += stage_weight(s);
  if (!(weights > 0)) return 0;
  return std::max(0.0, budget_s - elapsed_s) * stage_weight(stage) / weights;
}

StageCost stage_cost(const std::string& stage, int nodes, int pair_rounds, int coll_ops, int link_cases) {
  if (stage == "device") return {2, 0.8};
  if (stage == "links") return {static_cast<double>(std::max(link_cases, 0)), 0.8};
  if (stage == "pairs") return {static_cast<double>(pair_rounds + 1) * 4 + 1, 0.7};
  if (stage == "coll") {
    int levels = 0;
    for (int n = nodes; n > 3; n /= 2) ++levels;
    return {static_cast<double>(std::max(coll_ops, 1) + levels + 2), 0.7};
  }
  return {0, 1};  // inventory reads files; the reference step runs a fixed number of steps
}

double per_measurement_seconds(const StageCost& cost, double share_s) {
  return cost.measurements > 0 ? share_s * cost.sampling / cost.measurements : share_s;
}

double min_stage_seconds(const StageCost& cost) {
  return cost.measurements > 0 ? cost.measurements * kMinMeasurementSeconds / cost.sampling : 0;
}

std::string budget_skip_reason(const StageCost& cost, double share_s, double left_s) {
  if (!(left_s > 0)) return fmt::format("budget: none left ({:.1f} s over)", -left_s);
  const double least = min_stage_seconds(cost);
  if (share_s >= least) return "";
  return fmt::format(
      "budget: its share {:.2f} s of the {:.1f} s left is below the {:.2f} s its {:g} measurements need "
      "({:.0f} ms each, {:.0f} % of the share sampling)",
      share_s, left_s, least, cost.measurements, kMinMeasurementSeconds * 1e3, cost.sampling * 100);
}

std::string no_nics_reason(const std::vector<std::string>& nodes,
                           const std::vector<std::vector<std::string>>& interfaces, bool rehearse) {
  if (rehearse || nodes.size() < 2) return "";
  std::vector<std::string> none;
  for (size_t i = 0; i < nodes.size(); ++i)
    if (i >= interfaces.size() || interfaces[i].empty()) none.push_back(nodes[i]);
  if (none.empty()) return "";
  std::string names;
  for (size_t i = 0; i < none.size() && i < 4; ++i) names += (i ? ", " : "") + none[i];
  if (none.size() > 4) names += fmt::format(" and {} more", none.size() - 4);
  return fmt::format("no NICs: {} of {} nodes have no network interface besides loopback ({}): no path between nodes",
                     none.size(), nodes.size(), names);
}

std::vector<std::string> network_interfaces(const std::string& sys_class_net) {
  namespace fs = std::filesystem;
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(sys_class_net, ec)) {
    auto read = [&](const char* file) {
      std::ifstream in(entry.path() / file);
      std::string s;
      std::getline(in, s);
      return s;
    };
    const std::string name = entry.path().filename().string();
    if (read("type") == "772" || name == "lo") continue;  // ARPHRD_LOOPBACK
    if (read("operstate") == "down") continue;
    out.push_back(name);
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace gcb::scan
