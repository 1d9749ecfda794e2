// GPU cases of `gcbench mem` (built with CUDA): STREAM kernels on HBM, copies over each path
// (copy engine vs SM kernel; pinned, pageable, registered host memory; NUMA-local and -remote;
// uni- and bidirectional) and pointer-chase latency. Compiles here; runs only on a GPU.
#include <algorithm>
#include <fmt/format.h>
#include <fstream>

#include "bench/mem/mem.hpp"
#include "bench/mem/mem_copy_rules.hpp"
#include "bench/mem/mem_metrics.hpp"
#include "bench/common/transfer_metrics.hpp"
#include "bench/common/waived_case.hpp"
#include "core/buffer.hpp"
#include "core/context.hpp"
#include "core/error.hpp"
#include "core/nvml.hpp"
#include "core/size.hpp"
#include "kernels/mem/gpu_mem.hpp"
#include "kernels/mem/host_mem.hpp"
#include "reports/specs.hpp"

namespace gcb::bench {

namespace {

using kernels::StreamOp;

const gpu::DeviceInfo& info(int g) { return gpu::runtime().devices.at(static_cast<size_t>(g)); }

std::string missing_gpu(int g) {
  if (g < gpu::device_count()) return {};
  return "no GPU: " + gpu::runtime().unavailable_reason;
}

// HBM peak: the vendor spec when the SKU is known, else 2 × memory clock × bus width.
std::pair<std::optional<double>, std::string> hbm_peak(int g) {
  const auto& d = info(g);
  if (const auto spec = find_gpu_spec(d.name)) return {spec->hbm_gbps, "spec:" + spec->sku};
  if (d.memory_clock_khz > 0 && d.memory_bus_bits > 0)
    return {derived_hbm_gbps(d.memory_clock_khz / 1e3, d.memory_bus_bits), "derived:2 x memclock x buswidth"};
  return {std::nullopt, ""};
}

// Host link peak per direction at the link's maximum PCIe generation and width (NVML).
std::pair<std::optional<double>, std::string> link_peak(int g) {
  const auto s = nvml::static_info(info(g).pci_bus_id);
  if (!s) return {std::nullopt, ""};
  const LinkPeak p = pcie_link_peak(*s);
  return {p.gbps, p.source};
}

int gpu_numa_node(int g) {
  std::string bus = info(g).pci_bus_id;
  std::transform(bus.begin(), bus.end(), bus.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  std::ifstream f("/sys/bus/pci/devices/" + bus + "/numa_node");
  int node = -1;
  f >> node;
  return node;
}

class GpuCase : public Case {
 public:
  explicit GpuCase(int g) : gpu_(g) {}
  int gpu() const override { return gpu_; }
  std::string waived_reason() const override { return missing_gpu(gpu_); }
  gpu::Stream stream() const override { return stream_; }
  void teardown() override {
    release();
    gpu::destroy_stream(stream_);
    stream_ = nullptr;
  }

 protected:
  void make_stream() { stream_ = gpu::create_stream(gpu_); }
  virtual void release() {}
  int gpu_;
  gpu::Stream stream_ = nullptr;
};

class GpuStreamCase final : public GpuCase {
 public:
  GpuStreamCase(int g, StreamOp op, DType t, int vector_bytes, size_t array_bytes, uint64_t seed, bool from_l2)
      : GpuCase(g),
        op_(op),
        dtype_(t),
        vector_bytes_(vector_bytes),
        array_bytes_(array_bytes),
        seed_(seed),
        from_l2_(from_l2) {}
  std::string key() const override { return fmt::format("mem/hbm/{}", kernels::stream_op_name(op_)); }
  nlohmann::json params() const override {
    return {{"device", fmt::format("gpu:{}", gpu_)},
            {"dtype", dtype_name(dtype_)},
            {"vector_bytes", vector_bytes_},
            {"array_bytes", n() * dtype_size(dtype_)}};
  }
  std::string waived_reason() const override {
    if (auto r = missing_gpu(gpu_); !r.empty()) return r;
    if (static_cast<size_t>(vector_bytes_) < dtype_size(dtype_))
      return fmt::format("vector width {} B is narrower than one {} element", vector_bytes_, dtype_name(dtype_));
    if (3 * array_bytes_ > info(gpu_).memory_bytes) return "three arrays do not fit in device memory";
    return {};
  }
  nlohmann::json model() const override { return stream_model(op_, n(), dtype_size(dtype_)); }
  void setup() override {
    make_stream();
    const size_t bytes = n() * dtype_size(dtype_);
    a_ = DeviceBuffer(gpu_, bytes);
    b_ = DeviceBuffer(gpu_, bytes);
    c_ = DeviceBuffer(gpu_, bytes);
    sum_ = DeviceBuffer(gpu_, kernels::gpu_stream_sum_bytes(gpu_));
    gpu::memset_async(sum_.data(), 0, sum_.size(), stream_);  // once: the kernels keep it ready
    arrays_ = {a_.data(), b_.data(), c_.data(), n(), dtype_};
    kernels::gpu_stream_init(arrays_, seed_, static_cast<cudaStream_t>(stream_));
    gpu::synchronize(stream_);
  }
  void launch() override {
    kernels::gpu_stream_launch(op_, arrays_, vector_bytes_, sum_.data(), static_cast<cudaStream_t>(stream_));
  }
  std::string verify() override {
    const size_t bytes = n() * dtype_size(dtype_);
    HostBuffer ha(bytes, HostMemory::pageable), hb(bytes, HostMemory::pageable), hc(bytes, HostMemory::pageable);
    double sum = 0;
    gpu::copy_async(ha.data(), a_.data(), bytes, gpu::CopyKind::device_to_host, stream_);
    gpu::copy_async(hb.data(), b_.data(), bytes, gpu::CopyKind::device_to_host, stream_);
    gpu::copy_async(hc.data(), c_.data(), bytes, gpu::CopyKind::device_to_host, stream_);
    gpu::copy_async(&sum, sum_.data(), sizeof(double), gpu::CopyKind::device_to_host, stream_);
    gpu::synchronize(stream_);
    return verify_stream(op_, dtype_, seed_, n(), sum, ha.data(), hb.data(), hc.data());
  }
  std::vector<Metric> metrics(const Statistics& s) const override {
    const auto [peak, source] = hbm_peak(gpu_);
    return bandwidth_metrics(stream_bytes(op_, n(), dtype_size(dtype_)), s, peak, source);
  }
  // The size this GPU chose: `compare` pairs results across GPUs of other L2 sizes without it.
  nlohmann::json extra() override {
    return {{"host_sized", from_l2_ ? nlohmann::json::array({"array_bytes"}) : nlohmann::json::array()}};
  }

 private:
  size_t n() const { return array_bytes_ / dtype_size(dtype_); }
  void release() override {
    for (DeviceBuffer* b : {&a_, &b_, &c_, &sum_}) *b = DeviceBuffer();
  }
  StreamOp op_;
  DType dtype_;
  int vector_bytes_;
  size_t array_bytes_;
  uint64_t seed_;
  bool from_l2_;  // the size is 4 × this GPU's L2, not the user's --size
  DeviceBuffer a_, b_, c_, sum_;
  kernels::GpuStreamArrays arrays_;
};

using Path = CopyPath;
using Engine = CopyEngine;
using Numa = NumaPlacement;

std::string_view path_name(Path p) { return p == Path::h2d ? "h2d" : p == Path::d2h ? "d2h" : "d2d"; }

class GpuCopyCase final : public GpuCase {
 public:
  GpuCopyCase(int g, CopySpec spec, uint64_t seed) : GpuCase(g), spec_(spec), seed_(seed) {}
  std::string key() const override { return fmt::format("mem/copy/{}", path_name(spec_.path)); }
  nlohmann::json params() const override {
    nlohmann::json p = {{"device", fmt::format("gpu:{}", gpu_)},
                        {"engine", spec_.engine == Engine::ce ? "ce" : "sm"},
                        {"direction", spec_.bidirectional ? "bidirectional" : "unidirectional"},
                        {"bytes", spec_.bytes}};
    if (spec_.path != Path::d2d) {
      p["host_memory"] = host_memory_name(spec_.memory);
      p["numa"] = spec_.numa == Numa::local ? "local" : spec_.numa == Numa::remote ? "remote" : "first-touch";
    }
    return p;
  }
  std::string waived_reason() const override {
    if (auto r = missing_gpu(gpu_); !r.empty()) return r;
    if (auto r = sm_host_copy_waiver(info(gpu_), spec_); !r.empty()) return r;
    if (spec_.numa != Numa::none) {
      const int local = gpu_numa_node(gpu_);
      if (local < 0) return "the GPU's NUMA node is unknown (sysfs numa_node = -1)";
      if (spec_.numa == Numa::remote && numa_node_count() < 2) return "single NUMA node: no remote memory";
      std::string why;
      if (!numa_binding_available(host_node(), &why)) return why;
    }
    if ((spec_.bidirectional ? 4 : 2) * spec_.bytes > info(gpu_).memory_bytes / 2) return "buffers do not fit";
    return {};
  }
  nlohmann::json model() const override {
    return {
        {"bytes", bytes_counted()},
        {"bytes_counted", spec_.path == Path::d2d ? "read + written" : "transferred over the link (all directions)"}};
  }
  void setup() override {
    make_stream();
    stream2_ = gpu::create_stream(gpu_);
    start_ = gpu::create_event(gpu_);
    done2_ = gpu::create_event(gpu_);
    const size_t b = spec_.bytes;
    dev_a_ = DeviceBuffer(gpu_, b);
    dev_b_ = DeviceBuffer(gpu_, b);
    if (spec_.path != Path::d2d) {
      host_a_ = HostBuffer(b, spec_.memory, spec_.memory == HostMemory::pinned ? -1 : host_node());
      host_b_ = HostBuffer(b, spec_.memory, spec_.memory == HostMemory::pinned ? -1 : host_node());
      // A kernel addresses pinned and registered memory by its device pointer; pageable memory
      // (ATS only, see sm_host_copy_waiver) by its host address.
      const bool mapped = spec_.engine == Engine::sm && spec_.memory != HostMemory::pageable;
      host_a_view_ = mapped ? gpu::host_device_pointer(host_a_.data()) : host_a_.data();
      host_b_view_ = mapped ? gpu::host_device_pointer(host_b_.data()) : host_b_.data();
    }
    fill_source();
  }
  bool host_synchronous() const override { return copy_is_host_synchronous(spec_); }
  void launch() override {
    if (!spec_.bidirectional) {
      copy_one(forward_dst(), forward_src(), forward_kind(), stream_);
      return;
    }
    // Both directions start together: stream 2 waits for stream 1's start, stream 1 for 2's end.
    gpu::record_event(start_, stream_);
    gpu::stream_wait_event(stream2_, start_);
    copy_one(forward_dst(), forward_src(), forward_kind(), stream_);
    copy_one(reverse_dst(), reverse_src(), reverse_kind(), stream2_);
    gpu::record_event(done2_, stream2_);
    gpu::stream_wait_event(stream_, done2_);
  }
  std::string verify() override {
    gpu::synchronize(stream_);
    gpu::synchronize(stream2_);
    if (auto wrong = check_destination(forward_dst(), "destination"); !wrong.empty()) return wrong;
    if (spec_.bidirectional) return check_destination(reverse_dst(), "reverse-direction destination");
    return {};
  }
  std::vector<Metric> metrics(const Statistics& s) const override {
    auto [peak, source] = spec_.path == Path::d2d ? hbm_peak(gpu_) : link_peak(gpu_);
    if (peak && spec_.bidirectional && spec_.path != Path::d2d) *peak *= 2;
    return bandwidth_metrics(bytes_counted(), s, peak, source);
  }

 private:
  int host_node() const {
    const int local = gpu_numa_node(gpu_);
    if (spec_.numa == Numa::local) return local;
    return local == 0 ? 1 : 0;  // remote: any other node
  }
  double bytes_counted() const {
    const double b = static_cast<double>(spec_.bytes);
    if (spec_.path == Path::d2d) return 2 * b;  // read + write of one device's memory
    return b * (spec_.bidirectional ? 2 : 1);
  }
  uint8_t pattern(size_t i) const { return static_cast<uint8_t>(kernels::mix64(seed_ + i) >> 56); }
  // The first byte of `dst` (host or device memory) that differs from the pattern, or "".
  std::string check_destination(const void* dst, const char* what) {
    std::vector<uint8_t> got(spec_.bytes);
    gpu::copy_async(got.data(), dst, spec_.bytes, gpu::CopyKind::default_kind, stream_);
    gpu::synchronize(stream_);
    for (size_t i = 0; i < spec_.bytes; ++i)
      if (got[i] != pattern(i)) return fmt::format("{} byte {} = {} (expected {})", what, i, got[i], pattern(i));
    return {};
  }
  void fill_source() {
    std::vector<uint8_t> p(spec_.bytes);
    for (size_t i = 0; i < p.size(); ++i) p[i] = pattern(i);
    gpu::copy_async(const_cast<void*>(forward_src()), p.data(), p.size(), gpu::CopyKind::default_kind, stream_);
    if (spec_.bidirectional)
      gpu::copy_async(const_cast<void*>(reverse_src()), p.data(), p.size(), gpu::CopyKind::default_kind, stream_);
    gpu::synchronize(stream_);
  }
  const void* forward_src() const { return spec_.path == Path::h2d ? host_a_.data() : dev_a_.data(); }
  void* forward_dst() const { return spec_.path == Path::d2h ? host_a_.data() : dev_b_.data(); }
  // The reverse direction (bidirectional host copies only) uses the other two buffers, so the
  // two copies never touch the same memory.
  const void* reverse_src() const { return spec_.path == Path::h2d ? dev_a_.data() : host_b_.data(); }
  void* reverse_dst() const { return spec_.path == Path::h2d ? host_b_.data() : dev_b_.data(); }
  gpu::CopyKind forward_kind() const {
    return spec_.path == Path::h2d   ? gpu::CopyKind::host_to_device
           : spec_.path == Path::d2h ? gpu::CopyKind::device_to_host
                                     : gpu::CopyKind::device_to_device;
  }
  gpu::CopyKind reverse_kind() const {
    return spec_.path == Path::h2d   ? gpu::CopyKind::device_to_host
           : spec_.path == Path::d2h ? gpu::CopyKind::host_to_device
                                     : gpu::CopyKind::device_to_device;
  }
  void copy_one(void* dst, const void* src, gpu::CopyKind kind, gpu::Stream s) {
    if (spec_.engine == Engine::ce)
      gpu::copy_async(dst, src, spec_.bytes, kind, s);
    else
      kernels::gpu_sm_copy(device_view(dst), device_view(src), spec_.bytes, static_cast<cudaStream_t>(s));
  }
  // The address a kernel uses for one of this case's buffers.
  void* device_view(const void* p) const {
    if (p == host_a_.data()) return host_a_view_;
    if (p == host_b_.data()) return host_b_view_;
    return const_cast<void*>(p);
  }
  void release() override {
    dev_a_ = DeviceBuffer();
    dev_b_ = DeviceBuffer();
    host_a_ = HostBuffer();
    host_b_ = HostBuffer();
    host_a_view_ = host_b_view_ = nullptr;
    gpu::destroy_event(start_);
    gpu::destroy_event(done2_);
    gpu::destroy_stream(stream2_);
    start_ = done2_ = stream2_ = nullptr;
  }
  CopySpec spec_;
  uint64_t seed_;
  DeviceBuffer dev_a_, dev_b_;
  HostBuffer host_a_, host_b_;
  void* host_a_view_ = nullptr;  // host_a_ / host_b_ as kernels address them
  void* host_b_view_ = nullptr;
  gpu::Stream stream2_ = nullptr;
  gpu::Event start_ = nullptr, done2_ = nullptr;
};

class GpuLatencyCase final : public GpuCase {
 public:
  GpuLatencyCase(int g, size_t working_set, uint64_t seed) : GpuCase(g), bytes_(working_set), seed_(seed) {}
  std::string key() const override { return "mem/hbm/latency"; }
  nlohmann::json params() const override {
    return {{"device", fmt::format("gpu:{}", gpu_)}, {"working_set_bytes", bytes_}, {"stride_bytes", kStride}};
  }
  nlohmann::json model() const override { return {{"loads", steps()}}; }
  void setup() override {
    make_stream();
    buffer_ = DeviceBuffer(gpu_, bytes_);
    out_ = DeviceBuffer(gpu_, 2 * sizeof(long long));
    kernels::gpu_chase_build(buffer_.data(), bytes_ / kStride, kStride, seed_);
  }
  void launch() override {
    kernels::gpu_chase_launch(buffer_.data(), steps(), out_.as<void*>(), out_.as<long long>() + 1,
                              static_cast<cudaStream_t>(stream_));
  }
  std::string verify() override {
    long long host[2] = {};
    gpu::copy_async(host, out_.data(), sizeof(host), gpu::CopyKind::device_to_host, stream_);
    gpu::synchronize(stream_);
    cycles_ = host[1];
    if (reinterpret_cast<void*>(host[0]) != buffer_.data()) return "pointer chase did not return to its start";
    return {};
  }
  std::vector<Metric> metrics(const Statistics& s) const override {
    auto m = latency_metrics(s, steps());
    m.push_back(
        Metric{"latency_cycles", static_cast<double>(cycles_) / static_cast<double>(steps()), "cycles", false, {}, {}});
    return m;
  }

 private:
  static constexpr size_t kStride = 128;  // one L2 line per slot
  uint64_t steps() const {
    const uint64_t count = bytes_ / kStride;
    return count * std::max<uint64_t>(1, (uint64_t{1} << 16) / count);
  }
  void release() override {
    buffer_ = DeviceBuffer();
    out_ = DeviceBuffer();
  }
  size_t bytes_;
  uint64_t seed_;
  DeviceBuffer buffer_, out_;
  long long cycles_ = 0;
};

}  // namespace

CaseList gpu_mem_cases(const MemOptions& o, const DeviceSelection& sel, uint64_t seed) {
  CaseList cases;
  const auto has = [](const std::vector<std::string>& v, const char* x) {
    return std::find(v.begin(), v.end(), x) != v.end();
  };
  if (sel.gpus.empty() && sel.gpu_requested) return waived_gpu_mem_cases(o, sel.gpu_missing);
  for (int g : sel.gpus) {
    const size_t l2 = info(g).l2_bytes;
    if (has(o.groups, "stream")) {
      const size_t array_bytes = o.size ? o.size : std::max(4 * l2, size_t{64} << 20);
      for (const DType t : o.dtypes)
        for (int v : o.vector_bytes)
          for (const kernels::StreamOp k : o.kernels)
            cases.push_back(std::make_unique<GpuStreamCase>(g, k, t, v, array_bytes, seed, o.size == 0));
    }
    if (has(o.groups, "copy")) {
      // Full size sweeps on the reference configuration (copy engine, pinned, one direction)…
      for (Path p : {Path::h2d, Path::d2h, Path::d2d})
        for (uint64_t b : size_sweep(o.copy_min, o.copy_max, o.copy_factor))
          cases.push_back(std::make_unique<GpuCopyCase>(
              g, CopySpec{p, Engine::ce, HostMemory::pinned, Numa::none, false, b}, seed));
      // …and every other engine / memory / NUMA / direction combination at the largest size.
      const size_t big = o.copy_max;
      for (Engine e : {Engine::ce, Engine::sm})
        for (bool bidir : {false, true}) {
          // Within one device "bidirectional" means nothing: d2d is CE vs SM, one direction.
          if (e == Engine::sm && !bidir)
            cases.push_back(std::make_unique<GpuCopyCase>(
                g, CopySpec{Path::d2d, e, HostMemory::pinned, Numa::none, false, big}, seed));
          for (Path p : {Path::h2d, Path::d2h}) {
            if (e == Engine::sm || bidir)
              cases.push_back(
                  std::make_unique<GpuCopyCase>(g, CopySpec{p, e, HostMemory::pinned, Numa::none, bidir, big}, seed));
            for (HostMemory m : {HostMemory::pageable, HostMemory::registered})
              for (Numa n : {Numa::local, Numa::remote})
                cases.push_back(std::make_unique<GpuCopyCase>(g, CopySpec{p, e, m, n, bidir, big}, seed));
          }
        }
    }
    if (has(o.groups, "latency")) {
      const uint64_t max = o.latency_max ? o.latency_max : 4 * l2;
      for (uint64_t ws : size_sweep(o.latency_min, max, 4))
        cases.push_back(std::make_unique<GpuLatencyCase>(g, ws, seed));
    }
  }
  return cases;
}

}  // namespace gcb::bench
