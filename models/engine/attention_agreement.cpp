// agree_on_attention (attention_agreement.hpp): one `--attn auto` choice for the whole run — each rank's times
// all-gathered over the world, combined by agreed_attention_times and adopted by every rank's backend.
#include "models/engine/attention_agreement.hpp"

namespace gcb::models {

AttentionAgreement agree_on_attention(Backend& be, Communicator& world, DType t, int B, int T, int C, int NH) {
  // Per rank {measured (0 or 1), ours seconds, cudnn seconds}.
  constexpr size_t kFields = 3;
  const std::optional<AttentionTimes> mine = be.measure_attention(t, B, T, C, NH);
  const double local[kFields] = {mine ? 1.0 : 0.0, mine ? mine->ours : 0.0, mine ? mine->cudnn : 0.0};
  const auto n = static_cast<size_t>(world.size());
  Buffer send = be.alloc(MemCategory::workspace, DType::f64, kFields);
  Buffer all = be.alloc(MemCategory::workspace, DType::f64, kFields * n);
  be.copy_from_host(send.data(), local, sizeof(local));
  ordered_collective(be, world, [&] { world.all_gather(send.data(), all.data(), kFields, DType::f64); });
  world.synchronize();
  std::vector<double> host(kFields * n);
  be.copy_to_host(host.data(), all.data(), host.size() * sizeof(double));
  AttentionAgreement a;
  int measured = 0;
  for (size_t r = 0; r < n; ++r) {
    const double* f = host.data() + kFields * r;
    a.ranks.push_back(f[0] != 0.0 ? std::optional<AttentionTimes>(AttentionTimes{f[1], f[2]}) : std::nullopt);
    measured += f[0] != 0.0 ? 1 : 0;
  }
  a.agreed = agreed_attention_times(a.ranks);
  if (a.agreed) be.adopt_attention(t, B, T, C, NH, *a.agreed, measured);
  return a;
}

}  // namespace gcb::models
