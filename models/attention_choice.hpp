// Which kernels run the CUDA backend's attention, and why: our flash kernels (kernels/attention,
// 16-bit, head dim 64 or 128), cuDNN SDPA (16-bit, the head dims cuDNN accepts), or the simple
// fp32-exact row kernel (kernels/train attention_simple.cu: fp32 runs and any other head dim).
// `--attn auto` (the default) times ours and cuDNN's forward + backward on the run's own shape and
// keeps the faster; the reason, with both times, is recorded in the result. Plain C++: tested
// without a GPU.
#pragma once

#include <optional>
#include <string>
#include <string_view>

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

struct AttentionChoice {
  AttentionPath path = AttentionPath::simple;
  bool needs_timing = false;  // auto with both usable: call again with the times
  std::string why;
};

// ours_unsupported / cudnn_unsupported: "" when that implementation takes (t, head dim), else why
// not (kernels/attention flash_unsupported, CudnnSdpaForward::unsupported).
AttentionChoice choose_attention(AttentionImpl asked, DType t, const std::string& ours_unsupported,
                                 const std::string& cudnn_unsupported, const std::optional<AttentionTimes>& times = {});

}  // namespace gcb::models
