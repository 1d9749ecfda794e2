// The element-wise op names and the helpers that list and sum a step's element-wise calls (elementwise_ops.hpp:
// ew_op_name, add_ew, ew_bytes).
#include "models/planner/elementwise_ops.hpp"

namespace gcb::models::planner {

std::string_view ew_op_name(EwOp op) {
  switch (op) {
    case EwOp::layernorm_forward: return "layernorm_forward";
    case EwOp::layernorm_backward: return "layernorm_backward";
    case EwOp::bias_forward: return "bias_forward";
    case EwOp::bias_backward: return "bias_backward";
    case EwOp::residual_add: return "residual_add";
    case EwOp::gelu_forward: return "gelu_forward";
    case EwOp::gelu_backward: return "gelu_backward";
    case EwOp::embedding_forward: return "embedding_forward";
    case EwOp::embedding_backward: return "embedding_backward";
    case EwOp::cross_entropy_forward: return "cross_entropy_forward";
    case EwOp::cross_entropy_backward: return "cross_entropy_backward";
    case EwOp::fill: return "fill";
    case EwOp::adamw: return "adamw";
    case EwOp::attention_scores: return "attention_scores";
    case EwOp::grad_norm: return "grad_norm";
  }
  return "?";
}

void add_ew(std::vector<EwCall>& v, EwOp op, double elements, double bytes, double count) {
  if (elements <= 0 || count <= 0) return;
  for (EwCall& c : v)
    if (c.op == op && c.elements == elements && c.bytes == bytes) {
      c.count += count;
      return;
    }
  v.push_back({op, elements, bytes, count});
}

double ew_bytes(const std::vector<EwCall>& v) {
  double b = 0;
  for (const EwCall& c : v) b += c.count * c.bytes;
  return b;
}

}  // namespace gcb::models::planner
