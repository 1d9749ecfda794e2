// Parser for `nvidia-smi topo -m` text as found in logs and bug reports: tab- or space-separated,
// header possibly ANSI-underlined, with or without the NIC legend and the affinity columns
// (nvidia-smi topo -m, NVIDIA nvidia-smi docs). Text around the matrix is ignored.
#include <algorithm>
#include <map>
#include <optional>

#include <fmt/format.h>

#include "core/error.hpp"
#include "topology/detail.hpp"
#include "topology/topology.hpp"

namespace gcb::topo {
namespace {

using detail::split_whitespace;

// The trailing columns. Their labels contain spaces, so the header is tokenized by these known
// labels and only the device part by whitespace.
enum class Extra { cpu_affinity, numa_affinity, gpu_numa_id };
constexpr std::pair<std::string_view, Extra> kExtraLabels[] = {
    {"CPU Affinity", Extra::cpu_affinity},
    {"NUMA Affinity", Extra::numa_affinity},
    {"GPU NUMA ID", Extra::gpu_numa_id},
};

struct Header {
  std::vector<std::string> devices;  // "GPU0", "NIC1" or old-style "mlx5_0"
  std::vector<Extra> extras;         // in header order
};

bool is_link_cell(const std::string& token) {
  try {
    parse_link(token);
    return true;
  } catch (const UsageError&) {
    return false;
  }
}

// The header is the line that starts with GPU0 (or NIC0 on a GPU-less box) and whose next token
// is another label, not a path cell as in the GPU0 row.
bool is_header(const std::vector<std::string>& tokens) {
  if (tokens.empty() || (tokens[0] != "GPU0" && tokens[0] != "NIC0")) return false;
  return tokens.size() == 1 || !is_link_cell(tokens[1]);
}

Header parse_header(const std::string& line) {
  Header header;
  std::size_t device_end = line.size();
  std::vector<std::pair<std::size_t, Extra>> found;
  for (const auto& [label, extra] : kExtraLabels) {
    const std::size_t at = line.find(label);
    if (at == std::string::npos) continue;
    found.emplace_back(at, extra);
    device_end = std::min(device_end, at);
  }
  std::sort(found.begin(), found.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  for (const auto& f : found) header.extras.push_back(f.second);
  header.devices = split_whitespace(std::string_view(line).substr(0, device_end));
  return header;
}

struct Row {
  std::vector<Link> cells;
  std::vector<std::string> extras;
};

int parse_numa(const std::string& value) {
  // "0" normally; a range such as "0-1" keeps its first node; "N/A" and empty -> unknown.
  if (value.empty() || value == "N/A") return -1;
  const auto cpus = detail::cpulist_to_cpus(value);
  return cpus.empty() ? -1 : cpus.front();
}

}  // namespace

Topology parse_nvidia_smi_topo(const std::string& raw_text) {
  const std::vector<std::string> lines = detail::split_lines(detail::strip_ansi(raw_text));
  // The header is the candidate directly followed by the row of its first column, so that a
  // log line such as "GPU0 is busy" is not taken for it.
  std::size_t at = 0;
  const auto header_at = [&](std::size_t i) {
    const auto tokens = split_whitespace(lines[i]);
    if (!is_header(tokens) || i + 1 >= lines.size()) return false;
    const auto next = split_whitespace(lines[i + 1]);
    return !next.empty() && next[0] == tokens[0];
  };
  while (at < lines.size() && !header_at(at)) ++at;
  if (at == lines.size()) throw UsageError("nvidia-smi topo -m: no matrix header found (a line starting with GPU0)");
  const Header header = parse_header(lines[at]);
  const std::size_t n = header.devices.size();

  std::map<std::string, Row> rows;
  for (++at; at < lines.size(); ++at) {
    const std::vector<std::string> tokens = split_whitespace(lines[at]);
    if (tokens.empty() || tokens[0] == "Legend:") break;
    if (std::find(header.devices.begin(), header.devices.end(), tokens[0]) == header.devices.end())
      throw UsageError(
          fmt::format("nvidia-smi topo -m: line {}: row '{}' is not a column of the "
                      "header",
                      at + 1, tokens[0]));
    if (tokens.size() < n + 1)
      throw UsageError(
          fmt::format("nvidia-smi topo -m: line {}: row {} has {} cells, the header "
                      "has {} devices",
                      at + 1, tokens[0], tokens.size() - 1, n));
    Row row;
    for (std::size_t c = 0; c < n; ++c) {
      try {
        row.cells.push_back(parse_link(tokens[c + 1]));
      } catch (const UsageError& e) {
        throw UsageError(fmt::format("nvidia-smi topo -m: line {}: {}", at + 1, e.what()));
      }
    }
    row.extras.assign(tokens.begin() + static_cast<std::ptrdiff_t>(n + 1), tokens.end());
    if (!rows.emplace(tokens[0], std::move(row)).second)
      throw UsageError(fmt::format("nvidia-smi topo -m: line {}: row {} appears twice", at + 1, tokens[0]));
  }

  // "NIC Legend:" maps NICk columns to device names.
  std::map<std::string, std::string> nic_names;
  for (; at < lines.size(); ++at) {
    if (detail::trim(lines[at]) != "NIC Legend:") continue;
    for (++at; at < lines.size(); ++at) {
      const std::string_view line = detail::trim(lines[at]);
      if (line.empty()) {
        if (nic_names.empty()) continue;
        break;
      }
      const std::size_t colon = line.find(':');
      if (colon == std::string_view::npos) break;
      nic_names[std::string(detail::trim(line.substr(0, colon)))] = std::string(detail::trim(line.substr(colon + 1)));
    }
    break;
  }

  Topology topo;
  topo.source = "nvidia-smi";
  // Columns in header order; the model wants GPUs first, which is also the driver's order.
  std::vector<std::size_t> order;  // model device -> header column
  for (std::size_t c = 0; c < n; ++c) {
    const std::string& label = header.devices[c];
    if (!rows.count(label)) throw UsageError(fmt::format("nvidia-smi topo -m: no row for column {}", label));
    if (const auto index = detail::label_number(label, "GPU")) {
      Gpu gpu;
      gpu.index = *index;
      const Row& row = rows.at(label);
      for (std::size_t e = 0; e < header.extras.size() && e < row.extras.size(); ++e) {
        const std::string& value = row.extras[e];
        switch (header.extras[e]) {
          case Extra::cpu_affinity: gpu.cpu_affinity = value == "N/A" ? "" : value; break;
          case Extra::numa_affinity: gpu.numa_node = parse_numa(value); break;
          case Extra::gpu_numa_id: gpu.gpu_numa_id = parse_numa(value); break;
        }
      }
      topo.gpus.push_back(std::move(gpu));
      order.insert(order.begin() + static_cast<std::ptrdiff_t>(topo.gpus.size() - 1), c);
    } else {
      Nic nic;
      const auto it = nic_names.find(label);
      nic.name = it != nic_names.end() ? it->second : label;
      topo.nics.push_back(std::move(nic));
      order.push_back(c);
    }
  }
  topo.reset_links();
  for (std::size_t a = 0; a < n; ++a)
    for (std::size_t b = 0; b < n; ++b) topo.link(a, b) = rows.at(header.devices[order[a]]).cells[order[b]];

  // NIC NUMA nodes are not printed; a NIC at PIX/PXB/PHB/NODE to a GPU shares its node.
  for (std::size_t k = 0; k < topo.nics.size(); ++k)
    for (std::size_t g = 0; g < topo.gpus.size(); ++g) {
      const PathType t = topo.link(g, topo.gpus.size() + k).type;
      if (t != PathType::SYS && t != PathType::unknown && topo.gpus[g].numa_node >= 0) {
        topo.nics[k].numa_node = topo.gpus[g].numa_node;
        break;
      }
    }
  // NUMA nodes as far as the GPUs' affinity tells.
  for (const Gpu& gpu : topo.gpus) {
    if (gpu.numa_node < 0) continue;
    const bool known =
        std::any_of(topo.numa.begin(), topo.numa.end(), [&](const NumaNode& node) { return node.id == gpu.numa_node; });
    if (!known) topo.numa.push_back({gpu.numa_node, 0, gpu.cpu_affinity});
  }
  std::sort(topo.numa.begin(), topo.numa.end(), [](const NumaNode& a, const NumaNode& b) { return a.id < b.id; });
  return topo;
}

}  // namespace gcb::topo
