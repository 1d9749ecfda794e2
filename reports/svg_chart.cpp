// The SVG chart library (svg_chart.hpp): line charts on linear or log axes with legends and fit curves, bar charts and
// heatmaps, each one self-contained, XML-escaped <svg> string.
#include "reports/svg_chart.hpp"

#include "reports/escape.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <fmt/format.h>

namespace gcb::svg {

namespace {

constexpr int kMarginLeft = 72, kMarginRight = 24, kMarginTop = 34, kMarginBottom = 48;
constexpr int kLegendLine = 16;
constexpr size_t kLegendChars = 90;

// A coordinate; every caller passes a finite one (the scales never overflow), and a value that is
// not finite anyway is drawn at 0 rather than written as "nan" into the document.
std::string px(double v) { return fmt::format("{:.1f}", std::isfinite(v) ? v : 0.0); }

std::string truncated(const std::string& s, size_t n) { return s.size() <= n ? s : s.substr(0, n - 1) + "…"; }

// The visible title is cut to what the width holds at 13 px bold (~8 px a character) with "…";
// the SVG <title>, a reader's tooltip, keeps it whole.
std::string svg_open(int width, int height, const std::string& title) {
  const std::string shown = truncated(title, static_cast<size_t>(std::max(width / 8, 8)));
  return fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} {1}\" role=\"img\" "
      "font-family=\"Helvetica, Arial, sans-serif\" font-size=\"11\">\n<title>{2}</title>\n"
      "<rect x=\"0\" y=\"0\" width=\"{0}\" height=\"{1}\" fill=\"#ffffff\"/>\n"
      "<text x=\"{3}\" y=\"20\" text-anchor=\"middle\" font-size=\"13\" font-weight=\"bold\">{4}</text>\n",
      width, height, xml_escape(title), width / 2, xml_escape(shown));
}

std::string axis_title(const Axis& a) { return a.unit.empty() ? a.label : fmt::format("{} ({})", a.label, a.unit); }

// Data range of one coordinate over the series, skipping values a log axis cannot show.
std::optional<std::pair<double, double>> range_of(const std::vector<Series>& series, bool x, Scale s) {
  double lo = INFINITY, hi = -INFINITY;
  for (const auto& se : series)
    for (const auto& [px_, py_] : se.points) {
      const double v = x ? px_ : py_;
      if (!std::isfinite(v) || (s == Scale::log && v <= 0)) continue;
      lo = std::min(lo, v);
      hi = std::max(hi, v);
    }
  if (lo > hi) return std::nullopt;
  return std::make_pair(lo, hi);
}

// Widens a linear range to include 0 when all data share a sign, and a degenerate one by ±1.
std::pair<double, double> linear_domain(double lo, double hi) {
  if (lo > 0) lo = 0;
  if (hi < 0) hi = 0;
  if (hi == lo) hi = lo + 1;
  return {lo, hi};
}

std::string legend(const std::vector<std::string>& names, const std::vector<bool>& dashed, int x, int y) {
  std::string out;
  for (size_t i = 0; i < names.size(); ++i) {
    const int yy = y + static_cast<int>(i) * kLegendLine;
    out += fmt::format(
        "<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"{}\" stroke-width=\"3\"{}/>"
        "<text x=\"{}\" y=\"{}\">{}</text>\n",
        x, yy - 4, x + 22, yy - 4, series_color(i), dashed[i] ? " stroke-dasharray=\"5,3\"" : "", x + 28, yy,
        xml_escape(truncated(names[i], kLegendChars)));
  }
  return out;
}

std::string cell_label(double v) {
  const double a = std::fabs(v);
  if (a >= 1e6) return fmt::format("{:.3g}", v);  // never hundreds of digits
  if (a >= 100) return fmt::format("{:.0f}", v);
  if (a >= 10) return fmt::format("{:.1f}", v);
  if (a >= 1 || a == 0) return fmt::format("{:.2f}", v);
  return fmt::format("{:.2g}", v);  // two significant digits: 0.0089 and 0.011 stay apart
}

}  // namespace

