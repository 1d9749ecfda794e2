// Google Benchmark micro-benchmarks of gcbench's own hot paths on the CPU: harness overhead
// per sample, statistics, result serialisation and JSONL appends, host STREAM kernels and dtype
// conversions. Compare two builds with Google Benchmark's tools/compare.py on the JSON output
// (--benchmark_format=json).
#include <benchmark/benchmark.h>

#include <cstdio>
#include <vector>

#include "core/dtype.hpp"
#include "core/harness.hpp"
#include "core/stats.hpp"
#include "kernels/mem/host_mem.hpp"
#include "reports/result.hpp"
#include "reports/writer.hpp"

namespace {

using namespace gcb;

// The cost the harness adds per sample around an empty launch (timer + stopping rule).
void BM_HarnessPerSample(benchmark::State& state) {
  HostTimer timer;
  HarnessOptions o;
  o.warmup = 0;
  o.batch = 1;
  o.min_samples = o.max_samples = static_cast<int>(state.range(0));
  o.min_time = 0;
  o.noise = 1e-12;  // never converge: exactly max_samples samples
  for (auto _ : state) {
    const Measurement m = measure(
        timer, [] {}, o);
    benchmark::DoNotOptimize(m.stats.median);
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_HarnessPerSample)->Arg(100)->Arg(1000);

void BM_Summarize(benchmark::State& state) {
  std::vector<double> x(static_cast<size_t>(state.range(0)));
  for (size_t i = 0; i < x.size(); ++i) x[i] = 1e-3 + static_cast<double>(i % 17) * 1e-6;
  for (auto _ : state) benchmark::DoNotOptimize(summarize(x).p95);
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_Summarize)->Arg(100)->Arg(10000);

Result typical_result() {
  Result r;
  r.key = "mem/host/triad";
  r.params = {{"device", "cpu"}, {"dtype", "fp32"}, {"array_bytes", 1 << 30}};
  r.samples.assign(200, 1.5e-3);
  r.sample_flags.assign(200, 0);
  r.stats = summarize(r.samples);
  r.metrics = {Metric{"bandwidth", 20.0, "GB/s", true, 25.0, "spec"}};
  return r;
}

void BM_ResultToJson(benchmark::State& state) {
  const Result r = typical_result();
  for (auto _ : state) benchmark::DoNotOptimize(to_json(r).dump().size());
}
BENCHMARK(BM_ResultToJson);

void BM_JsonlAppend(benchmark::State& state) {
  const Result r = typical_result();
  JsonlSink sink("/dev/null");
  for (auto _ : state) sink.append(r);
}
BENCHMARK(BM_JsonlAppend);

void BM_HostTriad(benchmark::State& state) {
  const auto n = static_cast<size_t>(state.range(0));
  std::vector<float> a(n), b(n), c(n);
  const kernels::HostStreamArrays arr{a.data(), b.data(), c.data(), n, DType::f32};
  kernels::host_stream_init(arr, 1);
  for (auto _ : state) benchmark::DoNotOptimize(kernels::host_stream_run(kernels::StreamOp::triad, arr));
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(3 * n * sizeof(float)));
}
BENCHMARK(BM_HostTriad)->Arg(1 << 16)->Arg(1 << 22);

void BM_FloatToBf16(benchmark::State& state) {
  std::vector<float> x(4096);
  for (size_t i = 0; i < x.size(); ++i) x[i] = 1.0f + static_cast<float>(i) * 1e-3f;
  for (auto _ : state)
    for (float v : x) benchmark::DoNotOptimize(float_to_bf16(v));
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(x.size()));
}
BENCHMARK(BM_FloatToBf16);

}  // namespace

BENCHMARK_MAIN();
