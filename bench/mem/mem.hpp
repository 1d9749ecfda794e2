// `gcbench mem`: HBM and host-DRAM bandwidth (STREAM family), copy engines vs SM copies over
// host↔device and device↔device paths with size sweeps and α–β fits, and pointer-chase latency.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <string>
#include <vector>

#include "bench/common/case.hpp"
#include "bench/common/cli.hpp"
#include "core/dtype.hpp"
#include "kernels/mem/stream_ops.hpp"

namespace gcb::bench {

// Every STREAM op of the table (kernels/mem/stream_ops.hpp), in its order.
std::vector<kernels::StreamOp> every_stream_op();

struct MemOptions {
  std::vector<std::string> groups = {"stream", "copy", "latency"};
  std::vector<kernels::StreamOp> kernels = every_stream_op();  // --kernels, parsed from the op table
  std::vector<DType> dtypes = {DType::f32};                    // --dtype, one of mem_dtypes()
  std::vector<int> vector_bytes = {16};
  uint64_t size = 0;  // bytes per STREAM array; 0 = 4 × the last-level cache (≥ 64 MiB)
  int threads = 0;    // host threads; 0 = OpenMP's default
  uint64_t copy_min = 4096, copy_max = uint64_t{1} << 30, copy_factor = 4;
  uint64_t latency_min = 4096, latency_max = 0;  // 0 = 4 × the last-level cache
  bool peers = true;                             // classic STREAM (host) and cudaMemcpy (GPU) in the same run
  // Host peer: rounds of (classic STREAM triad, gcbench fp64 triad), interleaved with the order
  // alternating, so host-bandwidth drift during the run hits both sides alike.
  int peer_rounds = 3;
};

// The element types of the STREAM kernels: fp32, fp64, bf16.
const std::vector<DType>& mem_dtypes();
// The most host threads --threads accepts: 8 per logical core.
int max_host_threads();
// Validates names and values; throws gcb::UsageError.
void validate(const MemOptions& o);
// Refuses sizes that cannot fit in the selected devices' memory (gcb::UsageError → exit 2).
void check_fits(const MemOptions& o, const DeviceSelection& sel);

// Cases on the host: STREAM kernels, the classic STREAM peer, pointer-chase latency.
CaseList host_mem_cases(const MemOptions& o, uint64_t seed);
// What the host part of a run will measure, printed before it starts as STREAM prints its array
// size: the array size and where it came from, threads, the pointer-chase range and the budget
// per case, a line each (at most 100 columns), e.g.
//   mem (host): STREAM arrays of 128 MiB (4 x last-level cache 32 MiB), 2 threads
//               pointer chase 4 KiB .. 128 MiB
//               at most 1 s of warm-up and sampling per case (--max-time)
std::string host_mem_plan(const MemOptions& o, double max_time);
// mem's default --max-time (the harness's is 5 s).
inline constexpr double kMemMaxTime = 1.0;
// Cases on the selected GPUs: STREAM kernels, copies (CE and SM), latency. When GPUs were
// requested but none exist, one WAIVED case per kind says why.
CaseList gpu_mem_cases(const MemOptions& o, const DeviceSelection& sel, uint64_t seed);
// One WAIVED case per GPU group, for when GPUs were requested but none exist (or CUDA was not
// built): the report says what was not measured and why, without a row per size.
CaseList waived_gpu_mem_cases(const MemOptions& o, const std::string& reason);
// Results derived from measured ones: α–β fits over copy size sweeps and the peer ratios.
std::vector<Result> mem_derived_results(const std::vector<Result>& measured);

// The options of `gcbench run --suite quick`: three kernels, shorter size sweeps, two peer rounds.
MemOptions quick_mem_options();

// Runs the whole family into the session's runner.
void run_mem(const MemOptions& o, const DeviceSelection& sel, uint64_t seed, Runner& runner);

// Registers the subcommand; `run` is called after parsing when it was chosen.
void add_mem_command(CLI::App& root, std::function<int()>& run, const std::vector<std::string>& argv);

}  // namespace gcb::bench