std::string_view series_color(size_t n) {
  // Tableau 10, then ten more of Tableau 20's lighter and darker tones: a training step's phases
  // and communication kinds (up to ~15 stacked segments) each keep a colour of their own.
  static constexpr std::array<std::string_view, 20> kPalette = {
      "#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac",
      "#a0cbe8", "#ffbe7d", "#8cd17d", "#b6992d", "#f1ce63", "#86bcb6", "#d37295", "#fabfd2", "#d4a6c8", "#79706e"};
  return kPalette[n % kPalette.size()];
}

std::string tick_label(double v, TickFormat f) {
  if (v == 0) return "0";
  const double a = std::fabs(v);
  if (f == TickFormat::bytes) {
    static constexpr std::array<std::pair<double, const char*>, 4> kUnits = {
        {{1099511627776.0, "T"}, {1073741824.0, "G"}, {1048576.0, "M"}, {1024.0, "K"}}};
    for (const auto& [scale, suffix] : kUnits)
      if (a >= scale) return fmt::format("{:.3g}{}", v / scale, suffix);
    return fmt::format("{:.3g}", v);
  }
  static constexpr std::array<std::pair<double, const char*>, 6> kSi = {
      {{1e18, "E"}, {1e15, "P"}, {1e12, "T"}, {1e9, "G"}, {1e6, "M"}, {1e3, "k"}}};
  for (const auto& [scale, suffix] : kSi)
    if (a >= scale) return fmt::format("{:.3g}{}", v / scale, suffix);
  return fmt::format("{:.3g}", v);
}

std::vector<Tick> make_ticks(double lo, double hi, Scale s, TickFormat f) {
  std::vector<Tick> ticks;
  auto add = [&](double v) { ticks.push_back({v, tick_label(v, f)}); };
  if (s == Scale::linear) {
    if (hi <= lo) hi = lo + 1;
    // Byte axes step in whole KiB/MiB/GiB/TiB multiples, so labels read "4G", not "4.66G".
    double unit = 1;
    if (f == TickFormat::bytes)
      while (unit < 1099511627776.0 && std::max(std::fabs(lo), std::fabs(hi)) / (unit * 1024) >= 1) unit *= 1024;
    lo /= unit;
    hi /= unit;
    double raw = (hi - lo) / 6;
    if (!std::isfinite(raw)) raw = hi / 6 - lo / 6;  // the difference overflows near ±1e308
    const double mag = std::pow(10.0, std::floor(std::log10(raw)));
    double step = 10 * mag;
    for (double m : {1.0, 2.0, 5.0})
      if (m * mag >= raw) {
        step = m * mag;
        break;
      }
    const auto first = static_cast<long long>(std::floor(lo / step + 1e-9));
    const auto last = static_cast<long long>(std::ceil(hi / step - 1e-9));
    for (long long i = first; i <= last; ++i) {
      const double v = static_cast<double>(i) * step * unit;
      if (std::isfinite(v)) {
        add(v);
      } else {  // the next round tick is beyond the largest double: the data's own end instead
        add(i < 0 ? lo * unit : hi * unit);
        if (i > 0) break;
      }
    }
    return ticks;
  }
  if (f == TickFormat::bytes) {
    const auto p0 = static_cast<int>(std::floor(std::log2(lo) + 1e-9));
    auto p1 = static_cast<int>(std::ceil(std::log2(hi) - 1e-9));
    if (p1 <= p0) p1 = p0 + 1;
    const int k = std::max(1, (p1 - p0 + 7) / 8);
    for (int p = p0;; p += k) {
      add(std::ldexp(1.0, p));
      if (p >= p1) break;
    }
    return ticks;
  }
  const auto d0 = static_cast<int>(std::floor(std::log10(lo) + 1e-9));
  auto d1 = static_cast<int>(std::ceil(std::log10(hi) - 1e-9));
  if (d1 <= d0) d1 = d0 + 1;
  if (std::log10(hi / lo) < 2) {
    std::vector<double> candidates;
    for (int d = d0; d <= d1; ++d)
      for (double m : {1.0, 2.0, 5.0}) candidates.push_back(m * std::pow(10.0, d));
    size_t first = 0, last = candidates.size() - 1;
    for (size_t i = 0; i < candidates.size(); ++i)
      if (candidates[i] <= lo * (1 + 1e-9)) first = i;
    for (size_t i = candidates.size(); i-- > 0;)
      if (candidates[i] >= hi * (1 - 1e-9)) last = i;
    for (size_t i = first; i <= last; ++i) add(candidates[i]);
    return ticks;
  }
  const int k = std::max(1, (d1 - d0 + 7) / 8);
  for (int d = d0;; d += k) {
    add(std::pow(10.0, d));
    if (d >= d1) break;
  }
  return ticks;
}

