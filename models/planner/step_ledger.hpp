// The step ledger: one rank's training step (of a pipeline stage) as kernel families — GEMMs,
// attention forward and backward, each element-wise op, each collective kind, the host copies of
// offload — with launches, FLOPs and bytes moved per step from stage_work (the planner's op-by-op
// account of the engine), and each family's floor at a device's peak FLOP/s and memory bandwidth:
// max(FLOPs / peak, bytes / bandwidth). Bytes are compulsory traffic: every GEMM operand read once
// and its output written once (activation dtype), flash attention's q, k, v, o (and forward's
// log-sum-exp; backward also dO, dQ, dK, dV) once, an element-wise op's loop as step_work counts
// it. A lease's phase timings are read against it, family by family (`gcbench train --explain`).
#pragma once

#include <string>
#include <vector>

#include "models/planner/step_work.hpp"

namespace gcb::models::planner {

struct LedgerRow {
  std::string family;         // "gemm", "attention_forward", an element-wise op, "comm:<kind>", "offload_copies"
  double launches = 0;        // calls per step
  double flops = 0;           // per step
  double bytes = 0;           // per step: memory traffic (comm: the logical buffers; copies: bytes over the host link)
  bool device_memory = true;  // bytes move through device memory (false: a collective or a host-link copy)
  // max(FLOPs / peak, bytes / bandwidth) for device-memory rows, a term whose rate is unknown (≤ 0)
  // left out; known when some term could be computed (a row with FLOPs and a peak, or a bandwidth).
  double floor_seconds(double peak_flops, double bandwidth) const;
  bool floor_known(double peak_flops, double bandwidth) const {
    return device_memory && ((flops > 0 && peak_flops > 0) || bandwidth > 0);
  }
};

// Rows in a fixed order (GEMMs, attention, element-wise ops as EwOp orders them, collectives as
// CommKind orders them, offload copies), families without work left out.
std::vector<LedgerRow> step_ledger(const TrainOptions& o, const ParallelLayout& lay, int stage);

}  // namespace gcb::models::planner
