// `gcbench train`'s tables: see reports/train_table.hpp.
#include "reports/train_table.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <iterator>
#include <string_view>
#include <utility>

#include "reports/render.hpp"

namespace gcb::report {

namespace {

// The binary unit that shows the largest value of a table with a few digits before the point.
std::pair<const char*, double> memory_unit(double largest) {
  if (largest >= 1024.0 * 1024 * 1024) return {"GiB", 1024.0 * 1024 * 1024};
  if (largest >= 1024.0 * 1024) return {"MiB", 1024.0 * 1024};
  return {"KiB", 1024.0};
}

}  // namespace

std::string train_peak_line(const Result& r, const std::string& separator) {
  std::string line = r.extra["peak_source"].get<std::string>();
  if (r.extra.contains("peak_probe")) {
    const nlohmann::json& p = r.extra["peak_probe"];
    line += fmt::format("{}best of {} = {:.1f} GFLOP/s, median {:.1f}% below", separator, p["repetitions"].get<int>(),
                        p["best_flops"].get<double>() / 1e9, 100.0 * p["spread"].get<double>());
  }
  return line;
}

std::string render_train_tables(const std::vector<Result>& all, const std::string& title) {
  std::string out;
  auto to = std::back_inserter(out);
  fmt::format_to(to, "\n{}\n", title);
  std::vector<Result> results;  // the layouts that ran; the others say why not
  for (const Result& r : all) {
    if (r.status == Status::pass) {
      results.push_back(r);
    } else {
      fmt::format_to(to, "{:<30} {}: {}\n", r.key.substr(6), status_name(r.status), r.reason);
    }
  }
  if (results.empty()) return out;
  fmt::format_to(to, "{:<30} {:>10} {:>11} {:>7} {:>10} {:>13} {:>10}\n", "layout", "step ms", "tokens/s", "MFU %",
                 "comm ms", "bubble/theory", "loss");
  for (const Result& r : results) {
    const auto& b = r.extra["bubble"];
    double bubble = 0;
    for (const auto& x : b["per_rank"]) bubble += x.get<double>();
    bubble /= static_cast<double>(std::max<size_t>(1, b["per_rank"].size()));
    fmt::format_to(to, "{:<30} {:>10.3f} {:>11.1f} {:>7.3f} {:>10.3f} {:>6.3f}/{:<6.3f} {:>10.5f}\n", r.key.substr(6),
                   1e3 * *r.metric("step_time")->value, *r.metric("tokens_per_s")->value, *r.metric("mfu")->value,
                   1e3 * r.extra["comm_exposed"].get<double>(), bubble, b["theory"].get<double>(),
                   *r.metric("final_loss")->value);
  }
  // The fastest layout, and the ones a rerun could put first: their step times' p10–p90 ranges
  // overlap the fastest one's (two runs of one sweep can rank such layouts either way).
  if (results.size() > 1) {
    const auto time = [](const Result& r) { return *r.metric("step_time")->value; };
    const Result& best = *std::min_element(results.begin(), results.end(),
                                           [&](const Result& a, const Result& b) { return time(a) < time(b); });
    const auto p = [](const Result& r, const char* key, double fallback) {
      return r.extra.contains(key) && r.extra[key].is_number() ? r.extra[key].get<double>() : fallback;
    };
    const double best_p90 = p(best, "step_time_p90", time(best));
    std::string tied;
    for (const Result& r : results)
      if (&r != &best && p(r, "step_time_p10", time(r)) <= best_p90)
        tied += (tied.empty() ? "" : ", ") + r.key.substr(6);
    fmt::format_to(to, "{}",
                   wrap_lines(fmt::format("fastest: {} ({:.3f} ms per step){}\n", best.key.substr(6), 1e3 * time(best),
                                          tied.empty() ? ""
                                                       : fmt::format("; within its p10–p90 spread, so a rerun may "
                                                                     "rank them first: {}",
                                                                     tied))));
  }
  // Model states: bytes held between steps; activations: the peak. Each next to its formula.
  const char* cats[] = {"params", "grads", "master", "adam_m", "adam_v", "activations"};
  double largest = 0;
  for (const Result& r : results)
    for (const char* c : cats) largest = std::max(largest, r.extra["memory"][c]["analytic"].get<double>());
  const auto [unit, scale] = memory_unit(largest);
  // A device backend also measured what its allocator took per category: requested / device / formula.
  bool device = false;
  for (const Result& r : results) device = device || r.extra["memory"]["params"].contains("device_persistent");
  // One figure where every figure of a cell is the same number of bytes (the usual case), else all
  // of them, so a difference stands out and the table fits a terminal.
  std::vector<std::vector<std::string>> cells;
  size_t layout_width = 6;
  std::vector<size_t> width;
  for (const char* c : cats) width.push_back(std::string(c).size());
  for (const Result& r : results) {
    layout_width = std::max(layout_width, r.key.size() - 6);
    std::vector<std::string> row;
    for (const char* c : cats) {
      const auto& e = r.extra["memory"][c];
      const bool peak = std::string(c) == "activations";
      std::vector<double> figures = {e[peak ? "measured" : "persistent"].get<double>()};
      if (device) {
        const char* on_device = peak ? "device" : "device_persistent";
        figures.push_back(e.contains(on_device) ? e[on_device].get<double>() : 0.0);
      }
      figures.push_back(e["analytic"].get<double>());
      const bool same = std::all_of(figures.begin(), figures.end(), [&](double f) { return f == figures.front(); });
      std::string text;
      for (size_t i = 0; i < (same ? 1 : figures.size()); ++i)
        text += fmt::format("{}{:.3f}", i ? "/" : "", figures[i] / scale);
      width[row.size()] = std::max(width[row.size()], text.size());
      row.push_back(text);
    }
    cells.push_back(row);
  }
  fmt::format_to(to, "\nmemory per category, rank 0, {} (states between steps, activations at peak)\n", unit);
  fmt::format_to(to, "one figure: {} and the formula agree; else {} / formula\n",
                 device ? "requested, on the device" : "measured", device ? "requested / on the device" : "measured");
  fmt::format_to(to, "{:<{}}", "layout", layout_width);
  for (size_t i = 0; i < std::size(cats); ++i) fmt::format_to(to, " {:>{}}", cats[i], width[i]);
  fmt::format_to(to, "\n");
  for (size_t k = 0; k < results.size(); ++k) {
    fmt::format_to(to, "{:<{}}", results[k].key.substr(6), layout_width);
    for (size_t i = 0; i < std::size(cats); ++i) fmt::format_to(to, " {:>{}}", cells[k][i], width[i]);
    fmt::format_to(to, "\n");
  }
  // --offload: the host's model states and saved activations (measured / formula), the categories
  // the host holds, and the bytes copied per step.
  for (const Result& r : results) {
    if (!r.extra["memory"]["master"].contains("host_persistent")) continue;
    fmt::format_to(to, "{:<30} on the host:", r.key.substr(6));
    const bool states = r.extra["memory"]["master"]["host_analytic"].get<double>() > 0;  // optimizer offloaded
    for (const char* c : {"params", "grads", "master", "adam_m", "adam_v", "activations"}) {
      const auto& e = r.extra["memory"][c];
      const bool acts = std::string_view(c) == "activations";
      if (acts ? e["host_analytic"].get<double>() == 0 && e["host_persistent"].get<double>() == 0 : !states) continue;
      fmt::format_to(to, " {} {:.3f}/{:.3f}", c, e["host_persistent"].get<double>() / scale,
                     e["host_analytic"].get<double>() / scale);
    }
    if (r.extra.contains("offload_bytes")) {
      const auto& b = r.extra["offload_bytes"];
      fmt::format_to(to, "; per step out {:.3f}/{:.3f}, back {:.3f}/{:.3f}", b["d2h"]["measured"].get<double>() / scale,
                     b["d2h"]["theory"].get<double>() / scale, b["h2d"]["measured"].get<double>() / scale,
                     b["h2d"]["theory"].get<double>() / scale);
    }
    fmt::format_to(to, "\n");
  }
  return out;
}

std::string render_torch_ratios(const std::vector<Result>& ratios) {
  std::string out;
  auto to = std::back_inserter(out);
  fmt::format_to(to, "\nagainst torch (tokens/s ours ÷ torch; loss after every step)\n");
  for (const Result& r : ratios) {
    if (r.metrics.empty()) {
      fmt::format_to(to, "{:<44} {}: {}\n", r.key.substr(6), status_name(r.status), r.reason);
      continue;
    }
    fmt::format_to(to, "{:<44} {:>7.3f}x  loss Δ {:.2e} (tolerance {:.1e}) {}\n", r.key.substr(6), *r.metrics[0].value,
                   r.extra["loss_max_rel_diff"].get<double>(), r.extra["loss_tolerance"].get<double>(),
                   status_name(r.status));
  }
  return out;
}

}  // namespace gcb::report
