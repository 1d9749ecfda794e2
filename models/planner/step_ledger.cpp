// step_ledger (step_ledger.hpp): a stage's step work grouped into kernel families with launches, FLOPs, compulsory
// bytes and floors.
#include "models/planner/step_ledger.hpp"

#include <algorithm>
#include <array>

#include "core/dtype.hpp"

namespace gcb::models::planner {

double LedgerRow::floor_seconds(double peak_flops, double bandwidth) const {
  if (!device_memory) return 0.0;
  const double compute = peak_flops > 0 ? flops / peak_flops : 0.0;
  const double memory = bandwidth > 0 ? bytes / bandwidth : 0.0;
  return std::max(compute, memory);
}

std::vector<LedgerRow> step_ledger(const TrainOptions& o, const ParallelLayout& lay, int stage) {
  const StageWork w = stage_work(o, lay, stage);
  const double m = o.grad_accum;
  const double A = static_cast<double>(dtype_size(precision_policy(o.precision).activations));
  LedgerRow gemm{"gemm"}, attn_f{"attention_forward"}, attn_b{"attention_backward"};
  std::array<LedgerRow, kEwOps> ew{};
  for (size_t k = 0; k < kEwOps; ++k) ew[k].family = std::string(ew_op_name(static_cast<EwOp>(k)));
  for (const PassWork* pass : {&w.forward, &w.backward, &w.recompute}) {
    for (const GemmCall& g : pass->gemm) {
      const auto M = static_cast<double>(g.shape.m), N = static_cast<double>(g.shape.n),
                 K = static_cast<double>(g.shape.k);
      gemm.launches += m * g.count;
      gemm.flops += m * g.count * 2.0 * M * N * K;
      gemm.bytes += m * g.count * A * (M * K + K * N + M * N);
    }
    for (const AttnCall& a : pass->attn) {
      const AttnShapeCall& s = a.shape;
      const double qkvo = static_cast<double>(s.batch) * s.heads * s.seq * s.head_dim;  // elements of one of q, k, v, o
      const double lse = 4.0 * s.batch * s.heads * s.seq;
      LedgerRow& row = s.backward ? attn_b : attn_f;
      row.launches += m * a.count;
      row.flops += m * a.count * s.flops();
      // Forward: q, k, v in, o and the log-sum-exp out; backward: q, k, v, o, dO and the log-sum-exp
      // in, dQ, dK, dV out.
      row.bytes += m * a.count * (s.backward ? 8.0 * A * qkvo + lse : 4.0 * A * qkvo + lse);
    }
    for (const EwCall& e : pass->elementwise) {
      LedgerRow& row = ew[static_cast<size_t>(e.op)];
      row.launches += m * e.count;
      row.bytes += m * e.count * e.bytes;
    }
  }
  for (const EwCall& e : w.optimizer) {
    LedgerRow& row = ew[static_cast<size_t>(e.op)];
    row.launches += e.count;
    row.bytes += e.count * e.bytes;
  }
  std::vector<LedgerRow> rows;
  for (const LedgerRow& r : {gemm, attn_f, attn_b})
    if (r.launches > 0) rows.push_back(r);
  for (const LedgerRow& r : ew)
    if (r.launches > 0) rows.push_back(r);
  for (size_t k = 0; k < kCommKinds; ++k) {
    const auto kind = static_cast<CommKind>(k);
    const double calls = step_comm_calls(w, kind, o.grad_accum);
    if (calls <= 0) continue;
    rows.push_back(
        {"comm:" + std::string(comm_kind_name(kind)), calls, 0.0, step_comm_bytes(w, kind, o.grad_accum), false});
  }
  const double copies = w.offload_d2h + w.offload_h2d + w.swap_d2h + w.swap_h2d;
  if (copies > 0) rows.push_back({"offload_copies", 0.0, 0.0, copies, false});
  if (w.host_adamw_bytes > 0) rows.push_back({"host_adamw", 0.0, 0.0, w.host_adamw_bytes, false});
  return rows;
}

}  // namespace gcb::models::planner
