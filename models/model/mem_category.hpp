// The categories a rank's memory is counted in (params, grads, master weights, Adam moments,
// activations, communication buffers, workspace): what the Backend allocates by
// (backend/backend.hpp), the theory and the planner predict, and results report per category.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace gcb::models {

enum class MemCategory : uint8_t {
  params,       // model weights (the working copy forward and backward read)
  grads,        // weight gradients (full buffers, buckets or shards)
  master,       // fp32 master weights (mixed precision only)
  adam_m,       // AdamW first moment (fp32)
  adam_v,       // AdamW second moment (fp32)
  activations,  // saved forward activations, activation gradients and layer scratch
  comm,         // communication staging buffers
  workspace,    // token ids, loss accumulators, op scratch, temporaries
};
inline constexpr size_t kMemCategories = 8;
std::string_view mem_category_name(MemCategory c);

}  // namespace gcb::models
