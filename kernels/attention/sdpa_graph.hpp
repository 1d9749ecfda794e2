// A plain C++ description of the cuDNN SDPA operation graphs (tensors with uid, dims, strides,
// type and kind; ops with kind, inputs and outputs), built here without any cuDNN header so the
// graphs can be unit-tested on a machine without a GPU. cudnn_backend.cpp lowers a description to
// cudnnBackend descriptors. The graphs follow NVIDIA/cudnn-frontend's lowering: Route A (the unified
// SDPA_FWD op) and Route B (the composite forward and backward graphs of cudnn-frontend's
// CompositeSDPANode / CompositeSDPABackwardNode, node/softmax.h), which cuDNN pattern-matches
// to its fused flash kernels; the op order and tensor types must match that pattern exactly.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/dtype.hpp"
#include "kernels/attention/attention_shape.hpp"

namespace gcb::kernels::attn {

enum class GraphType { f16, bf16, f32, i32, boolean };

// Who owns a tensor's memory: the caller (Q, K, V, O, Stats, dO, dQ, dK, dV), the graph's own
// FP32 scratch carved out of the workspace (backward: D = rowsum(dO∘O), the dQ accumulator), a
// host scalar passed by value (attention scale, −inf, 1), or nobody (virtual: never in memory).
enum class TensorKind { device, scratch, by_value, virtual_tensor };

struct GraphTensor {
  int64_t uid = 0;
  std::string name;
  std::array<int64_t, 4> dims{}, strides{};
  GraphType type = GraphType::f32;
  TensorKind kind = TensorKind::virtual_tensor;
  float value = 0;           // by_value only
  bool accumulated = false;  // scratch only: the engine adds into it (the dQ accumulator)
};

enum class OpKind { matmul, pointwise, reduction, reshape, sdpa_forward };
enum class PointwiseMode { mul, sub, add, div, exp, log, identity, gen_index, cmp_ge, binary_select };
enum class ReductionMode { max, add };

// Inputs by position: matmul {A, B} → {C}; pointwise {X[, B[, T]]} → {Y} (binary_select: Y =
// T ? X : B); reduction {X} → {Y}; reshape {X} → {Y}; sdpa_forward {Q, K, V, scale} → {O, Stats}.
struct GraphOp {
  OpKind kind = OpKind::pointwise;
  PointwiseMode pointwise = PointwiseMode::identity;
  ReductionMode reduction = ReductionMode::add;
  int64_t axis = 0;                    // gen_index: the dimension whose index is generated
  GraphType compute = GraphType::f32;  // math precision of the op
  std::vector<int64_t> inputs, outputs;
  std::string name;
};

struct SdpaGraph {
  std::vector<GraphTensor> tensors;
  std::vector<GraphOp> ops;
  const GraphTensor& tensor(int64_t uid) const;  // throws gcb::Fault for an unknown uid
};

// Fixed uids of the tensors the caller binds (the others are numbered from kFirstInternalUid).
enum SdpaUid : int64_t { kUidQ = 1, kUidK, kUidV, kUidO, kUidStats, kUidDO, kUidDQ, kUidDK, kUidDV, kUidScale };
inline constexpr int64_t kFirstInternalUid = 100;

// 16-bit I/O type of the graphs (fp16 or bf16); throws gcb::Fault for other types.
GraphType graph_io_type(DType t);

// Route A: the unified SDPA_FWD op (cuDNN ≥ 9.13.1, non-causal only at 9.19).
SdpaGraph sdpa_unified_forward_graph(GraphType io, const AttnShape& a);
// Route B forward: QKᵀ, scale, [causal mask], softmax with Stats = max + log Σexp, PV.
SdpaGraph sdpa_composite_forward_graph(GraphType io, const AttnShape& a);
// Route B backward: D = rowsum(dO∘O); P = exp(scale·QKᵀ [masked] − Stats); dV = Pᵀ dO;
// dS = scale·P∘(dO Vᵀ − D); dK = dSᵀ Q; dQ = dS K via an FP32 accumulator.
SdpaGraph sdpa_composite_backward_graph(GraphType io, const AttnShape& a);

// "" when the graph is well formed: uids unique, every op input defined (non-virtual, or the
// output of an earlier op), every virtual tensor produced exactly once and consumed, every
// non-virtual output produced once, no op writes a by-value tensor or a caller's input.
std::string graph_problem(const SdpaGraph& g);

// Bytes of one tensor in memory (by its dims, strides and type), and the scratch layout: each
// scratch tensor at a 256-byte-aligned offset after the cuDNN workspace.
size_t tensor_bytes(const GraphTensor& t);
struct ScratchSlot {
  int64_t uid;
  size_t offset;  // from the start of the scratch area
};
std::vector<ScratchSlot> scratch_layout(const SdpaGraph& g, size_t* total_bytes);

// Scratch the caller must zero before every execute with cuDNN `cudnn_version`
// (cudnnGetVersion()): the accumulators before 9.6.0, which did not clear them themselves
// (NVIDIA/cudnn-frontend include/cudnn_frontend/node/scaled_dot_product_flash_attention.h: "prior
// to cuDNN 9.6.0, dQ_accum needed to be memset by frontend"). Offsets as in scratch_layout.
struct ScratchZero {
  size_t offset, bytes;
};
std::vector<ScratchZero> scratch_to_zero(const SdpaGraph& g, int cudnn_version);

}  // namespace gcb::kernels::attn
