// The cuDNN SDPA graph descriptions (kernels/attention/sdpa_graph.cpp) without cuDNN or a GPU:
// op order of the Route B forward and backward graphs (cuDNN pattern-matches them to its fused
// kernels, so the order is the contract), BHSD dims/strides of every caller tensor, K (and V in
// the backward graph) transposed by strides, Stats FP32 [b,h,s,1], and a topological check.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "kernels/attention/sdpa_graph.hpp"

namespace gcb::kernels::attn {
namespace {

std::string op_label(const GraphOp& o) {
  switch (o.kind) {
    case OpKind::matmul: return "matmul";
    case OpKind::reshape: return "reshape";
    case OpKind::sdpa_forward: return "sdpa_fwd";
    case OpKind::reduction: return o.reduction == ReductionMode::max ? "reduce_max" : "reduce_add";
    case OpKind::pointwise: break;
  }
  switch (o.pointwise) {
    case PointwiseMode::mul: return "mul";
    case PointwiseMode::sub: return "sub";
    case PointwiseMode::add: return "add";
    case PointwiseMode::div: return "div";
    case PointwiseMode::exp: return "exp";
    case PointwiseMode::log: return "log";
    case PointwiseMode::identity: return "identity";
    case PointwiseMode::gen_index: return o.axis == 2 ? "gen_index_2" : "gen_index_3";
    case PointwiseMode::cmp_ge: return "cmp_ge";
    case PointwiseMode::binary_select: return "binary_select";
  }
  return "?";
}

std::vector<std::string> labels(const SdpaGraph& g) {
  std::vector<std::string> out;
  for (const auto& o : g.ops) out.push_back(op_label(o));
  return out;
}

// b=2, h=3, s=5, d=8: all dims distinct, so a swapped dim or stride cannot pass by accident.
const AttnShape kShape{2, 3, 5, 8, false};
AttnShape causal_shape() {
  AttnShape a = kShape;
  a.causal = true;
  return a;
}

void expect_bhsd(const GraphTensor& t, GraphType io) {
  SCOPED_TRACE(t.name);
  EXPECT_EQ(t.kind, TensorKind::device);
  EXPECT_EQ(t.type, io);
  EXPECT_EQ(t.dims, (std::array<int64_t, 4>{2, 3, 5, 8}));
  EXPECT_EQ(t.strides, (std::array<int64_t, 4>{3 * 5 * 8, 5 * 8, 8, 1}));
}
void expect_transposed(const GraphTensor& t, GraphType io) {
  SCOPED_TRACE(t.name);
  EXPECT_EQ(t.kind, TensorKind::device);
  EXPECT_EQ(t.type, io);
  EXPECT_EQ(t.dims, (std::array<int64_t, 4>{2, 3, 8, 5}));                 // [b,h,d,s]
  EXPECT_EQ(t.strides, (std::array<int64_t, 4>{3 * 5 * 8, 5 * 8, 1, 8}));  // same BHSD memory
}
void expect_stats(const GraphTensor& t) {
  EXPECT_EQ(t.kind, TensorKind::device);
  EXPECT_EQ(t.type, GraphType::f32);
  EXPECT_EQ(t.dims, (std::array<int64_t, 4>{2, 3, 5, 1}));
  EXPECT_EQ(t.strides, (std::array<int64_t, 4>{3 * 5, 5, 1, 1}));
}

TEST(SdpaGraph, CausalForwardHasTheCompositeOpsInOrder) {
  const SdpaGraph g = sdpa_composite_forward_graph(GraphType::bf16, causal_shape());
  const std::vector<std::string> want = {"matmul",        "mul",        "gen_index_2", "gen_index_3", "cmp_ge",
                                         "binary_select", "reduce_max", "sub",         "exp",         "reduce_add",
                                         "log",           "add",        "div",         "matmul"};
  EXPECT_EQ(labels(g), want);
  EXPECT_EQ(graph_problem(g), "");
}

TEST(SdpaGraph, NonCausalForwardHasNoMask) {
  const SdpaGraph g = sdpa_composite_forward_graph(GraphType::f16, kShape);
  const std::vector<std::string> want = {"matmul",     "mul", "reduce_max", "sub", "exp",
                                         "reduce_add", "log", "add",        "div", "matmul"};
  EXPECT_EQ(labels(g), want);
  EXPECT_EQ(graph_problem(g), "");
}

TEST(SdpaGraph, ForwardCallerTensorsAreBhsdWithKTransposedByStrides) {
  const SdpaGraph g = sdpa_composite_forward_graph(GraphType::bf16, causal_shape());
  expect_bhsd(g.tensor(kUidQ), GraphType::bf16);
  expect_transposed(g.tensor(kUidK), GraphType::bf16);
  expect_bhsd(g.tensor(kUidV), GraphType::bf16);
  expect_bhsd(g.tensor(kUidO), GraphType::bf16);
  expect_stats(g.tensor(kUidStats));
  const GraphTensor& scale = g.tensor(kUidScale);
  EXPECT_EQ(scale.kind, TensorKind::by_value);
  EXPECT_FLOAT_EQ(scale.value, static_cast<float>(1.0 / std::sqrt(8.0)));
  // Everything else is virtual (the graph holds no memory of its own) except the two scalars.
  for (const auto& t : g.tensors)
    if (t.uid >= kFirstInternalUid) {
      EXPECT_TRUE(t.kind == TensorKind::virtual_tensor || t.kind == TensorKind::by_value) << t.name;
    }
}

TEST(SdpaGraph, ForwardMaskComparesRowsAndColumnsAndSelectsMinusInfinity) {
  const SdpaGraph g = sdpa_composite_forward_graph(GraphType::bf16, causal_shape());
  const GraphOp& cmp = g.ops[4];
  ASSERT_EQ(op_label(cmp), "cmp_ge");
  EXPECT_EQ(cmp.inputs[0], g.ops[2].outputs[0]);  // row index ≥ column index: query i sees keys ≤ i
  EXPECT_EQ(cmp.inputs[1], g.ops[3].outputs[0]);
  EXPECT_EQ(g.tensor(cmp.outputs[0]).type, GraphType::boolean);
  const GraphOp& select = g.ops[5];
  ASSERT_EQ(select.inputs.size(), 3u);
  EXPECT_EQ(select.inputs[0], g.ops[1].outputs[0]);  // the scaled scores
  const GraphTensor& fill = g.tensor(select.inputs[1]);
  EXPECT_EQ(fill.kind, TensorKind::by_value);
  EXPECT_TRUE(std::isinf(fill.value) && fill.value < 0);
  EXPECT_EQ(select.inputs[2], cmp.outputs[0]);
}

TEST(SdpaGraph, ForwardStatsIsMaxPlusLogSumAndPIsInTheIoType) {
  const SdpaGraph g = sdpa_composite_forward_graph(GraphType::f16, kShape);
  const GraphOp& add = g.ops[7];
  ASSERT_EQ(op_label(add), "add");
  EXPECT_EQ(add.outputs[0], kUidStats);
  EXPECT_EQ(add.inputs[0], g.ops[2].outputs[0]);  // the row max
  EXPECT_EQ(add.inputs[1], g.ops[6].outputs[0]);  // log of the row sum
  const GraphOp& bmm2 = g.ops.back();
  EXPECT_EQ(g.tensor(bmm2.inputs[0]).type, GraphType::f16);
  EXPECT_EQ(bmm2.inputs[1], kUidV);
  EXPECT_EQ(bmm2.outputs[0], kUidO);
}

TEST(SdpaGraph, BackwardHasTheCompositeOpsInOrder) {
  const std::vector<std::string> head = {"mul", "reduce_add", "mul", "matmul", "mul", "sub"};
  const std::vector<std::string> mask = {"gen_index_2", "gen_index_3", "cmp_ge", "binary_select"};
  const std::vector<std::string> tail = {"exp", "reshape", "matmul", "matmul",  "sub",    "mul",
                                         "mul", "reshape", "matmul", "reshape", "matmul", "identity"};
  std::vector<std::string> plain = head, causal = head;
  plain.insert(plain.end(), tail.begin(), tail.end());
  causal.insert(causal.end(), mask.begin(), mask.end());
  causal.insert(causal.end(), tail.begin(), tail.end());
  const SdpaGraph g = sdpa_composite_backward_graph(GraphType::bf16, kShape);
  const SdpaGraph gc = sdpa_composite_backward_graph(GraphType::bf16, causal_shape());
  EXPECT_EQ(labels(g), plain);
  EXPECT_EQ(labels(gc), causal);
  EXPECT_EQ(graph_problem(g), "");
  EXPECT_EQ(graph_problem(gc), "");
}

TEST(SdpaGraph, BackwardCallerTensorsAndScratch) {
  const SdpaGraph g = sdpa_composite_backward_graph(GraphType::f16, causal_shape());
  for (int64_t uid : {kUidQ, kUidO, kUidDO, kUidDQ, kUidDK, kUidDV}) expect_bhsd(g.tensor(uid), GraphType::f16);
  expect_transposed(g.tensor(kUidK), GraphType::f16);
  expect_transposed(g.tensor(kUidV), GraphType::f16);
  expect_stats(g.tensor(kUidStats));
  // Two FP32 scratch tensors: D = rowsum(dO∘O) [b,h,s,1] and the dQ accumulator [b,h,s,d].
  size_t total = 0;
  const auto slots = scratch_layout(g, &total);
  ASSERT_EQ(slots.size(), 2u);
  EXPECT_EQ(tensor_bytes(g.tensor(slots[0].uid)), 2u * 3 * 5 * 4);
  EXPECT_EQ(tensor_bytes(g.tensor(slots[1].uid)), 2u * 3 * 5 * 8 * 4);
  EXPECT_EQ(slots[0].offset, 0u);
  EXPECT_EQ(slots[1].offset, 256u);  // 120 bytes rounded up to the 256-byte slot alignment
  EXPECT_EQ(total, 256u + 1024u);    // 960 bytes rounded up
  // dQ = IDENTITY(dQ_accum), written by matmul(dS, K) where K is a reshape of the K_T input.
  const GraphOp& last = g.ops.back();
  EXPECT_EQ(last.outputs[0], kUidDQ);
  EXPECT_EQ(last.inputs[0], slots[1].uid);
}

TEST(SdpaGraph, DqAccumulatorIsZeroedBeforeExecuteOnlyBeforeCudnn96) {
  const SdpaGraph g = sdpa_composite_backward_graph(GraphType::bf16, causal_shape());
  size_t total = 0;
  const auto slots = scratch_layout(g, &total);
  const auto zero = scratch_to_zero(g, 90500);
  ASSERT_EQ(zero.size(), 1u);  // the dQ accumulator, not D (which the graph writes in full)
  EXPECT_EQ(zero[0].offset, slots[1].offset);
  EXPECT_EQ(zero[0].bytes, tensor_bytes(g.tensor(slots[1].uid)));
  EXPECT_TRUE(scratch_to_zero(g, 90600).empty());
  EXPECT_TRUE(scratch_to_zero(g, 91900).empty());
  // Forward graphs accumulate nothing in scratch.
  EXPECT_TRUE(scratch_to_zero(sdpa_composite_forward_graph(GraphType::bf16, causal_shape()), 90000).empty());
}

TEST(SdpaGraph, UnifiedForwardIsOneOp) {
  const SdpaGraph g = sdpa_unified_forward_graph(GraphType::bf16, kShape);
  ASSERT_EQ(g.ops.size(), 1u);
  EXPECT_EQ(g.ops[0].inputs, (std::vector<int64_t>{kUidQ, kUidK, kUidV, kUidScale}));
  EXPECT_EQ(g.ops[0].outputs, (std::vector<int64_t>{kUidO, kUidStats}));
  expect_bhsd(g.tensor(kUidK), GraphType::bf16);  // the unified op takes K as [b,h,s,d]
  expect_stats(g.tensor(kUidStats));
  EXPECT_EQ(graph_problem(g), "");
}

// The topological check can fail: each broken graph is reported.
TEST(SdpaGraph, ProblemsAreReported) {
  SdpaGraph g = sdpa_composite_forward_graph(GraphType::bf16, kShape);
  std::swap(g.ops[0], g.ops[1]);  // the scale reads S before the matmul produces it
  EXPECT_NE(graph_problem(g).find("before any op produces it"), std::string::npos) << graph_problem(g);

  g = sdpa_composite_forward_graph(GraphType::bf16, kShape);
  g.ops.back().outputs[0] = g.ops.front().outputs[0];  // S produced twice
  EXPECT_NE(graph_problem(g), "");

  g = sdpa_composite_forward_graph(GraphType::bf16, kShape);
  g.tensors.push_back(g.tensors.front());  // duplicate uid
  EXPECT_NE(graph_problem(g).find("used twice"), std::string::npos);

  g = sdpa_composite_forward_graph(GraphType::bf16, kShape);
  g.ops.erase(g.ops.begin() + 7);  // no op writes Stats' producer: log_sum is never read
  EXPECT_NE(graph_problem(g).find("never read"), std::string::npos) << graph_problem(g);
}

TEST(SdpaGraph, IoTypeIs16Bit) {
  EXPECT_EQ(graph_io_type(DType::f16), GraphType::f16);
  EXPECT_EQ(graph_io_type(DType::bf16), GraphType::bf16);
  EXPECT_ANY_THROW(graph_io_type(DType::f32));
}

}  // namespace
}  // namespace gcb::kernels::attn
