// ComputeModel (compute_model.hpp): seconds of a GEMM or attention call from calibrated rates interpolated by shape, or
// a stated efficiency × peak without them, and of element-wise work on a roofline.
#include "models/planner/compute_model.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include "kernels/attention/attention_shape.hpp"

namespace gcb::models::planner {
namespace {

constexpr size_t kNeighbours = 4;

struct RatePoint {
  std::vector<double> at;  // log2 of the dimensions
  double rate = 0;         // FLOP/s
};

// Geometric inverse-squared-distance mean of the rates of the nearest points; an exact match
// (distance 0) averages the matching points.
double interpolate(const std::vector<RatePoint>& pts, const std::vector<double>& q) {
  std::vector<std::pair<double, double>> dist;  // squared distance, log rate
  for (const RatePoint& p : pts) {
    double d2 = 0;
    for (size_t i = 0; i < q.size(); ++i) d2 += (p.at[i] - q[i]) * (p.at[i] - q[i]);
    dist.emplace_back(d2, std::log(p.rate));
  }
  std::sort(dist.begin(), dist.end());
  double exact_sum = 0;
  int exact = 0;
  for (const auto& [d2, lr] : dist) {
    if (d2 > 1e-12) break;
    exact_sum += lr;
    ++exact;
  }
  if (exact > 0) return std::exp(exact_sum / exact);
  double wsum = 0, lsum = 0;
  for (size_t i = 0; i < std::min(kNeighbours, dist.size()); ++i) {
    const double w = 1.0 / dist[i].first;
    wsum += w;
    lsum += w * dist[i].second;
  }
  return std::exp(lsum / wsum);
}

double log2d(double v) { return std::log2(std::max(v, 1.0)); }

}  // namespace

double AttnShapeCall::flops() const {
  const kernels::attn::AttnShape s{batch, heads, seq, head_dim, causal};
  return backward ? kernels::attn::fa_backward_flops(s) : kernels::attn::fa_forward_flops(s);
}

ComputeModel::ComputeModel(double peak_flops, double efficiency, double memory_bandwidth, Calibration cal)
    : peak_(peak_flops), efficiency_(efficiency), memory_bandwidth_(memory_bandwidth), cal_(std::move(cal)) {}

double ComputeModel::gemm_seconds(const GemmShape& s) const {
  if (s.m <= 0 || s.n <= 0 || s.k <= 0) return 0.0;
  if (const auto it = gemm_cache_.find(s); it != gemm_cache_.end()) return it->second;
  const double flops = 2.0 * static_cast<double>(s.m) * static_cast<double>(s.n) * static_cast<double>(s.k);
  double rate = efficiency_ * peak_;
  if (!cal_.gemm.empty()) {
    std::vector<RatePoint> pts;
    for (const GemmPoint& p : cal_.gemm) {
      const double f = 2.0 * static_cast<double>(p.m) * static_cast<double>(p.n) * static_cast<double>(p.k);
      pts.push_back(
          {{log2d(static_cast<double>(p.m)), log2d(static_cast<double>(p.n)), log2d(static_cast<double>(p.k))},
           f / p.seconds});
    }
    rate = interpolate(
        pts, {log2d(static_cast<double>(s.m)), log2d(static_cast<double>(s.n)), log2d(static_cast<double>(s.k))});
  }
  const double t = rate > 0 ? flops / rate : 0.0;
  gemm_cache_.emplace(s, t);
  return t;
}

double ComputeModel::attention_seconds(const AttnShapeCall& a) const {
  if (const auto it = attn_cache_.find(a); it != attn_cache_.end()) return it->second;
  double rate = efficiency_ * peak_;
  std::vector<RatePoint> pts;
  for (const AttnPoint& p : cal_.attn) {
    if (p.causal != a.causal || p.backward != a.backward) continue;
    pts.push_back(
        {{log2d(static_cast<double>(p.batch) * p.heads), log2d(p.seq), log2d(p.head_dim)}, p.flops / p.seconds});
  }
  if (!pts.empty())
    rate = interpolate(pts, {log2d(static_cast<double>(a.batch) * a.heads), log2d(a.seq), log2d(a.head_dim)});
  const double t = rate > 0 ? a.flops() / rate : 0.0;
  attn_cache_.emplace(a, t);
  return t;
}

double ComputeModel::elementwise_seconds(double bytes) const {
  return memory_bandwidth_ > 0 ? bytes / memory_bandwidth_ : 0.0;
}

double ComputeModel::elementwise_seconds(const EwCall& c) const {
  const double ceiling = shared_.ceiling[static_cast<size_t>(c.op)];
  const double in_core = ceiling > 0 ? c.elements / ceiling : 0.0;
  return c.count * std::max(elementwise_seconds(c.bytes), in_core);
}

double ComputeModel::elementwise_seconds(const std::vector<EwCall>& calls) const {
  double t = 0;
  for (const EwCall& c : calls) t += elementwise_seconds(c);
  return t;
}

}  // namespace gcb::models::planner
