// The SDPA graphs as plain data (see sdpa_graph.hpp). Op lists follow cudnn-frontend's
// CompositeSDPANode forward (node/scaled_dot_product_flash_attention.h: bmm1, attention scale,
// causal mask, softmax with stats from node/softmax.h, bmm2 with P in the I/O type) and
// CompositeSDPABackwardNode (dO∘O row sums into an FP32 tensor, P recomputed from Stats,
// transposes as RESHAPE, dQ through an FP32 accumulator and IDENTITY), read for the op order and
// the tensor types, not copied; the cuDNN backend graph API docs and NVIDIA/cudnn-frontend.
#include "kernels/attention/sdpa_graph.hpp"

#include <fmt/format.h>

#include <limits>
#include <map>
#include <set>

#include "core/error.hpp"

namespace gcb::kernels::attn {

namespace {

using Dims = std::array<int64_t, 4>;

Dims row_major(const Dims& d) { return {d[1] * d[2] * d[3], d[2] * d[3], d[3], 1}; }

// Appends tensors and ops; internal tensors get uids from kFirstInternalUid on.
class Builder {
 public:
  SdpaGraph g;

  int64_t add(int64_t uid, std::string name, Dims dims, Dims strides, GraphType type, TensorKind kind, float value = 0,
              bool accumulated = false) {
    g.tensors.push_back(GraphTensor{uid, std::move(name), dims, strides, type, kind, value, accumulated});
    return uid;
  }
  int64_t scalar(std::string name, float value, int64_t uid = 0) {
    return add(uid ? uid : next_++, std::move(name), {1, 1, 1, 1}, {1, 1, 1, 1}, GraphType::f32, TensorKind::by_value,
               value);
  }
  int64_t virt(std::string name, Dims dims, GraphType type = GraphType::f32) {
    return add(next_++, std::move(name), dims, row_major(dims), type, TensorKind::virtual_tensor);
  }
  int64_t scratch(std::string name, Dims dims, bool accumulated = false) {
    return add(next_++, std::move(name), dims, row_major(dims), GraphType::f32, TensorKind::scratch, 0, accumulated);
  }
  const Dims& dims(int64_t uid) const { return g.tensor(uid).dims; }

  void op(GraphOp o) { g.ops.push_back(std::move(o)); }
  // Pointwise op writing `out`, or a new FP32 virtual tensor shaped like its first input.
  int64_t pw(PointwiseMode m, std::vector<int64_t> in, std::string name, int64_t out = 0,
             GraphType compute = GraphType::f32) {
    if (!out) out = virt(name, dims(in.front()));
    GraphOp o;
    o.kind = OpKind::pointwise;
    o.pointwise = m;
    o.compute = compute;
    o.inputs = std::move(in);
    o.outputs = {out};
    o.name = std::move(name);
    op(std::move(o));
    return out;
  }
  // Row reduction over the last axis: [b,h,s,x] → [b,h,s,1].
  int64_t reduce(ReductionMode m, int64_t in, std::string name, int64_t out = 0) {
    if (!out) {
      Dims d = dims(in);
      d[3] = 1;
      out = virt(name, d);
    }
    GraphOp o;
    o.kind = OpKind::reduction;
    o.reduction = m;
    o.inputs = {in};
    o.outputs = {out};
    o.name = std::move(name);
    op(std::move(o));
    return out;
  }
  int64_t matmul(int64_t a, int64_t b, std::string name, int64_t out = 0) {
    if (!out) out = virt(name, {dims(a)[0], dims(a)[1], dims(a)[2], dims(b)[3]});
    GraphOp o;
    o.kind = OpKind::matmul;
    o.inputs = {a, b};
    o.outputs = {out};
    o.name = std::move(name);
    op(std::move(o));
    return out;
  }
  // A virtual view of `in` with the last two dims (and strides) swapped, in type `type`.
  int64_t transpose(int64_t in, GraphType type, std::string name) {
    const GraphTensor& t = g.tensor(in);
    const Dims d{t.dims[0], t.dims[1], t.dims[3], t.dims[2]};
    const Dims st{t.strides[0], t.strides[1], t.strides[3], t.strides[2]};
    const int64_t out = add(next_++, name, d, st, type, TensorKind::virtual_tensor);
    GraphOp o;
    o.kind = OpKind::reshape;
    o.inputs = {in};
    o.outputs = {out};
    o.name = std::move(name);
    op(std::move(o));
    return out;
  }
  // Top-left causal mask (query i sees keys 0..i): keep S where row ≥ column, else −inf.
  int64_t causal_mask(int64_t s) {
    GraphOp row;
    row.kind = OpKind::pointwise;
    row.pointwise = PointwiseMode::gen_index;
    row.axis = 2;
    row.compute = GraphType::i32;
    row.inputs = {s};
    row.outputs = {virt("row_index", dims(s), GraphType::i32)};
    row.name = "gen_row_index";
    GraphOp col = row;
    col.axis = 3;
    col.outputs = {virt("col_index", dims(s), GraphType::i32)};
    col.name = "gen_col_index";
    op(row);
    op(col);
    const int64_t keep = virt("row_ge_col", dims(s), GraphType::boolean);
    pw(PointwiseMode::cmp_ge, {row.outputs[0], col.outputs[0]}, "row_ge_col", keep, GraphType::boolean);
    // −inf (not FLT_MIN): cudnn-frontend's get_negative_inf_value() for cuDNN ≥ 9.10.
    const int64_t neg_inf = scalar("negative_inf", -std::numeric_limits<float>::infinity());
    return pw(PointwiseMode::binary_select, {s, neg_inf, keep}, "causal_select");
  }

