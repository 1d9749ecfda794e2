// ParamLayout (param_layout.hpp): each GPT-2 tensor's span in the flat parameter vector, grouped into units (0 =
// embedding, 1 + l = layer l), and init_range, the seeded initialization of any range of a unit.
#include "models/param_layout.hpp"

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

#include "core/size.hpp"

namespace gcb::models {
namespace {

enum class Init : uint8_t { normal, residual_normal, zero, one };

struct TensorSpan {
  size_t offset, size;
  Init init;
};

}  // namespace

ParamLayout::ParamLayout(const GptConfig& c) : cfg_(c) {
  validate(c);
  const size_t C = sz(c.hidden);
  size_t o = 0;
  auto take = [&o](size_t n) { return std::exchange(o, o + n); };
  embed_.wte = take(sz(c.vocab) * C);
  embed_.wpe = take(sz(c.seq) * C);
  embed_.lnfw = take(C);
  embed_.lnfb = take(C);
  embed_.size = o;
  o = 0;
  layer_.ln1w = take(C);
  layer_.ln1b = take(C);
  layer_.qkvw = take(3 * C * C);
  layer_.qkvb = take(3 * C);
  layer_.projw = take(C * C);
  layer_.projb = take(C);
  layer_.ln2w = take(C);
  layer_.ln2b = take(C);
  layer_.fcw = take(4 * C * C);
  layer_.fcb = take(4 * C);
  layer_.fcprojw = take(4 * C * C);
  layer_.fcprojb = take(C);
  layer_.size = o;
}

void ParamLayout::init_range(Backend& be, View dst, int unit, size_t begin, size_t end, uint64_t seed) const {
  const size_t C = sz(cfg_.hidden);
  std::vector<TensorSpan> spans;
  if (unit == 0) {
    const auto& e = embed_;
    spans = {{e.wte, sz(cfg_.vocab) * C, Init::normal},
             {e.wpe, sz(cfg_.seq) * C, Init::normal},
             {e.lnfw, C, Init::one},
             {e.lnfb, C, Init::zero}};
  } else {
    const auto& l = layer_;
    spans = {{l.ln1w, C, Init::one},
             {l.ln1b, C, Init::zero},
             {l.qkvw, 3 * C * C, Init::normal},
             {l.qkvb, 3 * C, Init::zero},
             {l.projw, C * C, Init::residual_normal},
             {l.projb, C, Init::zero},
             {l.ln2w, C, Init::one},
             {l.ln2b, C, Init::zero},
             {l.fcw, 4 * C * C, Init::normal},
             {l.fcb, 4 * C, Init::zero},
             {l.fcprojw, 4 * C * C, Init::residual_normal},
             {l.fcprojb, C, Init::zero}};
  }
  // GPT-2 scales residual-path projections by 1/√(2L) (Radford et al. 2019 §2.3; nanoGPT).
  const float std_normal = 0.02f;
  const float std_residual = 0.02f / std::sqrt(2.0f * static_cast<float>(cfg_.layers));
  be.fill(dst, end - begin, 0.0f);
  for (size_t t = 0; t < spans.size(); ++t) {
    const TensorSpan& s = spans[t];
    const size_t lo = std::max(begin, s.offset);
    const size_t hi = std::min(end, s.offset + s.size);
    if (lo >= hi) continue;
    const View out = dst.at(lo - begin);
    const uint64_t stream = static_cast<uint64_t>(unit) * 64 + t;  // tensor id
    switch (s.init) {
      case Init::normal: be.init_normal(out, hi - lo, seed, stream, lo - s.offset, std_normal); break;
      case Init::residual_normal: be.init_normal(out, hi - lo, seed, stream, lo - s.offset, std_residual); break;
      case Init::one: be.fill(out, hi - lo, 1.0f); break;
      case Init::zero: break;
    }
  }
}

}  // namespace gcb::models
