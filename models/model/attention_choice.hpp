// Which kernels run the CUDA backend's attention, and why: our flash kernels (kernels/attention,
// 16-bit, head dim 64 or 128), cuDNN SDPA (16-bit, the head dims cuDNN accepts), or the simple
// fp32-exact row kernel (kernels/train attention_simple.cu: fp32 runs and any other head dim).
// `--attn auto` (the default) times ours and cuDNN's forward + backward on the run's own shape and
// keeps the faster, as one decision for the whole run: every rank times both, the engine combines
// the times across the world before the first step (agreed_attention_times) and every rank chooses
// from the same numbers; the reason, with the times, is recorded in the result. Plain C++: tested
// without a GPU.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/dtype.hpp"

namespace gcb::models {

enum class AttentionImpl : uint8_t { automatic, ours, cudnn };
std::optional<AttentionImpl> parse_attention_impl(std::string_view name);  // "auto" | "ours" | "cudnn"
std::string_view attention_impl_name(AttentionImpl a);

enum class AttentionPath : uint8_t { simple, ours, cudnn };
std::string_view attention_path_name(AttentionPath p);

struct AttentionTimes {
  double ours = 0, cudnn = 0;  // seconds of one forward + backward on the run's shape
};

// The times every rank decides from: per implementation the slowest rank's time (a synchronous
// step waits for its slowest rank, so that is the time the choice costs the run), over the ranks
// that timed (nullopt: that rank had nothing to time). nullopt when no rank timed. The same
// vector gives the same result on every rank, so every rank makes the same choice.
std::optional<AttentionTimes> agreed_attention_times(const std::vector<std::optional<AttentionTimes>>& ranks);

struct AttentionChoice {
  AttentionPath path = AttentionPath::simple;
  bool needs_timing = false;  // auto with both usable: call again with the times
  std::string why;
};

// ours_unsupported / cudnn_unsupported: "" when that implementation takes (t, head dim), else why
// not (kernels/attention flash_unsupported, CudnnSdpaForward::unsupported). `times` come from
// `ranks` ranks (1: this rank's own).
AttentionChoice choose_attention(AttentionImpl asked, DType t, const std::string& ours_unsupported,
                                 const std::string& cudnn_unsupported, const std::optional<AttentionTimes>& times = {},
                                 int ranks = 1);

}  // namespace gcb::models
