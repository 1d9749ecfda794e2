// Host cases of `gcbench mem`: the STREAM family on OpenMP threads (first-touch placement by
// the same static partition the kernels use), the classic STREAM triad peer, and pointer-chase
// latency over a working-set sweep.
#include <algorithm>
#include <fmt/format.h>
#include <fstream>
#include <string>
#include <utility>

#include "bench/mem/mem.hpp"
#include "bench/mem/mem_metrics.hpp"
#include "bench/common/transfer_metrics.hpp"
#include "core/buffer.hpp"
#include "core/error.hpp"
#include "core/host_memory.hpp"
#include "core/size.hpp"
#include "kernels/mem/host_mem.hpp"

namespace gcb::bench {

namespace {

using kernels::StreamOp;

// The core clock for converting ns to cycles: cpufreq's current frequency when the kernel
// exposes it (it tracks boost), else /proc/cpuinfo's "cpu MHz" (a snapshot; on VMs the host's
// nominal clock). The result records which, since a cycle count is only as good as its clock.
std::pair<double, std::string> host_clock_mhz() {
  std::ifstream cur("/sys/devices/system/cpu/cpu0/cpufreq/scaling_cur_freq");
  double khz = 0;
  if (cur >> khz && khz > 0) return {khz / 1e3, "cpufreq scaling_cur_freq"};
  std::ifstream info("/proc/cpuinfo");
  for (std::string line; std::getline(info, line);) {
    if (line.rfind("cpu MHz", 0) == 0) {
      const auto colon = line.find(':');
      if (colon != std::string::npos) return {std::stod(line.substr(colon + 1)), "/proc/cpuinfo cpu MHz"};
    }
  }
  return {0, ""};
}

size_t last_level_cache_bytes() {
  const size_t llc = host_last_level_cache_bytes();
  return llc > 0 ? llc : size_t{32} << 20;
}

// STREAM's rule: each array at least 4 × the last-level cache.
size_t default_host_array_bytes() { return std::max(4 * last_level_cache_bytes(), size_t{64} << 20); }

// The params this host chose rather than the user: the array size from the cache, the thread
// count from the cores. `compare` pairs results across runners without them (reports/compare.hpp).
nlohmann::json host_sized_params(bool size_from_cache, bool threads_from_cores) {
  nlohmann::json p = nlohmann::json::array();
  if (size_from_cache) p.push_back("array_bytes");
  if (threads_from_cores) p.push_back("threads");
  return p;
}

class HostStreamCase final : public Case {
 public:
  // round ≥ 0: one side of an interleaved peer round (a "round" param tells the rows apart).
  HostStreamCase(StreamOp op, DType t, size_t array_bytes, uint64_t seed, nlohmann::json host_sized, int round = -1)
      : op_(op),
        dtype_(t),
        n_(array_bytes / dtype_size(t)),
        seed_(seed),
        round_(round),
        host_sized_(std::move(host_sized)) {}
  std::string key() const override { return fmt::format("mem/host/{}", kernels::stream_op_name(op_)); }
  nlohmann::json params() const override {
    nlohmann::json p = {{"device", "cpu"},
                        {"dtype", dtype_name(dtype_)},
                        {"array_bytes", n_ * dtype_size(dtype_)},
                        {"threads", kernels::host_threads()}};
    if (round_ >= 0) p["round"] = round_;
    return p;
  }
  nlohmann::json model() const override { return stream_model(op_, n_, dtype_size(dtype_)); }
  void setup() override {
    const size_t bytes = n_ * dtype_size(dtype_);
    a_ = HostBuffer(bytes, HostMemory::pageable);
    b_ = HostBuffer(bytes, HostMemory::pageable);
    c_ = HostBuffer(bytes, HostMemory::pageable);
    arrays_ = {a_.data(), b_.data(), c_.data(), n_, dtype_};
    kernels::host_stream_init(arrays_, seed_);  // first touch by the threads that will stream
  }
  void launch() override { sum_ = kernels::host_stream_run(op_, arrays_); }
  nlohmann::json extra() override { return {{"host_sized", host_sized_}}; }
  std::string verify() override { return verify_stream(op_, dtype_, seed_, n_, sum_, arrays_.a, arrays_.b, arrays_.c); }
  std::vector<Metric> metrics(const Statistics& s) const override {
    return bandwidth_metrics(stream_bytes(op_, n_, dtype_size(dtype_)), s, std::nullopt, "");
  }
  void teardown() override {
    a_ = HostBuffer();
    b_ = HostBuffer();
    c_ = HostBuffer();
  }

