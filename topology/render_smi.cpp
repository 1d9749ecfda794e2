// Renders a Topology as `nvidia-smi topo -m` prints it: tab-separated cells (" X " on the
// diagonal), the three affinity columns on GPU rows, then the legend and NIC legend verbatim
// (nvidia-smi topo -m, NVIDIA nvidia-smi docs). With tabs=false the tabs are expanded to 8-column
// stops, which is how the captures in bug reports (and our fixture) show them.
#include <utility>

#include <fmt/format.h>

#include "topology/detail.hpp"
#include "topology/topology.hpp"

namespace gcb::topo {
namespace {

constexpr std::size_t kTabStop = 8;

constexpr const char* kLegend =
    "Legend:\n"
    "\n"
    "  X    = Self\n"
    "  SYS  = Connection traversing PCIe as well as the SMP interconnect between NUMA nodes "
    "(e.g., QPI/UPI)\n"
    "  NODE = Connection traversing PCIe as well as the interconnect between PCIe Host Bridges "
    "within a NUMA node\n"
    "  PHB  = Connection traversing PCIe as well as a PCIe Host Bridge (typically the CPU)\n"
    "  PXB  = Connection traversing multiple PCIe bridges (without traversing the PCIe Host "
    "Bridge)\n"
    "  PIX  = Connection traversing at most a single PCIe bridge\n"
    "  NV#  = Connection traversing a bonded set of # NVLinks\n";

// Writes one line, tracking the column so that tabs can be emitted or expanded identically.
class LineWriter {
 public:
  explicit LineWriter(bool tabs) : tabs_(tabs) {}

  void text(std::string_view s) {
    line_ += s;
    column_ += s.size();
  }
  // One tab, then more until `column` is reached: how the driver's "\t" separators land.
  void tab_to(std::size_t column) {
    do {
      const std::size_t next = (column_ / kTabStop + 1) * kTabStop;
      line_ += tabs_ ? std::string("\t") : std::string(next - column_, ' ');
      column_ = next;
    } while (column_ < column);
  }
  std::size_t column() const { return column_; }
  std::string take() {
    column_ = 0;
    return std::exchange(line_, {});
  }

 private:
  bool tabs_;
  std::string line_;
  std::size_t column_ = 0;
};

std::string affinity_or_na(const std::string& value) { return value.empty() ? "N/A" : value; }
std::string numa_or_na(int node) { return node < 0 ? "N/A" : fmt::format("{}", node); }

}  // namespace

std::string render_nvidia_smi(const Topology& topo, const SmiRenderOptions& options) {
  const std::size_t n = topo.device_count();
  const bool has_gpus = !topo.gpus.empty();
  std::string out;
  if (n == 0) return kLegend;  // no devices, no matrix (the driver would refuse to run)

  // Header: device labels, then the affinity labels; remember where each column starts.
  LineWriter w(options.tabs);
  std::vector<std::size_t> column(n + 1);
  w.tab_to(0);  // the header starts with one separator, above the row labels
  for (std::size_t d = 0; d < n; ++d) {
    if (d > 0) w.tab_to(0);
    column[d] = w.column();
    w.text(topo.device_label(d));
  }
  std::size_t extra_columns[3] = {0, 0, 0};
  if (has_gpus) {
    constexpr const char* kExtraLabels[] = {"CPU Affinity", "NUMA Affinity", "GPU NUMA ID"};
    for (std::size_t e = 0; e < 3; ++e) {
      w.tab_to(0);
      extra_columns[e] = w.column();
      w.text(kExtraLabels[e]);
    }
  }
  std::string header = w.take();
  if (options.ansi_underline) {
    // The driver underlines the labels, not the leading separator.
    const std::size_t first = header.find_first_not_of(" \t");
    header = header.substr(0, first) + "\x1b[4m" + header.substr(first) + "\x1b[0m";
  }
  out += header + "\n";

  for (std::size_t a = 0; a < n; ++a) {
    w.text(topo.device_label(a));
    for (std::size_t b = 0; b < n; ++b) {
      w.tab_to(column[b]);
      const Link link = topo.link(a, b);
      w.text(link.type == PathType::X ? " X " : to_string(link));
    }
    if (a < topo.gpus.size()) {
      const Gpu& gpu = topo.gpus[a];
      w.tab_to(extra_columns[0]);
      w.text(affinity_or_na(gpu.cpu_affinity));
      w.tab_to(extra_columns[1]);
      w.text(numa_or_na(gpu.numa_node));
      w.tab_to(extra_columns[2]);
      w.text(numa_or_na(gpu.gpu_numa_id));
    }
    out += w.take() + "\n";
  }

  out += "\n";
  out += kLegend;
  if (!topo.nics.empty()) {
    out += "\nNIC Legend:\n\n";
    for (std::size_t k = 0; k < topo.nics.size(); ++k) out += fmt::format("  NIC{}: {}\n", k, topo.nics[k].name);
    out += "\n";
  }
  return out;
}

}  // namespace gcb::topo