double ScaleMap::operator()(double v) const {
  double t;
  if (scale == Scale::log)
    t = (std::log10(v) - std::log10(lo)) / (std::log10(hi) - std::log10(lo));
  else
    t = (v / 2 - lo / 2) / (hi / 2 - lo / 2);  // halves: no overflow near ±1e308
  return px0 + t * (px1 - px0);
}

std::string render_line_chart(const LineChart& c) {
  std::vector<std::string> names;
  std::vector<bool> dashed;
  for (const auto& s : c.series) {
    names.push_back(s.name);
    dashed.push_back(s.dashed);
  }
  const int total_height = c.height + static_cast<int>(names.size()) * kLegendLine + 8;
  std::string out = svg_open(c.width, total_height, c.title);
  const double left = kMarginLeft, right = c.width - kMarginRight, top = kMarginTop, bottom = c.height - kMarginBottom;
  const auto xr = range_of(c.series, true, c.x.scale);
  const auto yr = range_of(c.series, false, c.y.scale);
  out += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"#888888\"/>\n",
                     px(left), px(top), px(right - left), px(bottom - top));
  if (!xr || !yr) {
    out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">no data</text>\n</svg>\n",
                       px((left + right) / 2), px((top + bottom) / 2));
    return out;
  }
  auto [xlo, xhi] = c.x.scale == Scale::linear ? linear_domain(xr->first, xr->second) : *xr;
  auto [ylo, yhi] = c.y.scale == Scale::linear ? linear_domain(yr->first, yr->second) : *yr;
  const auto xt = make_ticks(xlo, xhi, c.x.scale, c.x.format);
  const auto yt = make_ticks(ylo, yhi, c.y.scale, c.y.format);
  const ScaleMap mx{xt.front().value, xt.back().value, c.x.scale, left, right};
  const ScaleMap my{yt.front().value, yt.back().value, c.y.scale, bottom, top};
  for (const auto& t : xt) {
    const double x = mx(t.value);
    out += fmt::format(
        "<line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\" stroke=\"#e3e3e3\"/><text x=\"{0}\" y=\"{3}\" "
        "text-anchor=\"middle\">{4}</text>\n",
        px(x), px(top), px(bottom), px(bottom + 14), xml_escape(t.label));
  }
  for (const auto& t : yt) {
    const double y = my(t.value);
    out += fmt::format(
        "<line x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\" stroke=\"#e3e3e3\"/><text x=\"{3}\" y=\"{4}\" "
        "text-anchor=\"end\">{5}</text>\n",
        px(left), px(y), px(right), px(left - 5), px(y + 4), xml_escape(t.label));
  }
  out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n", px((left + right) / 2),
                     px(bottom + 32), xml_escape(axis_title(c.x)));
  out += fmt::format("<text x=\"14\" y=\"{0}\" text-anchor=\"middle\" transform=\"rotate(-90 14 {0})\">{1}</text>\n",
                     px((top + bottom) / 2), xml_escape(axis_title(c.y)));
  for (size_t i = 0; i < c.series.size(); ++i) {
    const Series& s = c.series[i];
    std::string points;
    std::string markers;
    for (const auto& [x, y] : s.points) {
      if (!std::isfinite(x) || !std::isfinite(y)) continue;
      if ((c.x.scale == Scale::log && x <= 0) || (c.y.scale == Scale::log && y <= 0)) continue;
      const double X = mx(x), Y = my(y);
      points += fmt::format("{},{} ", px(X), px(Y));
      if (s.markers)
        markers += fmt::format("<circle cx=\"{}\" cy=\"{}\" r=\"3\" fill=\"{}\"/>", px(X), px(Y), series_color(i));
    }
    if (s.line && !points.empty()) {
      points.pop_back();
      out += fmt::format("<polyline fill=\"none\" stroke=\"{}\" stroke-width=\"1.8\"{} points=\"{}\"/>\n",
                         series_color(i), s.dashed ? " stroke-dasharray=\"5,3\"" : "", points);
    }
    if (!markers.empty()) out += markers + "\n";
  }
  out += legend(names, dashed, static_cast<int>(left), c.height + 4);
  return out + "</svg>\n";
}