 private:
  StreamOp op_;
  DType dtype_;
  size_t n_;
  uint64_t seed_;
  int round_;
  nlohmann::json host_sized_;
  HostBuffer a_, b_, c_;
  kernels::HostStreamArrays arrays_;
  double sum_ = 0;
};

// The classic STREAM triad, measured by the same harness at the same size and thread count.
class ClassicTriadCase final : public Case {
 public:
  ClassicTriadCase(size_t array_bytes, int round, nlohmann::json host_sized)
      : n_(array_bytes / sizeof(double)), round_(round), host_sized_(std::move(host_sized)) {}
  std::string key() const override { return "mem/host/classic_stream_triad"; }
  nlohmann::json params() const override {
    return {{"device", "cpu"},
            {"dtype", "fp64"},
            {"array_bytes", n_ * sizeof(double)},
            {"threads", kernels::host_threads()},
            {"round", round_}};
  }
  nlohmann::json model() const override { return stream_model(StreamOp::triad, n_, sizeof(double)); }
  void setup() override {
    a_ = HostBuffer(n_ * sizeof(double), HostMemory::pageable);
    b_ = HostBuffer(n_ * sizeof(double), HostMemory::pageable);
    c_ = HostBuffer(n_ * sizeof(double), HostMemory::pageable);
    kernels::classic_stream_init(a_.as<double>(), b_.as<double>(), c_.as<double>(), n_);
  }
  void launch() override {
    kernels::classic_stream_triad(a_.as<double>(), b_.as<double>(), c_.as<double>(), kScalar, n_);
  }
  nlohmann::json extra() override { return {{"host_sized", host_sized_}}; }
  std::string verify() override {
    // classic init: b = 2, c = 0 → a = 2 after any number of passes.
    for (size_t i = 0; i < n_; ++i)
      if (a_.as<double>()[i] != 2.0) return fmt::format("a[{}] = {} (expected 2)", i, a_.as<double>()[i]);
    return {};
  }
  std::vector<Metric> metrics(const Statistics& s) const override {
    return bandwidth_metrics(stream_bytes(StreamOp::triad, n_, sizeof(double)), s, std::nullopt, "");
  }
  void teardown() override {
    a_ = HostBuffer();
    b_ = HostBuffer();
    c_ = HostBuffer();
  }

 private:
  static constexpr double kScalar = 3.0;  // STREAM's scalar
  size_t n_;
  int round_;
  nlohmann::json host_sized_;
  HostBuffer a_, b_, c_;
};

class HostLatencyCase final : public Case {
 public:
  HostLatencyCase(size_t working_set, uint64_t seed) : bytes_(working_set), seed_(seed) {}
  std::string key() const override { return "mem/host/latency"; }
  nlohmann::json params() const override {
    return {{"device", "cpu"}, {"working_set_bytes", bytes_}, {"stride_bytes", kStride}};
  }
  nlohmann::json model() const override { return {{"loads", steps()}}; }
  void setup() override {
    buffer_ = HostBuffer(bytes_, HostMemory::pageable);
    kernels::host_chase_build(buffer_.data(), bytes_ / kStride, kStride, seed_);
  }
  void launch() override { end_ = kernels::host_chase(buffer_.data(), steps()); }
  std::string verify() override {
    // steps is a whole number of cycles through the single-cycle permutation.
    return end_ == buffer_.data() ? "" : "pointer chase did not return to its start";
  }
  std::vector<Metric> metrics(const Statistics& s) const override {
    auto m = latency_metrics(s, steps());
    const auto [mhz, source] = host_clock_mhz();
    if (mhz > 0 && m.front().value)
      m.push_back(Metric{"latency_cycles", *m.front().value * mhz / 1e3, "cycles", false, {}, {}});
    return m;
  }
  nlohmann::json extra() override {
    const auto [mhz, source] = host_clock_mhz();
    if (mhz <= 0) return {{"latency_cycles", "no clock source (cpufreq or /proc/cpuinfo) to convert ns to cycles"}};
    return {{"clock_mhz", mhz}, {"clock_source", source}};
  }
  void teardown() override { buffer_ = HostBuffer(); }

