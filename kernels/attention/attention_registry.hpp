// The attention implementations, one row each — name, element types, head dims, forward/backward,
// workspace, whether this binary has it and how to make one — read by `gcbench attn` (which
// benchmarks every row) and the CUDA training backend (which runs the rows that train). Adding an
// implementation is its kernel files, one row in attention_registry.cpp and one CMake line.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/dtype.hpp"
#include "kernels/attention/attention_shape.hpp"

namespace gcb::kernels::attn {

// An implementation: the index of its row in attention_impls() (an enum, so that command-line
// flags and options structs hold it as they hold any enum: bench/common/cli.hpp enum_names).
enum class AttnImplId : uint8_t {};
inline size_t row_of(AttnImplId id) { return static_cast<size_t>(id); }

// Device tensors of one problem, [b,h,s,d] 16-bit (lse: FP32 natural-log [b,h,s]); the backward
// reads q, k, v, o, d_o and lse and overwrites dq, dk, dv. `workspace` holds
// AttnKernel::workspace_bytes() bytes, 16-byte aligned.
struct AttnTensors {
  const void *q = nullptr, *k = nullptr, *v = nullptr;
  void* o = nullptr;
  float* lse = nullptr;
  const void* d_o = nullptr;
  void *dq = nullptr, *dk = nullptr, *dv = nullptr;
  void* workspace = nullptr;
};

// One implementation made for one problem (type, shape, forward only or forward + backward) on
// one device. The caller asks unsupported() (cheap), then prepare() (may build plans: cuDNN),
// then runs forward/backward, stream-ordered.
class AttnKernel {
 public:
  virtual ~AttnKernel() = default;
  // Why this problem cannot run on the device, known without building anything ("" = it can).
  virtual std::string unsupported() const { return {}; }
  // Work kept out of timed launches that may still refuse the problem (cuDNN: building its plans,
  // bound to `stream`, a cudaStream_t). "" = ready.
  virtual std::string prepare(void* /*stream*/) { return {}; }
  // Whether forward() writes the LSE (a backward needs it; the unfused baseline has none).
  virtual bool writes_lse() const { return true; }
  // Workspace bytes of the forward (`backward` false) or of the backward; known after prepare().
  virtual size_t workspace_bytes(bool backward) const = 0;
  virtual void forward(const AttnTensors& t, void* stream) = 0;
  // Rows with backward = false never get here.
  virtual void backward(const AttnTensors& t, void* stream) = 0;
  // Seconds prepare() took building plans (reported apart from the launches); nullopt: no plans.
  virtual std::optional<double> plan_seconds() const { return std::nullopt; }
  // What the implementation chose for this problem (tiles, engines), for a result's extra.
  virtual nlohmann::json describe() const { return nlohmann::json::object(); }
};

struct AttnImplRow {
  std::string_view name;   // gcbench attn --impl, train --attn, the "impl" parameter of results
  std::string_view label;  // in messages ("the unfused baseline is forward-only")
  std::vector<DType> dtypes;
  std::vector<int> head_dims;  // empty: any the engine accepts (unsupported() says)
  bool backward;               // has a backward pass (forward-only rows are WAIVED for bwd and fwdbwd)
  // The training backend may run it: a forward that writes the LSE and a backward.
  bool trains;
  // Materialises the b·h·s×s score matrix in HBM: `gcbench attn`'s unfused IO and memory models,
  // and one more 16-bit rounding (S before the softmax), so `tolerance_factor` times the error
  // tolerance of the fused kernels.
  bool scores_in_hbm;
  double tolerance_factor;
  std::string_view missing;  // why this binary lacks it (when make is null)
  // A kernel for (type, shape, with backward) on `device`; null when this binary lacks it.
  std::unique_ptr<AttnKernel> (*make)(DType t, const AttnShape& a, bool backward, int device);
};

// Every implementation, in the order of their ids (and of --impl's help).
const std::vector<AttnImplRow>& attention_impls();
const AttnImplRow& attention_impl(AttnImplId id);
std::string_view attention_impl_name(AttnImplId id);
std::optional<AttnImplId> find_attention_impl(std::string_view name);
// The ids of every row, and of the rows that train, in row order.
std::vector<AttnImplId> attention_impl_ids();
std::vector<AttnImplId> training_attention_impls();

// Why the row cannot take (t, head dim) by its type and head-dim lists, or is absent from this
// binary ("" when neither), before anything is made.
std::string attention_impl_refuses(AttnImplId id, DType t, int head_dim);

}  // namespace gcb::kernels::attn