std::string render_bar_chart(const BarChart& c) {
  std::vector<std::string> names;
  for (const auto& s : c.series) names.push_back(s.name);
  const size_t ncat = c.categories.size();
  bool rotate = ncat > 6;
  for (const auto& cat : c.categories) rotate = rotate || cat.size() > 14;
  const int label_room = rotate ? 110 : 20;
  const int plot_bottom = c.height - kMarginBottom - label_room + 20;
  const int total_height = c.height + static_cast<int>(names.size()) * kLegendLine + 8;
  std::string out = svg_open(c.width, total_height, c.title);
  const double right = c.width - kMarginRight, top = kMarginTop, bottom = plot_bottom;
  // A rotated label ends under its bar and runs down-left: the first one needs room left of the
  // plot for its horizontal extent (about 6.2 px per character at 12 px, × cos 35°).
  double left = kMarginLeft;
  if (rotate && ncat > 0) {
    size_t longest = 0;
    for (const auto& cat : c.categories) longest = std::max(longest, std::min<size_t>(cat.size(), 28));
    const double extent = 6.2 * static_cast<double>(longest) * 0.82;
    const double first_center = (right - kMarginLeft) / static_cast<double>(ncat) / 2;
    left = std::max<double>(kMarginLeft, extent - first_center + 4);
  }
  double hi = 0;
  for (size_t k = 0; k < ncat; ++k) {
    double sum = 0;
    for (const auto& s : c.series) {
      if (k >= s.values.size() || !s.values[k] || !std::isfinite(*s.values[k])) continue;
      sum += std::max(0.0, *s.values[k]);
      hi = std::max(hi, *s.values[k]);
    }
    if (c.stacked) hi = std::max(hi, std::min(sum, std::numeric_limits<double>::max()));
  }
  if (hi <= 0) hi = 1;
  const auto yt = make_ticks(0, hi, Scale::linear, c.y.format);
  const ScaleMap my{yt.front().value, yt.back().value, Scale::linear, bottom, top};
  for (const auto& t : yt) {
    const double y = my(t.value);
    out += fmt::format(
        "<line x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\" stroke=\"#e3e3e3\"/><text x=\"{3}\" y=\"{4}\" "
        "text-anchor=\"end\">{5}</text>\n",
        px(left), px(y), px(right), px(left - 5), px(y + 4), xml_escape(t.label));
  }
  out += fmt::format("<text x=\"14\" y=\"{0}\" text-anchor=\"middle\" transform=\"rotate(-90 14 {0})\">{1}</text>\n",
                     px((top + bottom) / 2), xml_escape(axis_title(c.y)));
  const double group = ncat ? (right - left) / static_cast<double>(ncat) : 0;
  const size_t nser = std::max<size_t>(1, c.series.size());
  const double bar = c.stacked ? group * 0.6 : group * 0.8 / static_cast<double>(nser);
  size_t bars = 0;
  for (const auto& s : c.series)
    bars += static_cast<size_t>(std::count_if(s.values.begin(), s.values.end(), [](auto v) { return v.has_value(); }));
  for (size_t k = 0; k < ncat; ++k) {
    const double g0 = left + group * static_cast<double>(k);
    double stack = 0;
    for (size_t i = 0; i < c.series.size(); ++i) {
      const auto& vals = c.series[i].values;
      if (k >= vals.size() || !vals[k] || !std::isfinite(*vals[k])) continue;
      const double v = std::max(0.0, *vals[k]);
      const double x = c.stacked ? g0 + group * 0.2 : g0 + group * 0.1 + bar * static_cast<double>(i);
      const double y1 = my(stack + v), y0 = my(stack);
      out +=
          fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\"><title>{}: {}</title></rect>\n",
                      px(x), px(y1), px(bar), px(std::max(0.0, y0 - y1)), series_color(i), xml_escape(c.series[i].name),
                      xml_escape(cell_label(v)));
      if (!c.stacked && bars <= 24)
        out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" font-size=\"10\">{}</text>\n",
                           px(x + bar / 2), px(y1 - 3), xml_escape(cell_label(v)));
      if (c.stacked) stack += v;
    }
    const double cx = g0 + group / 2;
    if (rotate)
      out += fmt::format("<text x=\"{0}\" y=\"{1}\" text-anchor=\"end\" transform=\"rotate(-35 {0} {1})\">{2}</text>\n",
                         px(cx), px(bottom + 12), xml_escape(truncated(c.categories[k], 28)));
    else
      out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n", px(cx), px(bottom + 14),
                         xml_escape(c.categories[k]));
  }
  out += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\" stroke=\"#888888\"/>\n", px(left), px(bottom),
                     px(right));
  out += legend(names, std::vector<bool>(names.size(), false), static_cast<int>(left), c.height + 4);
  return out + "</svg>\n";
}

