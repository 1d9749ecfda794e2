// init_range (param_init.hpp): the layout's initialization recipe applied to one range of a unit.
#include "models/engine/param_init.hpp"

#include <algorithm>
#include <vector>

namespace gcb::models {

void init_range(const ParamLayout& layout, Backend& be, View dst, int unit, size_t begin, size_t end, uint64_t seed) {
  using InitKind = ParamLayout::InitKind;
  const std::vector<ParamLayout::InitSpan> spans = layout.init_spans(unit);
  be.fill(dst, end - begin, 0.0f);
  for (size_t t = 0; t < spans.size(); ++t) {
    const ParamLayout::InitSpan& s = spans[t];
    const size_t lo = std::max(begin, s.offset);
    const size_t hi = std::min(end, s.offset + s.size);
    if (lo >= hi) continue;
    const View out = dst.at(lo - begin);
    const uint64_t stream = static_cast<uint64_t>(unit) * 64 + t;  // tensor id
    switch (s.kind) {
      case InitKind::normal:
      case InitKind::residual_normal:
        be.init_normal(out, hi - lo, seed, stream, lo - s.offset, layout.init_std(s.kind));
        break;
      case InitKind::one: be.fill(out, hi - lo, 1.0f); break;
      case InitKind::zero: break;
    }
  }
}

}  // namespace gcb::models
