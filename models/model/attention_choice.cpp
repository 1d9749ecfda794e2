// Attention implementation and path names (parse_attention_impl, attention_impl_name, attention_path_name) and
// agreed_attention_times, the slowest rank's time per implementation (attention_choice.hpp).
#include "models/model/attention_choice.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace gcb::models {

std::optional<AttentionImpl> parse_attention_impl(std::string_view name) {
  if (name == "auto") return AttentionImpl::automatic;
  if (name == "ours") return AttentionImpl::ours;
  if (name == "cudnn") return AttentionImpl::cudnn;
  return std::nullopt;
}

std::string_view attention_impl_name(AttentionImpl a) {
  switch (a) {
    case AttentionImpl::automatic: return "auto";
    case AttentionImpl::ours: return "ours";
    case AttentionImpl::cudnn: return "cudnn";
  }
  return "?";
}

std::string_view attention_path_name(AttentionPath p) {
  switch (p) {
    case AttentionPath::simple: return "simple";
    case AttentionPath::ours: return "ours";
    case AttentionPath::cudnn: return "cudnn";
  }
  return "?";
}

std::optional<AttentionTimes> agreed_attention_times(const std::vector<std::optional<AttentionTimes>>& ranks) {
  std::optional<AttentionTimes> agreed;
  for (const std::optional<AttentionTimes>& r : ranks) {
    if (!r) continue;
    if (!agreed) agreed = AttentionTimes{r->ours, r->cudnn};
    agreed->ours = std::max(agreed->ours, r->ours);
    agreed->cudnn = std::max(agreed->cudnn, r->cudnn);
  }
  return agreed;
}

AttentionChoice choose_attention(AttentionImpl asked, DType t, const std::string& ours_unsupported,
                                 const std::string& cudnn_unsupported, const std::optional<AttentionTimes>& times,
                                 int ranks) {
  if (t == DType::f32)
    return {AttentionPath::simple, false,
            "fp32: our flash kernels and cuDNN SDPA are 16-bit, so the exact fp32 row kernel runs (--attn ignored)"};
  const bool ours = ours_unsupported.empty(), cudnn = cudnn_unsupported.empty();
  if (!ours && !cudnn)
    return {AttentionPath::simple, false,
            fmt::format("the simple row kernel: ours: {}; cudnn: {}", ours_unsupported, cudnn_unsupported)};
  if (asked == AttentionImpl::ours || (asked == AttentionImpl::automatic && !cudnn)) {
    if (ours)
      return {AttentionPath::ours, false,
              asked == AttentionImpl::ours ? "--attn ours" : "ours (cudnn: " + cudnn_unsupported + ")"};
    return {AttentionPath::cudnn, false, "cudnn (ours: " + ours_unsupported + ")"};
  }
  if (asked == AttentionImpl::cudnn || !ours) {
    if (cudnn)
      return {AttentionPath::cudnn, false,
              asked == AttentionImpl::cudnn ? "--attn cudnn" : "cudnn (ours: " + ours_unsupported + ")"};
    return {AttentionPath::ours, false, "ours (cudnn: " + cudnn_unsupported + ")"};
  }
  if (!times) return {AttentionPath::ours, true, "auto: to be timed"};
  const bool faster = times->ours <= times->cudnn;
  return {faster ? AttentionPath::ours : AttentionPath::cudnn, false,
          fmt::format("auto: the faster forward + backward on this shape, {}: ours {:.3f} ms, cudnn {:.3f} ms",
                      ranks > 1 ? fmt::format("the slowest of {} ranks", ranks) : std::string("this GPU"),
                      1e3 * times->ours, 1e3 * times->cudnn)};
}

}  // namespace gcb::models
