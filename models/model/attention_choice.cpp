// --attn's names (attention_request_names), agreed_attention_times (the slowest rank's time per
// registry row) and choose_attention (attention_choice.hpp).
#include "models/model/attention_choice.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "core/error.hpp"

namespace gcb::models {

namespace ka = kernels::attn;

AttentionRequest attention_request(AttnImplId id) {
  GCB_CHECK(ka::row_of(id) < static_cast<size_t>(AttentionRequest::automatic), "attention registry row out of range");
  return static_cast<AttentionRequest>(id);
}

std::optional<AttnImplId> requested_impl(AttentionRequest r) {
  if (r == AttentionRequest::automatic) return std::nullopt;
  return static_cast<AttnImplId>(r);
}

std::string attention_request_name(AttentionRequest r) {
  const std::optional<AttnImplId> id = requested_impl(r);
  return id ? std::string(ka::attention_impl_name(*id)) : "auto";
}

std::vector<std::pair<std::string, AttentionRequest>> attention_request_names() {
  std::vector<std::pair<std::string, AttentionRequest>> names = {{"auto", AttentionRequest::automatic}};
  for (const AttnImplId id : ka::training_attention_impls())
    names.emplace_back(std::string(ka::attention_impl_name(id)), attention_request(id));
  return names;
}

std::string attention_choice_name(const AttentionChoice& c) {
  return c.impl ? std::string(ka::attention_impl_name(*c.impl)) : "simple";
}

std::optional<AttentionTimes> agreed_attention_times(const std::vector<std::optional<AttentionTimes>>& ranks) {
  std::optional<AttentionTimes> agreed;
  for (const std::optional<AttentionTimes>& r : ranks) {
    if (!r) continue;
    if (!agreed) agreed = AttentionTimes{};
    for (const auto& [id, seconds] : *r) {
      const auto [it, fresh] = agreed->emplace(id, seconds);
      if (!fresh) it->second = std::max(it->second, seconds);
    }
  }
  return agreed;
}

AttentionChoice choose_attention(AttentionRequest asked_request, DType t,
                                 const std::map<AttnImplId, std::string>& unsupported,
                                 const std::optional<AttentionTimes>& times, int ranks) {
  const std::optional<AttnImplId> asked = requested_impl(asked_request);
  // Each row's reason, its registry types first.
  std::map<AttnImplId, std::string> why_not;
  bool some_type = false;
  for (const auto& [id, why] : unsupported) {
    const ka::AttnImplRow& row = ka::attention_impl(id);
    const bool typed = std::find(row.dtypes.begin(), row.dtypes.end(), t) != row.dtypes.end();
    some_type = some_type || typed;
    why_not[id] = typed ? why : fmt::format("{} is not among its types", dtype_name(t));
  }
  const auto name = [](AttnImplId id) { return std::string(ka::attention_impl_name(id)); };
  const auto reasons = [&](std::optional<AttnImplId> except) {
    std::string s;
    for (const auto& [id, why] : why_not)
      if (!why.empty() && id != except) s += fmt::format("{}{}: {}", s.empty() ? "" : "; ", name(id), why);
    return s;
  };
  if (!some_type)
    return {std::nullopt, false,
            fmt::format("{}: no attention implementation takes it ({}), so the exact fp32 row kernel runs (--attn "
                        "ignored)",
                        dtype_name(t), reasons(std::nullopt))};
  std::vector<AttnImplId> usable;
  for (const auto& [id, why] : why_not)
    if (why.empty()) usable.push_back(id);
  if (usable.empty()) return {std::nullopt, false, "the simple row kernel: " + reasons(std::nullopt)};
  if (asked && why_not.contains(*asked) && why_not.at(*asked).empty()) return {asked, false, "--attn " + name(*asked)};
  if (usable.size() == 1) return {usable[0], false, fmt::format("{} ({})", name(usable[0]), reasons(usable[0]))};
  // Several usable (an asked row among the unusable is named in the reason).
  const std::string unusable = reasons(std::nullopt);
  const std::string note = unusable.empty() ? "" : fmt::format(" ({})", unusable);
  if (!times) return {usable[0], true, "auto: to be timed" + note};
  std::optional<AttnImplId> best;
  std::string listed;
  for (const AttnImplId id : usable) {
    const auto it = times->find(id);
    if (it == times->end()) continue;
    listed += fmt::format("{}{} {:.3f} ms", listed.empty() ? "" : ", ", name(id), 1e3 * it->second);
    if (!best || it->second < times->at(*best)) best = id;  // ties: the earlier row
  }
  GCB_CHECK(best.has_value(), "choose_attention: times for none of the usable attention implementations");
  return {
      best, false,
      fmt::format("auto: the faster forward + backward on this shape, {}: {}{}",
                  ranks > 1 ? fmt::format("the slowest of {} ranks", ranks) : std::string("this GPU"), listed, note)};
}

}  // namespace gcb::models
