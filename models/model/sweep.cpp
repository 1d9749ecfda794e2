// The layout grammar of `gcbench train --sweep` (sweep.hpp): parse_sweep, sweep_ranks, layout_name, and apply_layout,
// which sets a TrainOptions' layout from a LayoutSpec.
#include "models/model/sweep.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>

#include "core/error.hpp"

namespace gcb::models {
namespace {

int parse_degree(const std::string& tok, size_t prefix) {
  const std::string digits = tok.substr(prefix);
  if (digits.empty() || digits.find_first_not_of("0123456789") != std::string::npos || digits.size() > 4) {
    throw UsageError(fmt::format("--sweep: bad degree in '{}' (expected 1 to 4 digits, e.g. tp2, pp4, zero1)", tok));
  }
  return std::stoi(digits);
}

// Splits `text` at `sep`; an empty piece is kept (and rejected by the caller).
std::vector<std::string> split(const std::string& text, char sep) {
  std::vector<std::string> out;
  size_t start = 0;
  for (;;) {
    const size_t at = text.find(sep, start);
    out.push_back(text.substr(start, at == std::string::npos ? std::string::npos : at - start));
    if (at == std::string::npos) return out;
    start = at + 1;
  }
}

}  // namespace

std::string layout_name(const LayoutSpec& l) {
  std::string s = fmt::format("dp{}", l.dp);
  if (l.zero != ZeroStage::none) s += fmt::format("-zero{}", static_cast<int>(l.zero));
  if (l.tp > 1) s += fmt::format("-tp{}", l.tp);
  if (l.sp) s += "-sp";
  if (l.pp > 1) s += fmt::format("-pp{}-{}", l.pp, l.schedule == PipeSchedule::gpipe ? "gpipe" : "1f1b");
  if (l.overlap) s += "-overlap";
  return s;
}

namespace {

// One layout's tokens; dp = 0 when not given (every rank tp·pp leaves).
LayoutSpec parse_tokens(const std::string& item, const std::string& text) {
  if (item.empty()) throw UsageError(fmt::format("--sweep '{}': empty layout", text));
  LayoutSpec l;
  l.dp = 0;
  for (const std::string& tok : split(item, '-')) {
    if (tok == "dp") {
      l.dp = 0;
    } else if (tok == "sp") {
      l.sp = true;
    } else if (tok == "gpipe") {
      l.schedule = PipeSchedule::gpipe;
    } else if (tok == "1f1b") {
      l.schedule = PipeSchedule::one_f_one_b;
    } else if (tok == "overlap") {
      l.overlap = true;
    } else if (tok.starts_with("dp")) {
      l.dp = parse_degree(tok, 2);
    } else if (tok.starts_with("tp")) {
      l.tp = parse_degree(tok, 2);
    } else if (tok.starts_with("pp")) {
      l.pp = parse_degree(tok, 2);
    } else if (tok.starts_with("zero")) {
      const int z = parse_degree(tok, 4);
      if (z > 3) throw UsageError(fmt::format("--sweep {}: zero stage must be 0–3", item));
      l.zero = static_cast<ZeroStage>(z);
    } else {
      throw UsageError(fmt::format(
          "--sweep: unknown token '{}' in '{}' (dp[N], tpN, ppN, sp, zeroK, gpipe, 1f1b, overlap)", tok, item));
    }
  }
  if (l.tp < 1 || l.pp < 1) throw UsageError(fmt::format("--sweep {}: tp and pp must be ≥ 1", item));
  return l;
}

}  // namespace

std::vector<LayoutSpec> parse_sweep(const std::string& text, int ranks) {
  std::vector<LayoutSpec> out;
  for (const std::string& item : split(text, ',')) {
    LayoutSpec l = parse_tokens(item, text);
    if (ranks % (l.tp * l.pp) != 0) {
      throw UsageError(fmt::format("--sweep {}: tp·pp = {} does not divide {} ranks", item, l.tp * l.pp, ranks));
    }
    if (l.dp == 0) l.dp = ranks / (l.tp * l.pp);
    l.name = layout_name(l);
    out.push_back(l);
  }
  return out;
}

int sweep_ranks(const std::string& text) {
  int ranks = 1;
  for (const std::string& item : split(text, ',')) {
    const LayoutSpec l = parse_tokens(item, text);
    ranks = std::lcm(ranks, std::max(l.dp, 1) * l.tp * l.pp);
  }
  return ranks;
}

TrainOptions apply_layout(TrainOptions base, const LayoutSpec& l) {
  base.zero = l.zero;
  base.sp = l.sp;
  base.schedule = l.schedule;
  base.overlap_comm = l.overlap;
  return base;
}

namespace {
nlohmann::json shape_params(const LayoutSpec& l, const TrainOptions& t, int global_batch) {
  return {{"model", t.model.name},
          {"layout", l.name},
          {"dp", l.dp},
          {"tp", l.tp},
          {"pp", l.pp},
          {"sp", l.sp},
          {"zero", static_cast<int>(l.zero)},
          {"overlap", l.overlap},
          {"schedule", l.schedule == PipeSchedule::gpipe ? "gpipe" : "1f1b"},
          {"micro_batch", t.micro_batch},
          {"global_batch", global_batch},
          {"recompute", t.recompute == Recompute::none        ? "none"
                        : t.recompute == Recompute::selective ? "selective"
                                                              : "full"},
          {"precision", std::string(precision_name(t.precision))}};
}
}  // namespace

nlohmann::json layout_params(const LayoutSpec& l, const TrainOptions& t, int global_batch) {
  nlohmann::json p = shape_params(l, t, global_batch);
  if (t.logit_rows > 0) p["logit_rows"] = t.logit_rows;  // only when the LM head is chunked
  // Full recomputation in blocks of K layers (train_options.hpp Recompute): only when K > 1.
  if (t.recompute == Recompute::full && t.recompute_every > 1) p["recompute_every"] = t.recompute_every;
  // CPU offload (train_options.hpp Offload): only when on, so results without it pair with those
  // of earlier versions (compare matches by every param).
  if (t.offload != Offload::none) p["offload"] = std::string(offload_name(t.offload));
  return p;
}

}  // namespace gcb::models
