// ParamLayout (param_layout.hpp): each GPT-2 tensor's span in the flat parameter vector, grouped into units (0 =
// embedding, 1 + l = layer l), and each unit's initialization recipe (init_spans).
#include "models/model/param_layout.hpp"

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

#include "core/size.hpp"

namespace gcb::models {

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

std::vector<ParamLayout::InitSpan> ParamLayout::init_spans(int unit) const {
  const size_t C = sz(cfg_.hidden);
  std::vector<InitSpan> spans;
  if (unit == 0) {
    const auto& e = embed_;
    spans = {{e.wte, sz(cfg_.vocab) * C, InitKind::normal},
             {e.wpe, sz(cfg_.seq) * C, InitKind::normal},
             {e.lnfw, C, InitKind::one},
             {e.lnfb, C, InitKind::zero}};
  } else {
    const auto& l = layer_;
    spans = {{l.ln1w, C, InitKind::one},
             {l.ln1b, C, InitKind::zero},
             {l.qkvw, 3 * C * C, InitKind::normal},
             {l.qkvb, 3 * C, InitKind::zero},
             {l.projw, C * C, InitKind::residual_normal},
             {l.projb, C, InitKind::zero},
             {l.ln2w, C, InitKind::one},
             {l.ln2b, C, InitKind::zero},
             {l.fcw, 4 * C * C, InitKind::normal},
             {l.fcb, 4 * C, InitKind::zero},
             {l.fcprojw, 4 * C * C, InitKind::residual_normal},
             {l.fcprojb, C, InitKind::zero}};
  }
  return spans;
}

float ParamLayout::init_std(InitKind k) const {
  // GPT-2 scales residual-path projections by 1/√(2L) (Radford et al. 2019 §2.3; nanoGPT).
  if (k == InitKind::residual_normal) return 0.02f / std::sqrt(2.0f * static_cast<float>(cfg_.layers));
  return k == InitKind::normal ? 0.02f : 0.0f;
}

}  // namespace gcb::models
