#include "models/zero.hpp"

namespace gcb::models {

void record_comm(CommStats* stats, CommKind k, size_t elements) {
  if (stats == nullptr) return;
  auto& c = stats->by_kind[static_cast<size_t>(k)];
  c.calls += 1;
  c.bytes += static_cast<int64_t>(elements * sizeof(float));
}

void DpUnitComm::reduce_scatter(const float* full, float* own, const ShardSpec& s) const {
  if (comm.size() == 1) {
    if (own != full) be.copy(own, full, s.shard);
    return;
  }
  const PhaseScope ph(phases, "comm:reduce_scatter");
  be.comm_begin();
  comm.reduce_scatter(full, own, s.shard, DType::f32, ReduceOp::sum);
  be.comm_end();
  record_comm(stats, CommKind::reduce_scatter, s.padded);
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
