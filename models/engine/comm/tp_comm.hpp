// Megatron's tensor-parallel collectives (Shoeybi et al. 2019 §3; sequence parallelism:
// Korthikanti et al. 2022 §4.2.2), counted and timed as comm:tp_* phases. f and g are the two
// conjugate operators around each parallel block: g after a row-parallel block reduces the
// partial outputs (all-reduce, or reduce-scatter into sequence shards under SP), f before a
// column-parallel block is the identity (all-gather of the sequence shards under SP); their
// backward roles swap. At tp = 1 every call is a copy or nothing.
#pragma once

#include "collectives/communicator.hpp"
#include "core/phase_timer.hpp"
#include "models/backend/backend.hpp"
#include "models/model/comm_stats.hpp"

namespace gcb::models {

class TpComm {
 public:
  // rows: R, the full row count; sp: the LayerNorm/residual regions hold R/t rows.
  TpComm(Backend& be, Communicator& tp, int rows, int width, bool sp);
  void set_phase_timer(PhaseTimer* t) { phases_ = t; }
  void set_stats(CommStats* s) { stats_ = s; }
  int size() const { return comm_.size(); }

  // out [Rs, width] = Σ over tp of in [R, width] (all-reduce, or reduce-scatter under SP).
  // At tp = 1: a copy, or nothing when out is in.
  void reduce_rows(View out, View in);
  // The full [R, width] from the sequence shards `in` [Rs, width] (under SP, into `out`); without
  // SP the identity (returns `in`).
  View gather_rows(View out, View in);
  // In place over tp: sums or maxima of fp32 statistics (cross-entropy, SP's partial gradients).
  void all_reduce(View x, size_t n, ReduceOp op);

 private:
  Backend& be_;
  Communicator& comm_;
  size_t rows_, width_;
  bool sp_;
  PhaseTimer* phases_ = nullptr;
  CommStats* stats_ = nullptr;
};

}  // namespace gcb::models
