// Layouts by name: the grammar of `gcbench train --sweep` (and of a planner's --layout). A layout
// is a '-'-separated list of tokens:
//   dp | dpN     data parallel (dp alone, or omitted: every rank not used by tp·pp)
//   tpN  ppN     tensor / pipeline parallel degree
//   sp           sequence parallelism (with tp)
//   zeroK        ZeRO stage K on the dp dimension (0–3)
//   gpipe | 1f1b pipeline schedule (default 1f1b)
//   overlap      gradient reductions overlapped with backward
// e.g. "dp,zero1,tp2,tp2-sp,pp4-1f1b" on 4 ranks = dp4, dp4 zero1, dp2×tp2, dp2×tp2 sp, pp4 1F1B.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "models/model/train_options.hpp"

namespace gcb::models {

struct LayoutSpec {
  std::string name;  // canonical, e.g. "dp2-zero1-tp2-sp-pp2-1f1b"
  int dp = 1, tp = 1, pp = 1;
  bool sp = false;
  ZeroStage zero = ZeroStage::none;
  PipeSchedule schedule = PipeSchedule::one_f_one_b;
  bool overlap = false;

  ParallelLayout layout() const { return {dp, tp, pp}; }
};

// Layouts separated by ','. gcb::UsageError on an unknown token, a stage outside 0–3, or when
// tp·pp does not divide `ranks`.
std::vector<LayoutSpec> parse_sweep(const std::string& text, int ranks);
// The fewest ranks every layout of `text` fits: the least common multiple of each layout's
// (dp if given, else 1)·tp·pp. "dp,tp2,pp2-1f1b,dp2-tp2-pp2" → 8.
int sweep_ranks(const std::string& text);
std::string layout_name(const LayoutSpec& l);
// The layout's choices applied to `base` (zero, sp, schedule, overlap).
TrainOptions apply_layout(TrainOptions base, const LayoutSpec& l);

// The parameters every layout result carries, measured (train) or predicted (plan): the model,
// the layout and its parts, micro- and global batch, recomputation, precision; logit_rows,
// recompute_every and offload only where they are not the default.
nlohmann::json layout_params(const LayoutSpec& l, const TrainOptions& t, int global_batch);

}  // namespace gcb::models