 private:
  static constexpr size_t kStride = 64;  // one cache line per slot
  // Whole cycles, at least 2^16 loads so timer resolution does not matter.
  uint64_t steps() const {
    const uint64_t count = bytes_ / kStride;
    return count * std::max<uint64_t>(1, (uint64_t{1} << 16) / count);
  }
  size_t bytes_;
  uint64_t seed_;
  HostBuffer buffer_;
  void* end_ = nullptr;
};

}  // namespace

std::string host_mem_plan(const MemOptions& o, double max_time) {
  const auto has = [&](const char* g) { return std::find(o.groups.begin(), o.groups.end(), g) != o.groups.end(); };
  std::vector<std::string> parts;
  if (has("stream")) {
    const size_t array_bytes = o.size ? o.size : default_host_array_bytes();
    parts.push_back(fmt::format(
        "STREAM arrays of {} ({}), {} threads", format_bytes(static_cast<double>(array_bytes)),
        o.size ? "--size"
               : fmt::format("4 x last-level cache {}", format_bytes(static_cast<double>(last_level_cache_bytes()))),
        o.threads > 0 ? o.threads : kernels::host_threads()));
  }
  if (has("latency")) {
    const uint64_t max = o.latency_max ? o.latency_max : 4 * last_level_cache_bytes();
    parts.push_back(fmt::format("pointer chase {} .. {}", format_bytes(static_cast<double>(o.latency_min)),
                                format_bytes(static_cast<double>(max))));
  }
  if (parts.empty()) return "";
  // Lines of at most 100 columns: one per part, then the budget.
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) out += (i ? "\n            " : "mem (host): ") + parts[i];
  return out + fmt::format("\n            at most {:g} s of warm-up and sampling per case (--max-time)", max_time);
}

CaseList host_mem_cases(const MemOptions& o, uint64_t seed) {
  if (o.threads > 0) kernels::set_host_threads(o.threads);
  CaseList cases;
  const auto has = [](const std::vector<std::string>& v, const char* x) {
    return std::find(v.begin(), v.end(), x) != v.end();
  };
  if (has(o.groups, "stream")) {
    const size_t array_bytes = o.size ? o.size : default_host_array_bytes();
    const nlohmann::json sized = host_sized_params(o.size == 0, o.threads == 0);
    for (const DType t : o.dtypes)
      for (const kernels::StreamOp k : o.kernels)
        cases.push_back(std::make_unique<HostStreamCase>(k, t, array_bytes, seed, sized));
    if (o.peers) {
      // Rounds of (classic STREAM triad, gcbench fp64 triad) at the same size, the order
      // alternating (classic first in even rounds), so drift of the host's bandwidth during the
      // run falls on both sides; mem_derived_results takes the median of the per-round ratios.
      for (int round = 0; round < o.peer_rounds; ++round) {
        auto classic = std::make_unique<ClassicTriadCase>(array_bytes, round, sized);
        auto ours = std::make_unique<HostStreamCase>(StreamOp::triad, DType::f64, array_bytes, seed, sized, round);
        if (round % 2 == 0) {
          cases.push_back(std::move(classic));
          cases.push_back(std::move(ours));
        } else {
          cases.push_back(std::move(ours));
          cases.push_back(std::move(classic));
        }
      }
    }
  }
  if (has(o.groups, "latency")) {
    const uint64_t max = o.latency_max ? o.latency_max : 4 * last_level_cache_bytes();
    for (uint64_t ws : size_sweep(o.latency_min, max, 4)) cases.push_back(std::make_unique<HostLatencyCase>(ws, seed));
  }
  return cases;
}

}  // namespace gcb::bench
