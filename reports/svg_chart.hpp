// A small chart library for the HTML report: line charts (linear or log axes, several series,
// legend, optional dashed fit curves and marker-only series), bar charts (grouped or stacked)
// and heatmaps (src × dst matrices with values in the cells). Every function is pure and returns
// one self-contained <svg> element as a string; all text is XML-escaped. No JavaScript.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gcb::svg {

enum class Scale { linear, log };
// How tick labels read: plain numbers with SI suffixes (k, M, G, T) or byte sizes with binary
// suffixes (4K, 1M, 2G — 1024-based, as gcbench reads sizes).
enum class TickFormat { number, bytes };

struct Tick {
  double value = 0;
  std::string label;
};

// Tick label of one value: number → "0.5", "20", "1.5k", "10G"; bytes → "512", "4K", "1M".
std::string tick_label(double v, TickFormat f);

// Tick positions covering [lo, hi] (lo ≤ hi, both > 0 for log). Linear: 1/2/5×10^k steps, at
// most about 8 ticks, starting at a multiple of the step ≤ lo. Log with number format: decades
// (plus 2 and 5 within a span of under two decades); log with bytes format: powers of two every
// k doublings so that at most 9 ticks appear. The first tick is ≤ lo and the last ≥ hi, so the
// axis domain is [first, last].
std::vector<Tick> make_ticks(double lo, double hi, Scale s, TickFormat f);

// Maps a data value to a pixel coordinate: linear, or linear in log10(v) for Scale::log.
struct ScaleMap {
  double lo = 0, hi = 1;  // data domain
  Scale scale = Scale::linear;
  double px0 = 0, px1 = 1;  // pixel range (px1 < px0 for a y axis)
  double operator()(double v) const;
};

struct Axis {
  std::string label;  // "message size"
  std::string unit;   // "B", "GB/s"; shown as "label (unit)"
  Scale scale = Scale::linear;
  TickFormat format = TickFormat::number;
};

struct Series {
  std::string name;
  std::vector<std::pair<double, double>> points;  // (x, y); non-positive values are skipped on log axes
  bool line = true;                               // connect the points
  bool markers = true;                            // draw a dot at every point
  bool dashed = false;                            // fit curves and ceilings
};

struct LineChart {
  std::string title;
  Axis x, y;
  std::vector<Series> series;
  int width = 720, height = 380;
};

struct BarSeries {
  std::string name;
  std::vector<std::optional<double>> values;  // one per category; nullopt = no bar
};

struct BarChart {
  std::string title;
  std::vector<std::string> categories;
  std::vector<BarSeries> series;
  bool stacked = false;  // false: grouped side by side
  Axis y;
  int width = 720, height = 380;
};

struct Heatmap {
  std::string title;
  std::string row_label = "src", col_label = "dst", unit;
  std::vector<std::string> rows, cols;
  std::vector<std::vector<std::optional<double>>> values;  // [row][col]; nullopt = empty cell
  std::vector<std::vector<bool>> marked;                   // [row][col]: outlined in red (e.g. a culprit)
};

// The nth colour of the palette (Tableau 10, cycling).
std::string_view series_color(size_t n);

std::string render_line_chart(const LineChart& c);
std::string render_bar_chart(const BarChart& c);
std::string render_heatmap(const Heatmap& h);

}  // namespace gcb::svg
