// TpComm (tp_comm.hpp): Megatron's g and f operators — reduce_rows (all-reduce, or reduce-scatter under SP),
// gather_rows (all-gather under SP) — and all_reduce, counted and timed as comm:tp_* phases.
#include "models/engine/comm/tp_comm.hpp"

namespace gcb::models {

TpComm::TpComm(Backend& be, Communicator& tp, int rows, int width, bool sp)
    : be_(be), comm_(tp), rows_(static_cast<size_t>(rows)), width_(static_cast<size_t>(width)), sp_(sp) {}

void TpComm::reduce_rows(View out, View in) {
  const size_t n = rows_ * width_;
  if (comm_.size() == 1) {
    if (out.data != in.data) be_.copy(out, in, n);
    return;
  }
  const size_t bytes = n * dtype_size(in.dtype);
  const PhaseScope ph(phases_, sp_ ? "comm:tp_reduce_scatter" : "comm:tp_all_reduce");
  if (sp_) {
    const size_t shard = n / static_cast<size_t>(comm_.size());
    ordered_collective(be_, comm_, [&] { comm_.reduce_scatter(in.data, out.data, shard, in.dtype, ReduceOp::sum); });
    if (stats_ != nullptr) stats_->record(CommKind::tp_reduce_scatter, bytes);
  } else {
    ordered_collective(be_, comm_, [&] { comm_.all_reduce(in.data, out.data, n, in.dtype, ReduceOp::sum); });
    if (stats_ != nullptr) stats_->record(CommKind::tp_all_reduce, bytes);
  }
}

View TpComm::gather_rows(View out, View in) {
  if (!sp_) return in;
  const size_t n = rows_ * width_;
  const PhaseScope ph(phases_, "comm:tp_all_gather");
  ordered_collective(be_, comm_,
                     [&] { comm_.all_gather(in.data, out.data, n / static_cast<size_t>(comm_.size()), in.dtype); });
  if (stats_ != nullptr) stats_->record(CommKind::tp_all_gather, n * dtype_size(in.dtype));
  return out;
}

void TpComm::all_reduce(View x, size_t n, ReduceOp op) {
  if (comm_.size() == 1) return;
  const PhaseScope ph(phases_, "comm:tp_all_reduce");
  ordered_collective(be_, comm_, [&] { comm_.all_reduce(x.data, x.data, n, x.dtype, op); });
  if (stats_ != nullptr) stats_->record(CommKind::tp_all_reduce, n * dtype_size(x.dtype));
}

}  // namespace gcb::models
