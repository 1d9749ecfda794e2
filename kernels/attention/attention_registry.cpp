// The attention implementation table (attention_registry.hpp): one row per implementation, the
// name lookups and the type / head-dim refusal every reader shares.
#include "kernels/attention/attention_registry.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "core/error.hpp"
#include "gcb/config.hpp"

namespace gcb::kernels::attn {

// The makers, each defined beside its kernels (flash_kernel.cpp, unfused_attn.cpp, cudnn_kernel.cpp)
// in builds that have them.
std::unique_ptr<AttnKernel> make_flash_kernel(DType t, const AttnShape& a, bool backward, int device);
std::unique_ptr<AttnKernel> make_unfused_kernel(DType t, const AttnShape& a, bool backward, int device);
std::unique_ptr<AttnKernel> make_cudnn_kernel(DType t, const AttnShape& a, bool backward, int device);

namespace {

#if GCB_HAVE_CUDA
#define GCB_CUDA_MAKER(f) f
#else
#define GCB_CUDA_MAKER(f) nullptr
#endif
constexpr std::string_view kNoCuda = "gcbench was built without CUDA";

}  // namespace

const std::vector<AttnImplRow>& attention_impls() {
  static const std::vector<AttnImplRow> table = {
      // name, label, types, head dims, backward, trains, scores in HBM, tolerance, missing, make
      {"ours",
       "our FlashAttention-2-style kernels",
       {DType::f16, DType::bf16},
       {64, 128},
       true,
       true,
       false,
       1.0,
       kNoCuda,
       GCB_CUDA_MAKER(make_flash_kernel)},
      {"unfused",
       "the unfused baseline",
       {DType::f16, DType::bf16},
       {},
       false,
       false,
       true,
       2.0,
       kNoCuda,
       GCB_CUDA_MAKER(make_unfused_kernel)},
      {"cudnn",
       "cuDNN SDPA",
       {DType::f16, DType::bf16},
       {},
       true,
       true,
       false,
       1.0,
       kNoCuda,
       GCB_CUDA_MAKER(make_cudnn_kernel)},
  };
  return table;
}

const AttnImplRow& attention_impl(AttnImplId id) {
  GCB_CHECK(row_of(id) < attention_impls().size(), "attention implementation id out of the table");
  return attention_impls()[row_of(id)];
}

std::string_view attention_impl_name(AttnImplId id) { return attention_impl(id).name; }

std::optional<AttnImplId> find_attention_impl(std::string_view name) {
  const auto& rows = attention_impls();
  for (size_t i = 0; i < rows.size(); ++i)
    if (rows[i].name == name) return AttnImplId{static_cast<uint8_t>(i)};
  return std::nullopt;
}

std::vector<AttnImplId> attention_impl_ids() {
  std::vector<AttnImplId> ids;
  for (size_t i = 0; i < attention_impls().size(); ++i) ids.push_back(AttnImplId{static_cast<uint8_t>(i)});
  return ids;
}

std::vector<AttnImplId> training_attention_impls() {
  std::vector<AttnImplId> ids;
  for (const AttnImplId id : attention_impl_ids())
    if (attention_impl(id).trains) ids.push_back(id);
  return ids;
}

std::string attention_impl_refuses(AttnImplId id, DType t, int head_dim) {
  const AttnImplRow& r = attention_impl(id);
  if (r.make == nullptr) return std::string(r.missing);
  if (std::find(r.dtypes.begin(), r.dtypes.end(), t) == r.dtypes.end()) {
    std::string types;
    for (const DType d : r.dtypes) types += (types.empty() ? "" : ", ") + std::string(dtype_name(d));
    return fmt::format("{}: {} is not among {}", r.label, dtype_name(t), types);
  }
  if (!r.head_dims.empty() && std::find(r.head_dims.begin(), r.head_dims.end(), head_dim) == r.head_dims.end())
    return fmt::format("{}: head dim {} is not among {}", r.label, head_dim, fmt::join(r.head_dims, ", "));
  return {};
}

}  // namespace gcb::kernels::attn
