#include "models/zero.hpp"

#include <utility>

namespace gcb::models {

void record_comm(CommStats* stats, CommKind k, size_t elements) {
  if (stats == nullptr) return;
  auto& c = stats->by_kind[static_cast<size_t>(k)];
  c.calls += 1;
  c.bytes += static_cast<int64_t>(elements * sizeof(float));
}

void DpUnitComm::run(std::string_view phase, CommKind kind, size_t elements, std::function<void()> op) const {
  record_comm(stats, kind, elements);
  if (lane != nullptr) {
    be.comm_begin();  // the data is ready; the matching comm_end() follows the lane's wait
    lane->submit(std::move(op));
    return;
  }
  const PhaseScope ph(phases, phase);
  be.comm_begin();
  op();
  be.comm_end();
}

void DpUnitComm::all_reduce(float* g, const ShardSpec& s) const {
  if (comm.size() == 1) return;
  Communicator* c = &comm;
  const size_t n = s.padded;
  run("comm:all_reduce", CommKind::all_reduce, n, [c, g, n] { c->all_reduce(g, g, n, DType::f32, ReduceOp::sum); });
}

void DpUnitComm::reduce_scatter(const float* full, float* own, const ShardSpec& s) const {
  if (comm.size() == 1) {
    if (own != full) be.copy(own, full, s.shard);
    return;
  }
  Communicator* c = &comm;
  const size_t n = s.shard;
  run("comm:reduce_scatter", CommKind::reduce_scatter, s.padded,
      [c, full, own, n] { c->reduce_scatter(full, own, n, DType::f32, ReduceOp::sum); });
}

void DpUnitComm::all_gather(float* full, const ShardSpec& s) const {
  if (comm.size() == 1) return;
  const PhaseScope ph(phases, "comm:all_gather");
  be.comm_begin();
  comm.all_gather(full + s.begin(comm.rank()), full, s.shard, DType::f32);
  be.comm_end();
  record_comm(stats, CommKind::all_gather, s.padded);
}

Buffer DpUnitComm::gather(const float* shard, const ShardSpec& s) const {
  Buffer b = be.alloc_floats(MemCategory::params, s.padded);
  be.copy(b.f32() + s.begin(comm.rank()), shard, s.shard);
  all_gather(b.f32(), s);
  return b;
}

}  // namespace gcb::models
