// Pure arithmetic and rendering of `gcbench p2p`: expected link rates, % of expected, the
// exceeds-the-link warning, and src × dst matrices built from results alone.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>

#include "bench/p2p/p2p.hpp"
#include "core/size.hpp"
#include "reports/render.hpp"
#include "reports/specs.hpp"

namespace gcb::bench {

LinkRate nvlink_rate(int links, double per_link_gbps) {
  // Bonded links × per-link rate per direction (NVIDIA H100 datasheet:
  // NVLink v2–v4 25 GB/s per link per direction, v5 doubles; H100 SXM 18 × 25 = 450 GB/s).
  if (links <= 0 || !(per_link_gbps > 0)) return {};
  return {links * per_link_gbps, fmt::format("nvlink:{}x{:g}GB/s", links, per_link_gbps)};
}

LinkRate pcie_rate(int gen, int width) {
  // Gen × width after encoding, per direction (specs.hpp pcie_gbps; PCI-SIG PCIe base specs).
  const auto g = pcie_gbps(gen, width);
  if (!g) return {};
  return {*g, fmt::format("pcie:gen{} x{}", gen, width)};
}

LinkRate slower(const LinkRate& a, const LinkRate& b) {
  if (!a.gbps || !b.gbps) return {};  // one end unknown: the path is unknown
  return *a.gbps <= *b.gbps ? a : b;
}

LinkRate network_rate(double port_gbit, const std::string& name) {
  // Port rate in Gb/s (1e9 bit/s) / 8 = GB/s per direction (4x NDR 400 Gb/s = 50 GB/s, §6.1).
  if (!(port_gbit > 0)) return {};
  return {port_gbit / 8, fmt::format("net:{} {:g}Gb/s", name, port_gbit)};
}

std::optional<double> percent_of_expected(double measured_gbps, const LinkRate& expected) {
  if (!expected.gbps || !(*expected.gbps > 0)) return std::nullopt;
  return measured_gbps / *expected.gbps * 100;
}

std::string exceeds_link_warning(double measured_gbps, const LinkRate& expected) {
  const auto pct = percent_of_expected(measured_gbps, expected);
  if (!pct || *pct <= 100) return {};
  return fmt::format(
      "measured {:.2f} GB/s exceeds the link rate {:.2f} GB/s ({}) by {:.1f} %: the link guess, "
      "caching or the timer is wrong",
      measured_gbps, *expected.gbps, expected.source, *pct - 100);
}

nlohmann::json link_extra(double measured_gbps, const LinkRate& expected) {
  nlohmann::json j = nlohmann::json::object();
  const auto pct = percent_of_expected(measured_gbps, expected);
  if (!pct) return j;
  j["expected_gbps"] = *expected.gbps;
  j["expected_source"] = expected.source;
  j["percent_of_expected"] = *pct;
  if (auto w = exceeds_link_warning(measured_gbps, expected); !w.empty()) j["warning"] = w;
  return j;
}

namespace {

bool is_pair_result(const Result& r) {
  return r.family() == "p2p" && r.params.contains("src") && r.params.contains("dst") &&
         r.params.at("src").is_number_integer() && r.params.at("dst").is_number_integer();
}

// Everything that makes a matrix: the key and every param except src/dst.
std::string group_of(const Result& r) {
  nlohmann::json p = r.params;
  p.erase("src");
  p.erase("dst");
  return r.key + " " + p.dump();
}

// Two lines: the key, the unit and how to read the matrix; then the params that made it, wrapped
// at 100 columns (on one line they once ran to 170).
std::string title_of(const Result& r, const std::string& unit) {
  nlohmann::json p = r.params;
  p.erase("src");
  p.erase("dst");
  std::vector<std::string> parts;
  for (const auto& [k, v] : p.items()) {
    if (k == "bytes" && v.is_number())
      parts.push_back(fmt::format("{} {}", k, format_bytes(v.get<double>())));
    else
      parts.push_back(fmt::format("{} {}", k, v.is_string() ? v.get<std::string>() : v.dump()));
  }
  // A latency from a ping-pong is one-way; the title says so and how (its model.one_way).
  const std::string what = r.model.contains("one_way") && r.model.at("one_way").is_string()
                               ? fmt::format("{} one-way = {}", unit, r.model.at("one_way").get<std::string>())
                               : unit;
  std::string t = fmt::format("{} [{}], row = src, column = dst", r.key, what);
  std::string line;
  for (size_t i = 0; i < parts.size(); ++i) {
    const std::string piece = parts[i] + (i + 1 < parts.size() ? "," : "");
    if (!line.empty() && 2 + line.size() + 1 + piece.size() > 100) {
      t += "\n  " + line;
      line.clear();
    }
    line += (line.empty() ? "" : " ") + piece;
  }
  if (!line.empty()) t += "\n  " + line;
  return t;
}

std::string cell_of(const Result& r, double scale) {
  switch (r.status) {
    case Status::waived: return "W";
    case Status::error: return "E";
    case Status::fail: return "F";
    case Status::pass: break;
  }
  if (r.metrics.empty() || !r.metrics.front().value) return "n/a";
  return fmt::format("{:.2f}", *r.metrics.front().value * scale);
}

}  // namespace

std::string render_p2p_view(const std::vector<Result>& results) {
  std::vector<Result> rest;
  for (const auto& r : results)
    if (!is_pair_result(r)) rest.push_back(r);
  // Cases not run here (device pairs on a host without GPUs, …): their names under each reason,
  // once, where a table gave each a row of "-" and its reason again.
  std::vector<Result> ran;
  std::vector<std::pair<std::string, std::vector<std::pair<std::string, int>>>> waived;  // reason: (case, count)
  for (const Result& r : rest) {
    if (r.status != Status::waived) {
      ran.push_back(r);
      continue;
    }
    auto reason = std::find_if(waived.begin(), waived.end(), [&](const auto& w) { return w.first == r.reason; });
    if (reason == waived.end()) reason = waived.insert(waived.end(), {r.reason, {}});
    const std::string name = r.key.substr(std::min(r.key.size(), r.family().size() + 1));
    auto c = std::find_if(reason->second.begin(), reason->second.end(), [&](const auto& x) { return x.first == name; });
    if (c == reason->second.end()) {
      reason->second.emplace_back(name, 1);
    } else {
      ++c->second;
    }
  }
  std::string out = render_p2p_matrices(results) + (ran.empty() ? std::string() : render_console(ran));
  if (!waived.empty()) {
    out += fmt::format("\np2p: {} case(s) waived (not run here)\n", rest.size() - ran.size());
    for (const auto& [reason, cases] : waived) {
      std::vector<std::string> names;
      for (const auto& [name, n] : cases) names.push_back(n > 1 ? fmt::format("{} ×{}", name, n) : name);
      out += fmt::format("  {}\n    {}\n", fmt::join(names, ", "), reason);
    }
  }
  return out;
}

std::string render_p2p_matrices(const std::vector<Result>& results) {
  struct Matrix {
    const Result* first = nullptr;
    std::map<std::pair<int, int>, const Result*> cells;
    int size = 0;
  };
  std::vector<std::string> order;
  std::map<std::string, Matrix> groups;
  for (const auto& r : results) {
    if (!is_pair_result(r)) continue;
    const std::string g = group_of(r);
    auto [it, inserted] = groups.try_emplace(g);
    if (inserted) order.push_back(g);
    Matrix& m = it->second;
    if (!m.first) m.first = &r;
    const int s = r.params.at("src").get<int>(), d = r.params.at("dst").get<int>();
    m.cells[{s, d}] = &r;
    m.size = std::max({m.size, s + 1, d + 1});
  }
  std::string out;
  for (const auto& g : order) {
    const Matrix& m = groups.at(g);
    std::string unit = "-";
    for (const auto& [pair, r] : m.cells)
      if (!r->metrics.empty()) {
        unit = r->metrics.front().unit;
        break;
      }
    // Latencies of 10 µs and more in µs (a loaded host's rank ping-pong read 101296.88 ns).
    double scale = 1;
    if (unit == "ns") {
      double largest = 0;
      for (const auto& [pair, r] : m.cells)
        if (r->status == Status::pass && !r->metrics.empty() && r->metrics.front().value)
          largest = std::max(largest, *r->metrics.front().value);
      if (largest >= 1e4) {
        unit = "µs";
        scale = 1e-3;
      }
    }
    out += "\n" + title_of(*m.first, unit) + "\n";
    out += fmt::format("{:>8}", "src\\dst");
    for (int d = 0; d < m.size; ++d) out += fmt::format("{:>10}", d);
    out += "\n";
    for (int s = 0; s < m.size; ++s) {
      out += fmt::format("{:>8}", s);
      for (int d = 0; d < m.size; ++d) {
        const auto it = m.cells.find({s, d});
        out += fmt::format("{:>10}", it == m.cells.end() ? "-" : cell_of(*it->second, scale));
      }
      out += "\n";
    }
    // Warnings and waived reasons once per matrix, so a W or an excessive value is explained.
    std::map<std::string, int> notes;
    for (const auto& [pair, r] : m.cells) {
      if (r->status == Status::waived || r->status == Status::error)
        ++notes[fmt::format("{}: {}", status_name(r->status), r->reason)];
      if (r->extra.contains("warning"))
        ++notes[fmt::format("warning {}->{}: {}", pair.first, pair.second, r->extra.at("warning").get<std::string>())];
    }
    for (const auto& [note, n] : notes) out += fmt::format("  {}{}\n", note, n > 1 ? fmt::format(" (x{})", n) : "");
  }
  return out;
}

}  // namespace gcb::bench
