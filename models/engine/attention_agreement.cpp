// agree_on_attention (attention_agreement.hpp): one `--attn auto` choice for the whole run — each rank's times
// all-gathered over the world, combined by agreed_attention_times and adopted by every rank's backend.
#include "models/engine/attention_agreement.hpp"

#include <utility>

namespace gcb::models {

using kernels::attn::row_of;

AttentionAgreement agree_on_attention(Backend& be, Communicator& world, DType t, int B, int T, int C, int NH) {
  // Per rank {measured (0 or 1), then seconds per registry row (0: not timed)}.
  const std::vector<AttnImplId> rows = kernels::attn::attention_impl_ids();
  const size_t kFields = 1 + rows.size();
  const std::optional<AttentionTimes> mine = be.measure_attention(t, B, T, C, NH);
  std::vector<double> local(kFields, 0.0);
  if (mine) {
    local[0] = 1.0;
    for (const auto& [id, seconds] : *mine) local[1 + row_of(id)] = seconds;
  }
  const auto n = static_cast<size_t>(world.size());
  Buffer send = be.alloc(MemCategory::workspace, DType::f64, kFields);
  Buffer all = be.alloc(MemCategory::workspace, DType::f64, kFields * n);
  be.copy_from_host(send.data(), local.data(), kFields * sizeof(double));
  ordered_collective(be, world, [&] { world.all_gather(send.data(), all.data(), kFields, DType::f64); });
  world.synchronize();
  std::vector<double> host(kFields * n);
  be.copy_to_host(host.data(), all.data(), host.size() * sizeof(double));
  AttentionAgreement a;
  int measured = 0;
  for (size_t r = 0; r < n; ++r) {
    const double* f = host.data() + kFields * r;
    std::optional<AttentionTimes> theirs;
    if (f[0] != 0.0) {
      theirs.emplace();
      for (const AttnImplId id : rows)
        if (f[1 + row_of(id)] > 0.0) (*theirs)[id] = f[1 + row_of(id)];
    }
    a.ranks.push_back(std::move(theirs));
    measured += f[0] != 0.0 ? 1 : 0;
  }
  a.agreed = agreed_attention_times(a.ranks);
  if (a.agreed) be.adopt_attention(t, B, T, C, NH, *a.agreed, measured);
  return a;
}

}  // namespace gcb::models