std::string render_heatmap(const Heatmap& h) {
  constexpr int kCellW = 60, kCellH = 28, kLeft = 96, kTop = 62;
  const int ncol = static_cast<int>(h.cols.size()), nrow = static_cast<int>(h.rows.size());
  const int width = std::max(kLeft + ncol * kCellW + 20, 320);
  const int height = kTop + nrow * kCellH + 30;
  std::string out = svg_open(width, height, h.title);
  double hi = 0;
  for (const auto& row : h.values)
    for (const auto& v : row)
      if (v && std::isfinite(*v)) hi = std::max(hi, *v);
  out += fmt::format("<text x=\"{}\" y=\"40\" text-anchor=\"middle\">{} →{}</text>\n", kLeft + ncol * kCellW / 2,
                     xml_escape(h.col_label), h.unit.empty() ? "" : xml_escape(" (" + h.unit + ")"));
  out += fmt::format("<text x=\"8\" y=\"{}\">{} ↓</text>\n", kTop - 6, xml_escape(h.row_label));
  for (int j = 0; j < ncol; ++j)
    out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n", kLeft + j * kCellW + kCellW / 2,
                       kTop - 6, xml_escape(truncated(h.cols[static_cast<size_t>(j)], 10)));
  for (int i = 0; i < nrow; ++i) {
    const int y = kTop + i * kCellH;
    out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>\n", kLeft - 6, y + kCellH / 2 + 4,
                       xml_escape(truncated(h.rows[static_cast<size_t>(i)], 14)));
    for (int j = 0; j < ncol; ++j) {
      const auto ui = static_cast<size_t>(i), uj = static_cast<size_t>(j);
      std::optional<double> v;
      if (ui < h.values.size() && uj < h.values[ui].size()) v = h.values[ui][uj];
      const int x = kLeft + j * kCellW;
      if (!v || !std::isfinite(*v)) {
        out += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"#eeeeee\" stroke=\"#ffffff\"/>\n",
                           x, y, kCellW, kCellH);
        continue;
      }
      // White → blue by value / max; text turns white on dark cells.
      const double t = hi > 0 ? std::clamp(*v / hi, 0.0, 1.0) : 0;
      const auto mix = [&](int a, int b) { return static_cast<int>(std::lround(a + (b - a) * t)); };
      const std::string fill = fmt::format("#{:02x}{:02x}{:02x}", mix(0xf7, 0x08), mix(0xfb, 0x51), mix(0xff, 0x9c));
      out += fmt::format(
          "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\" stroke=\"#ffffff\"/><text x=\"{}\" y=\"{}\" "
          "text-anchor=\"middle\" fill=\"{}\">{}</text>\n",
          x, y, kCellW, kCellH, fill, x + kCellW / 2, y + kCellH / 2 + 4, t > 0.6 ? "#ffffff" : "#000000",
          xml_escape(cell_label(*v)));
      if (ui < h.marked.size() && uj < h.marked[ui].size() && h.marked[ui][uj])
        out += fmt::format(
            "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"#d62728\" "
            "stroke-width=\"3\"/>\n",
            x + 1, y + 1, kCellW - 2, kCellH - 2);
    }
  }
  return out + "</svg>\n";
}

}  // namespace gcb::svg
