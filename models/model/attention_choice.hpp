// Which kernels run the CUDA backend's attention, and why: a row of the attention registry that
// trains (kernels/attention/attention_registry.hpp: our flash kernels, cuDNN SDPA, ...) or, when
// no row takes the problem (fp32 runs, other head dims), the simple fp32-exact row kernel of
// kernels/train (attention_simple.cu). That kernel is the backend's fallback, not a registry row:
// it reads the fused qkv rows directly, in any type and head dim, and has nothing to benchmark
// against the others in `gcbench attn`. `--attn auto` (the default) times the usable rows'
// forward + backward on the run's own shape and keeps the fastest, as one decision for the whole
// run: every rank times them, the engine combines the times across the world before the first step
// (agreed_attention_times) and every rank chooses from the same numbers; the reason, with the
// times, is recorded in the result. Plain C++: tested without a GPU.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/dtype.hpp"
#include "kernels/attention/attention_registry.hpp"

namespace gcb::models {

using kernels::attn::AttnImplId;

// What --attn asks for: auto, or a registry row that trains (the value is its AttnImplId; an enum
// so that the options hold it as any enum, bench/common/cli.hpp enum_names).
enum class AttentionRequest : uint8_t { automatic = 0xFF };
AttentionRequest attention_request(AttnImplId id);
std::optional<AttnImplId> requested_impl(AttentionRequest r);  // empty: auto
// "auto" or the row's name.
std::string attention_request_name(AttentionRequest r);
// --attn's names: auto, then every row that trains (kernels/attention/attention_registry.hpp).
std::vector<std::pair<std::string, AttentionRequest>> attention_request_names();

// Seconds of one forward + backward on the run's shape, per row timed.
using AttentionTimes = std::map<AttnImplId, double>;

// The times every rank decides from: per row the slowest rank's time (a synchronous step waits
// for its slowest rank, so that is the time the choice costs the run), over the ranks that timed
// (nullopt: that rank had nothing to time). nullopt when no rank timed. The same vector gives the
// same result on every rank, so every rank makes the same choice.
std::optional<AttentionTimes> agreed_attention_times(const std::vector<std::optional<AttentionTimes>>& ranks);

struct AttentionChoice {
  std::optional<AttnImplId> impl;  // empty: the simple row kernel
  bool needs_timing = false;       // auto with several usable: call again with the times
  std::string why;
};
// The row's name, or "simple".
std::string attention_choice_name(const AttentionChoice& c);

// `unsupported`: per row the backend may run (the rows that train), "" when it takes the problem,
// else why not (its kernel's unsupported() / prepare()); a row whose registry types lack `t` is
// unusable whatever it says. `times` come from `ranks` ranks (1: this rank's own).
AttentionChoice choose_attention(AttentionRequest asked, DType t, const std::map<AttnImplId, std::string>& unsupported,
                                 const std::optional<AttentionTimes>& times = {}, int ranks = 1);

}  // namespace gcb::models
