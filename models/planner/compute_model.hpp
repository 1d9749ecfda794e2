// Seconds of the compute a training step runs, per call: GEMMs by shape, attention by shape and
// pass, element-wise calls on a roofline (elementwise_ops.hpp). Calibrated points (calibration.hpp) give the rate of
// their own shape; other shapes take a rate interpolated from the nearest measured shapes (inverse squared distance
// over log2 of the dimensions, geometric mean of the rates, 4 neighbours), and without any point a stated efficiency ×
// the device's peak.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <tuple>

#include "models/planner/calibration.hpp"
#include "models/planner/elementwise_ops.hpp"

namespace gcb::models::planner {

struct GemmShape {
  int64_t m = 0, n = 0, k = 0;  // D[m,n] = A[m,k]·B[k,n]: 2·m·n·k FLOPs
  auto operator<=>(const GemmShape&) const = default;
};

struct AttnShapeCall {
  int batch = 1, heads = 1, seq = 1, head_dim = 1;
  bool causal = true, backward = false;
  auto operator<=>(const AttnShapeCall&) const = default;
  double flops() const;  // FlashAttention convention: forward 4·b·h·s²·d (/2 causal), backward 2.5×
};

// What ranks sharing one host's cores see (a CPU cluster; 1 and no ceilings on GPUs, one rank per
// device), measured by `gcbench plan`'s host probe (bench/plan/plan_probe.cpp) with every rank
// working at once, as in training.
struct SharedHostRates {
  // Per element-wise op: elements/s a rank's loop reaches on cache-resident data (the roofline's
  // in-core ceiling); 0 = the memory roof only.
  std::array<double, kEwOps> ceiling{};
  // κ: the time of one GEMM with every rank running one at once over its time alone (the gemm
  // and attn calibrations ran alone). predict.hpp layout_contention() scales it by how many
  // other ranks a layout keeps busy while a rank computes.
  double contention = 1.0;
  std::string source;  // "" = none measured
};

class ComputeModel {
 public:
  // efficiency: the fraction of `peak_flops` an uncalibrated GEMM or attention call reaches;
  // memory_bandwidth 0 leaves element-wise work uncosted (said by elementwise_costed()).
  ComputeModel(double peak_flops, double efficiency, double memory_bandwidth, Calibration cal);

  double gemm_seconds(const GemmShape& s) const;
  double attention_seconds(const AttnShapeCall& a) const;
  double elementwise_seconds(double bytes) const;
  // count × max(bytes / memory bandwidth, elements / the op's ceiling).
  double elementwise_seconds(const EwCall& c) const;
  double elementwise_seconds(const std::vector<EwCall>& calls) const;
  void set_shared_host(const SharedHostRates& r) { shared_ = r; }
  const SharedHostRates& shared_host() const { return shared_; }

  bool gemm_calibrated() const { return !cal_.gemm.empty(); }
  bool attention_calibrated() const { return !cal_.attn.empty(); }
  bool elementwise_costed() const { return memory_bandwidth_ > 0; }
  double memory_bandwidth() const { return memory_bandwidth_; }
  double efficiency() const { return efficiency_; }
  double peak_flops() const { return peak_; }

 private:
  double peak_, efficiency_, memory_bandwidth_;
  Calibration cal_;
  SharedHostRates shared_;
  mutable std::map<GemmShape, double> gemm_cache_;
  mutable std::map<AttnShapeCall, double> attn_cache_;
};

}  // namespace gcb::models::planner
