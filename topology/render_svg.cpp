// A self-contained SVG drawing of a topology for the HTML report: one box per NUMA node holding
// its GPUs (top row) and NICs (bottom row), the NVLink fabric as a bar above, and PIX/PXB links
// as edges labelled with their path type. No scripts, no external fonts or styles.
#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "reports/escape.hpp"
#include "topology/detail.hpp"
#include "topology/render_graph.hpp"
#include "topology/topology.hpp"

namespace gcb::topo {
namespace {

constexpr int kDeviceW = 170, kDeviceH = 44, kGap = 16, kPad = 16;
constexpr int kNumaTitleH = 28, kRowGap = 70, kNumaGap = 30, kTopBand = 80, kMargin = 20;

struct Point {
  int x = 0, y = 0;
};

std::string text(int x, int y, std::string_view s, std::string_view extra = "") {
  return fmt::format("<text x=\"{}\" y=\"{}\"{}>{}</text>\n", x, y, extra, xml_escape(s));
}

// GPUs in index order, then each NIC under the first GPU it is PIX/PXB to, so that the short
// edges stay short; NICs close to no GPU go last.
std::vector<std::size_t> ordered_for_drawing(const Topology& topo, const std::vector<std::size_t>& devices) {
  const std::size_t g = topo.gpus.size();
  std::vector<std::size_t> gpus, nics;
  for (const std::size_t d : devices) (d < g ? gpus : nics).push_back(d);
  const auto anchor = [&](std::size_t nic) {
    for (std::size_t i = 0; i < gpus.size(); ++i) {
      const PathType t = topo.link(gpus[i], nic).type;
      if (t == PathType::PIX || t == PathType::PXB) return i;
    }
    return gpus.size();
  };
  std::stable_sort(nics.begin(), nics.end(), [&](std::size_t a, std::size_t b) { return anchor(a) < anchor(b); });
  gpus.insert(gpus.end(), nics.begin(), nics.end());
  return gpus;
}

}  // namespace

std::string render_svg(const Topology& topo) {
  const detail::GraphView view = detail::graph_view(topo);
  const std::size_t g = topo.gpus.size();

  // Layout: NUMA boxes left to right; inside, GPUs on the first row and NICs on the second.
  std::map<std::size_t, Point> center;  // device -> centre of its box
  std::string numa_boxes, boxes;
  int x = kMargin;
  const int numa_y = kMargin + kTopBand;
  const int numa_h = kNumaTitleH + kDeviceH + kRowGap + kDeviceH + 2 * kPad;
  for (const auto& [numa, devices] : view.devices_by_numa) {
    const auto gpus = std::count_if(devices.begin(), devices.end(), [&](std::size_t d) { return d < g; });
    const auto nics = static_cast<std::ptrdiff_t>(devices.size()) - gpus;
    const int columns = static_cast<int>(std::max<std::ptrdiff_t>({gpus, nics, 1}));
    const int numa_w = 2 * kPad + columns * kDeviceW + (columns - 1) * kGap;
    numa_boxes += fmt::format(
        "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" rx=\"8\" "
        "fill=\"#f4f6fa\" stroke=\"#8a94a6\"/>\n",
        x, numa_y, numa_w, numa_h);
    numa_boxes += text(x + kPad, numa_y + 19, detail::numa_title(topo, numa), " font-weight=\"bold\"");
    int gpu_col = 0, nic_col = 0;
    for (const std::size_t d : ordered_for_drawing(topo, devices)) {
      const bool is_gpu = d < g;
      const int col = is_gpu ? gpu_col++ : nic_col++;
      const int bx = x + kPad + col * (kDeviceW + kGap);
      const int by = numa_y + kNumaTitleH + kPad + (is_gpu ? 0 : kDeviceH + kRowGap);
      center[d] = {bx + kDeviceW / 2, by + kDeviceH / 2};
      boxes += fmt::format(
          "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" rx=\"4\" "
          "fill=\"{}\" stroke=\"#4a5568\"/>\n",
          bx, by, kDeviceW, kDeviceH, is_gpu ? "#d9f2d9" : "#dce8fa");
      boxes += text(bx + 8, by + 18, topo.device_label(d), " font-weight=\"bold\"");
      const std::string caption = detail::device_caption(topo, d);
      const std::string detail_line =
          is_gpu && topo.gpus[d].name.empty() ? topo.gpus[d].bus_id : caption.substr(caption.find(' ') + 1);
      boxes += text(bx + 8, by + 35, detail_line.substr(0, 26), " font-size=\"11\"");
    }
    x += numa_w + kNumaGap;
  }
  const int width = std::max(x - kNumaGap + kMargin, 300);
  const int height = numa_y + numa_h + kMargin;

  std::string edges;
  if (view.nvlink_hub > 0) {
    const int bar_y = kMargin + 10;
    edges += fmt::format(
        "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"28\" rx=\"6\" "
        "fill=\"#76b900\"/>\n",
        kMargin, bar_y, width - 2 * kMargin);
    edges += text(kMargin + 10, bar_y + 19, fmt::format("NVLink fabric: NV{} between every GPU pair", view.nvlink_hub),
                  " fill=\"white\" font-weight=\"bold\"");
    for (std::size_t d = 0; d < g; ++d)
      edges += fmt::format(
          "<line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\" stroke=\"#76b900\" "
          "stroke-width=\"3\"/>\n",
          center[d].x, bar_y + 28, center[d].y - kDeviceH / 2);
  }
  for (const detail::GraphEdge& e : view.edges) {
    const Point a = center[e.a];
    const Point b = center[e.b];
    const bool nv = e.link.type == PathType::NV;
    edges += fmt::format(
        "<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"{}\" "
        "stroke-width=\"{}\"/>\n",
        a.x, a.y, b.x, b.y, nv ? "#76b900" : "#2b6cb0", nv ? 3 : 2);
    edges += text((a.x + b.x) / 2 + 4, (a.y + b.y) / 2, to_string(e.link), " font-size=\"11\" fill=\"#1a202c\"");
  }

  std::string out = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" "
      "viewBox=\"0 0 {0} {1}\" font-family=\"Helvetica, Arial, sans-serif\" font-size=\"13\">\n",
      width, height);
  out += fmt::format("<title>{}</title>\n",
                     xml_escape(fmt::format("Topology {} ({} GPUs, {} NICs)", topo.hostname, g, topo.nics.size())));
  // NUMA boxes, then edges, then devices on top of the line ends.
  out += numa_boxes + edges + boxes + "</svg>\n";
  return out;
}

}  // namespace gcb::topo
