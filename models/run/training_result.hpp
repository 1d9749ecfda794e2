// What the ranks of one layout measured, and the result built from it: step time statistics,
// throughput and MFU/HFU, the time split, memory per category, communication per kind and the
// pipeline bubble, each next to its formula (theory.hpp). A pure function of the measurement, so
// it is tested without running anything.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "models/backend/backend.hpp"
#include "models/model/comm_stats.hpp"
#include "models/model/sweep.hpp"
#include "models/model/train_options.hpp"
#include "reports/result.hpp"

namespace gcb::models {

// Phases of the time split (exclusive seconds per step), in report order.
const std::vector<std::string>& train_phase_names();

// One rank's figures (all ranks' are gathered to rank 0).
struct RankFigures {
  double step_median = 0, step_p10 = 0, step_p90 = 0, step_mean = 0;
  double loss = 0;                  // the last step's
  double matmul = 0;                // seconds per step inside gemm (span)
  double comm_lane = 0;             // seconds per step the overlap lane was busy
  std::vector<double> phases;       // per train_phase_names(), seconds per step
  std::vector<double> memory_peak;  // per MemCategory, bytes
  double sm_clock_mhz = 0;          // NVML after the timed steps (0: no GPU or no NVML)
  uint64_t throttle = 0;            // NVML slowdown reasons seen during any timed step (kThrottleMask bits)
};

struct LayoutMeasurement {
  LayoutSpec layout;
  TrainOptions options;  // of this layout
  int ranks = 1;
  int global_batch = 1;
  std::vector<RankFigures> ranks_figures;    // by world rank
  std::vector<double> samples;               // rank 0's step times
  std::vector<double> losses;                // rank 0's losses of every step (warm-up included)
  std::vector<double> grad_norms;            // the same steps' global gradient norms (NaN: clipping off)
  std::vector<double> lrs;                   // the same steps' learning rates
  MemoryStats memory;                        // rank 0 at the end, engine alive
  std::optional<MemoryStats> device_memory;  // the same, as the device allocator took it (device backends)
  MemoryStats host_memory;                   // rank 0's host-side model states (--offload optimizer)
  OffloadBytes offload;                      // rank 0's last step: bytes copied device ↔ host
  CommStats comm;                            // rank 0's last step
  std::string backend;
  int blas_threads = 0;
  std::string timer = "host steady_clock";           // what timed the steps (the backend's timeline)
  BackendNotes notes;                                // rank 0's backend: device, kernels chosen, allocator counters
  std::vector<uint64_t> sample_flags;                // rank 0: NVML slowdown reasons per timed step
  nlohmann::json clocks = nlohmann::json::object();  // rank 0: NVML before and after the timed steps
};

// The SM clock (MHz) of one NVML sample as a run records it (clocks.before / after: an object
// whose fields are null where NVML gave nothing), 0 when the sample or its SM clock is null.
double sampled_sm_clock(const nlohmann::json& sample);

// peak: FLOP/s for MFU (peak_source says where it comes from).
Result training_result(const LayoutMeasurement& m, double peak, const std::string& peak_source);

// The row of a layout that did not run, and why (no GPU, too few GPUs, …).
Result waived_training_result(const LayoutSpec& l, const TrainOptions& o, int global_batch, const std::string& backend,
                              const std::string& reason);

}  // namespace gcb::models