 private:
  int64_t next_ = kFirstInternalUid;
};

Dims bhsd(const AttnShape& a) { return {a.batch, a.heads, a.seq, a.head_dim}; }
Dims stats_dims(const AttnShape& a) { return {a.batch, a.heads, a.seq, 1}; }
// K (and V in the backward graph) as [b,h,d,s]: the same memory, dims and strides swapped.
Dims transposed_dims(const AttnShape& a) { return {a.batch, a.heads, a.head_dim, a.seq}; }
Dims transposed_strides(const AttnShape& a) {
  const Dims s = row_major(bhsd(a));
  return {s[0], s[1], s[3], s[2]};
}

}  // namespace

const GraphTensor& SdpaGraph::tensor(int64_t uid) const {
  for (const auto& t : tensors)
    if (t.uid == uid) return t;
  GCB_CHECK(false, fmt::format("SDPA graph has no tensor with uid {}", uid));
  return tensors.front();  // not reached
}

GraphType graph_io_type(DType t) {
  GCB_CHECK(t == DType::f16 || t == DType::bf16, "cuDNN SDPA graphs take fp16 or bf16");
  return t == DType::f16 ? GraphType::f16 : GraphType::bf16;
}

SdpaGraph sdpa_unified_forward_graph(GraphType io, const AttnShape& a) {
  Builder b;
  const Dims x = bhsd(a), st = row_major(x);
  for (const auto& [uid, name] :
       {std::pair{kUidQ, "Q"}, std::pair{kUidK, "K"}, std::pair{kUidV, "V"}, std::pair{kUidO, "O"}})
    b.add(uid, name, x, st, io, TensorKind::device);
  b.add(kUidStats, "Stats", stats_dims(a), row_major(stats_dims(a)), GraphType::f32, TensorKind::device);
  b.scalar("attn_scale", static_cast<float>(a.scale()), kUidScale);
  GraphOp o;
  o.kind = OpKind::sdpa_forward;
  o.inputs = {kUidQ, kUidK, kUidV, kUidScale};
  o.outputs = {kUidO, kUidStats};
  o.name = "sdpa_fwd";
  b.op(std::move(o));
  return std::move(b.g);
}

SdpaGraph sdpa_composite_forward_graph(GraphType io, const AttnShape& a) {
  Builder b;
  const Dims x = bhsd(a), st = row_major(x);
  b.add(kUidQ, "Q", x, st, io, TensorKind::device);
  b.add(kUidK, "K_T", transposed_dims(a), transposed_strides(a), io, TensorKind::device);
  b.add(kUidV, "V", x, st, io, TensorKind::device);
  b.add(kUidO, "O", x, st, io, TensorKind::device);
  b.add(kUidStats, "Stats", stats_dims(a), row_major(stats_dims(a)), GraphType::f32, TensorKind::device);
  const int64_t scale = b.scalar("attn_scale", static_cast<float>(a.scale()), kUidScale);

  int64_t s = b.matmul(kUidQ, kUidK, "bmm1_Q_KT");
  s = b.pw(PointwiseMode::mul, {s, scale}, "attn_scale_mul");
  if (a.causal) s = b.causal_mask(s);
  // Softmax with stats (node/softmax.h): M = max, E = exp(S − M), L = Σ E, Stats = M + log L,
  // P = E / L, stored in the I/O type because bmm2's A operand must be (frontend comment).
  const int64_t m = b.reduce(ReductionMode::max, s, "max");
  const int64_t e = b.pw(PointwiseMode::exp, {b.pw(PointwiseMode::sub, {s, m}, "sub_max")}, "exp");
  const int64_t l = b.reduce(ReductionMode::add, e, "sum_exp");
  b.pw(PointwiseMode::add, {m, b.pw(PointwiseMode::log, {l}, "log_sum")}, "stats", kUidStats);
  const int64_t p = b.virt("P", b.dims(e), io);
  b.pw(PointwiseMode::div, {e, l}, "div", p);
  b.matmul(p, kUidV, "bmm2_P_V", kUidO);
  return std::move(b.g);
}

SdpaGraph sdpa_composite_backward_graph(GraphType io, const AttnShape& a) {
  Builder b;
  const Dims x = bhsd(a), st = row_major(x);
  b.add(kUidQ, "Q", x, st, io, TensorKind::device);
  b.add(kUidK, "K_T", transposed_dims(a), transposed_strides(a), io, TensorKind::device);
  b.add(kUidV, "V_T", transposed_dims(a), transposed_strides(a), io, TensorKind::device);
  b.add(kUidO, "O", x, st, io, TensorKind::device);
  b.add(kUidDO, "dO", x, st, io, TensorKind::device);
  b.add(kUidStats, "Stats", stats_dims(a), row_major(stats_dims(a)), GraphType::f32, TensorKind::device);
  for (const auto& [uid, name] : {std::pair{kUidDQ, "dQ"}, std::pair{kUidDK, "dK"}, std::pair{kUidDV, "dV"}})
    b.add(uid, name, x, st, io, TensorKind::device);
  const int64_t scale = b.scalar("attn_scale", static_cast<float>(a.scale()), kUidScale);
  const int64_t one = b.scalar("one", 1.0f);

  // D = rowsum(dO∘O), kept in FP32 scratch (the frontend's softmax_sum: a non-virtual tensor).
  const int64_t d_sum =
      b.reduce(ReductionMode::add, b.pw(PointwiseMode::mul, {kUidDO, kUidO}, "mul_dO_O"), "reduce_dO_O");
  const int64_t d = b.pw(PointwiseMode::mul, {d_sum, one}, "softmax_sum", b.scratch("softmax_sum", stats_dims(a)));

  // P recomputed from Stats: exp(scale·QKᵀ − Stats), the mask applied after the subtraction.
  int64_t s = b.matmul(kUidQ, kUidK, "matmul_Q_KT");
  s = b.pw(PointwiseMode::mul, {s, scale}, "mul_s_attn_scale");
  s = b.pw(PointwiseMode::sub, {s, kUidStats}, "sub_s_stats");
  if (a.causal) s = b.causal_mask(s);
  const int64_t p = b.pw(PointwiseMode::exp, {s}, "exp_s");

  b.matmul(b.transpose(p, io, "reshape_P"), kUidDO, "matmul_PT_dO", kUidDV);
  int64_t ds = b.matmul(kUidDO, kUidV, "matmul_dO_VT");
  ds = b.pw(PointwiseMode::sub, {ds, d}, "sub_dP_softmax_sum");
  ds = b.pw(PointwiseMode::mul, {ds, p}, "mul_dP_P");
  ds = b.pw(PointwiseMode::mul, {ds, scale}, "mul_dS_attn_scale");
  b.matmul(b.transpose(ds, io, "reshape_dS"), kUidQ, "matmul_dST_Q", kUidDK);
  const int64_t dq_accum = b.scratch("dQ_accum", x, true);
  b.matmul(ds, b.transpose(kUidK, io, "reshape_K"), "matmul_dS_K", dq_accum);
  b.pw(PointwiseMode::identity, {dq_accum}, "identity_dQ", kUidDQ);
  return std::move(b.g);
}

std::string graph_problem(const SdpaGraph& g) {
  std::map<int64_t, const GraphTensor*> by_uid;
  for (const auto& t : g.tensors)
    if (!by_uid.emplace(t.uid, &t).second) return fmt::format("uid {} is used twice", t.uid);
  std::set<int64_t> produced, consumed;
  for (const auto& o : g.ops) {
    for (int64_t in : o.inputs) {
      const auto it = by_uid.find(in);
      if (it == by_uid.end()) return fmt::format("op {} reads unknown uid {}", o.name, in);
      const bool needs_producer =
          it->second->kind == TensorKind::virtual_tensor || it->second->kind == TensorKind::scratch;
      if (needs_producer && !produced.count(in))
        return fmt::format("op {} reads {} before any op produces it", o.name, it->second->name);
      consumed.insert(in);
    }
    for (int64_t out : o.outputs) {
      const auto it = by_uid.find(out);
      if (it == by_uid.end()) return fmt::format("op {} writes unknown uid {}", o.name, out);
      if (it->second->kind == TensorKind::by_value)
        return fmt::format("op {} writes the by-value {}", o.name, it->second->name);
      if (consumed.count(out)) return fmt::format("op {} writes {} after it was read", o.name, it->second->name);
      if (!produced.insert(out).second) return fmt::format("{} is produced twice", it->second->name);
    }
  }
  for (const auto& t : g.tensors) {
    if (t.kind == TensorKind::virtual_tensor && !produced.count(t.uid))
      return fmt::format("virtual {} is never produced", t.name);
    if (t.kind == TensorKind::virtual_tensor && !consumed.count(t.uid))
      return fmt::format("virtual {} is never read", t.name);
    if (t.kind == TensorKind::scratch && !consumed.count(t.uid)) return fmt::format("scratch {} is never read", t.name);
  }
  return {};
}

size_t tensor_bytes(const GraphTensor& t) {
  int64_t last = 0;  // offset of the last element + 1
  for (size_t i = 0; i < 4; ++i) last += (t.dims[i] - 1) * t.strides[i];
  const size_t element = t.type == GraphType::f32 || t.type == GraphType::i32 ? 4
                         : t.type == GraphType::boolean                       ? 1
                                                                              : 2;
  return static_cast<size_t>(last + 1) * element;
}

std::vector<ScratchSlot> scratch_layout(const SdpaGraph& g, size_t* total_bytes) {
  constexpr size_t kAlign = 256;  // cudaMalloc's alignment, kept for every slot
  std::vector<ScratchSlot> slots;
  size_t offset = 0;
  for (const auto& t : g.tensors) {
    if (t.kind != TensorKind::scratch) continue;
    slots.push_back({t.uid, offset});
    offset += (tensor_bytes(t) + kAlign - 1) / kAlign * kAlign;
  }
  *total_bytes = offset;
  return slots;
}

std::vector<ScratchZero> scratch_to_zero(const SdpaGraph& g, int cudnn_version) {
  std::vector<ScratchZero> zero;
  if (cudnn_version >= 90600) return zero;
  size_t total = 0;
  for (const auto& slot : scratch_layout(g, &total)) {
    const GraphTensor& t = g.tensor(slot.uid);
    if (t.accumulated) zero.push_back({slot.offset, tensor_bytes(t)});
  }
  return zero;
}

}  // namespace gcb::kernels::attn
