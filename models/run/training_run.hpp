// A training run as `gcbench train` (and any other caller) asks for it: one model, one global
// batch, one or more layouts, each run for a few timed steps on the world's ranks (threads, or
// processes under mpirun/srun), each giving one result "train/<layout>" in the suite's schema:
// step time (the harness's samples), tokens/s, MFU / HFU, the time split, and memory per category,
// communication per kind and the pipeline bubble, measured next to theory.hpp's formulas.
#pragma once

#include <functional>
#include <cstdint>
#include <string>
#include <vector>

#include "models/backend/backend.hpp"
#include "models/backend/backend_factory.hpp"
#include "models/model/sweep.hpp"
#include "models/model/train_options.hpp"
#include "reports/result.hpp"

namespace gcb::models {

// n of the n³ sgemm that measures a CPU host's peak (measure_sgemm_peak) for `train`, `run`'s
// train entry and `plan`: one size everywhere (a 256³ sgemm reaches a fraction of what the step's
// larger matmuls do, so MFU against it passed 100 %).
inline constexpr int kHostPeakSize = 1024;

struct TrainRequest {
  // Model, micro-batch, recomputation, precision, seed, data and optimizer. Each layout sets
  // zero, sp, schedule and overlap; grad_accum follows from the global batch.
  TrainOptions base;
  std::vector<LayoutSpec> layouts;
  int ranks = 1;         // dp·tp·pp of every layout
  int global_batch = 0;  // sequences per step; 0 = ranks × micro-batch
  int steps = 5, warmup = 1;
  // The compute backend's row of the table (backend_factory.hpp), as `train --backend` chose it.
  ComputeBackend backend = compute_backend("cpu");
  AttentionRequest attn =
      AttentionRequest::automatic;  // the CUDA backend's attention kernels: auto or a registry row that trains
  bool lt_gelu = false;             // the CUDA backend's MLP GELU in cuBLASLt's epilogue (unvalidated)
  double peak_flops = 0;    // FLOP/s, the MFU denominator; 0 = the backend's (GPU: spec table; CPU: measured sgemm)
  std::string peak_source;  // where a given peak comes from
  int peak_size = kHostPeakSize;  // n of the n³ sgemm that measures the CPU peak
  std::string dump;               // write every step's loss and the final weights (hex floats) here
  std::string init_from;          // start from these weights (Hugging Face GPT-2 safetensors, hf_gpt2.hpp)
  std::string save;               // write the final weights there in the same format (one layout only)
  double timeout = 300;           // seconds one step (warm-up included) or a wait for another rank may take
  // Called after each layout (run or WAIVED) with its 1-based index, the layout count and its
  // result: a sweep's progress (bench/train prints it). Empty = nothing called.
  std::function<void(size_t index, size_t count, const Result& result)> on_layout;
};

// The global batch in sequences (the request's, or ranks × micro-batch).
int global_batch(const TrainRequest& r);
// The options of one layout of the request. On a device backend whose GPU cannot hold the whole LM
// head's logits (device_fit.hpp), logit_rows is the most rows that fit when the request left it 0.
TrainOptions layout_options(const TrainRequest& r, const LayoutSpec& l);
// One layout of a request, resolved once: its options (layout_options) and why it cannot run here
// ("" when it can; layout_unavailable). Every later step of a run reads the plan.
struct LayoutPlan {
  LayoutSpec spec;
  TrainOptions options;
  std::string unavailable;
};

// Everything that can be checked before any allocation (config, backend, layouts, divisibility,
// batch, steps, timeout, and host memory: a host backend's ranks on this host must fit in what
// is available, core/host_memory.hpp); gcb::UsageError with one line. In a sweep, a layout the
// model cannot take is left to layout_unavailable (a WAIVED row). resolve_request returns each
// layout's plan, in the request's order; check_request only checks.
std::vector<LayoutPlan> resolve_request(const TrainRequest& r);
void check_request(const TrainRequest& r);

// Runs every layout. Collective over the world when the process was started by a launcher.
// Returns the results on world rank 0 (and nothing on other ranks). A backend that cannot run on
// this machine (no GPU), or a layout that needs more GPUs than the host has, gives WAIVED rows
// with the reason instead.
std::vector<Result> run_training(const TrainRequest& r);

// Why layout `l` of the request, with its `options` (layout_options), cannot run here ("" when it
// can): the model refuses it (a sweep's layout; a single one is a UsageError in check_request),
// the backend is unavailable (no GPU),
// rank threads on a device backend need one GPU each (NCCL refuses two ranks of one communicator
// on the same GPU) and the host has fewer, or a rank's states and activations exceed the GPU's
// memory budget even with the head one row at a time (device_fit.hpp).
std::string layout_unavailable(const TrainRequest& r, const LayoutSpec& l, const TrainOptions& options);

// The CPU's MFU denominator, measured: FLOP/s of the CPU matmul on n×n×n over several timed
// repetitions (at least 5 and 0.3 s), with their spread so a result shows how steady the probe was.
struct PeakProbe {
  double best = 0;    // FLOP/s of the fastest repetition: the peak used for MFU / HFU
  double median = 0;  // FLOP/s of the median repetition
  double worst = 0;   // FLOP/s of the slowest repetition
  int repetitions = 0;
  int n = 0;
};
// Measured once per process and size: later calls return the first probe.
PeakProbe measure_sgemm_peak(int n = kHostPeakSize);
// The probe's figures as the result's extra "peak_probe" object (FLOP/s, count, and
// spread = 1 − median / best).
void record_peak_probe(Result& r, const PeakProbe& p);
// FLOP/s of `be`'s own bf16 GEMM on n×n×n timed on its timeline, best repetition: the peak of a
// GPU the spec table does not know.
double measure_backend_gemm_peak(Backend& be, int n);

}  // namespace gcb::models
