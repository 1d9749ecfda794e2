// DpComm (dp_comm.hpp): ZeRO's dp-group all_reduce, reduce_scatter, all_gather and gather on a padded unit, counted and
// timed as comm:<kind> phases, the reductions launched on the dp CommQueue.
#include "models/engine/comm/dp_comm.hpp"

namespace gcb::models {

void DpComm::all_reduce(View g, const ShardSpec& s) {
  if (size() == 1) return;
  if (stats_ != nullptr) stats_->record(CommKind::all_reduce, s.padded * dtype_size(g.dtype));
  Communicator* c = &queue_.comm();
  const size_t n = s.padded;
  const PhaseScope ph(queue_.overlapped() ? nullptr : phases_, "comm:all_reduce");
  queue_.launch([c, g, n] { c->all_reduce(g.data, g.data, n, g.dtype, ReduceOp::sum); });
}

void DpComm::reduce_scatter(View full, View own, const ShardSpec& s) {
  if (size() == 1) {
    if (own.data != full.data) be_.copy(own, full, s.shard);
    return;
  }
  if (stats_ != nullptr) stats_->record(CommKind::reduce_scatter, s.padded * dtype_size(full.dtype));
  Communicator* c = &queue_.comm();
  const size_t n = s.shard;
  const PhaseScope ph(queue_.overlapped() ? nullptr : phases_, "comm:reduce_scatter");
  queue_.launch([c, full, own, n] { c->reduce_scatter(full.data, own.data, n, full.dtype, ReduceOp::sum); });
}

void DpComm::all_gather(View full, const ShardSpec& s) {
  if (size() == 1) return;
  if (stats_ != nullptr) stats_->record(CommKind::all_gather, s.padded * dtype_size(full.dtype));
  Communicator* c = &queue_.comm();
  const View mine = full.at(s.begin(rank()));
  const size_t n = s.shard;
  const PhaseScope ph(phases_, "comm:all_gather");
  queue_.run([c, mine, full, n] { c->all_gather(mine.data, full.data, n, full.dtype); });
}

Buffer DpComm::gather(View shard, const ShardSpec& s, MemCategory cat) {
  // Unset: the own shard is copied in and the all-gather writes the others (one rank: the shard is
  // the whole padded unit).
  Buffer b = be_.alloc(cat, shard.dtype, s.padded, AllocInit::unset);
  be_.copy(b.at(s.begin(rank())), shard, s.shard);
  all_gather(b.view(), s);
  return b;
}

void DpComm::wait() {
  if (!queue_.overlapped()) return;
  {
    const PhaseScope ph(phases_, "comm:bucket_wait");
    queue_.wait();
  }
  const double busy = queue_.take_busy_seconds();
  if (phases_ != nullptr) phases_->add_span("comm_lane", busy);
}

}  // namespace gcb::models
