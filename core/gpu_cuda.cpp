// The GPU runtime over the CUDA runtime API (linked statically). Device discovery never
// throws: a missing driver or device becomes Runtime::unavailable_reason.
#include <cuda_profiler_api.h>
#include <cuda_runtime_api.h>

#include <atomic>
#include <fmt/format.h>

#include "core/device_support.hpp"
#include "core/error.hpp"
#include "core/gpu.hpp"
#include "core/gpu_kernels.hpp"
#include "core/latched_batch.hpp"

namespace gcb::gpu {

namespace {

cudaStream_t as_stream(Stream s) { return static_cast<cudaStream_t>(s); }

DeviceInfo query_device(int d) {
  DeviceInfo info;
  info.index = d;
  cudaDeviceProp p{};
  CUDA_CHECK(cudaGetDeviceProperties(&p, d));
  info.name = p.name;
  info.uuid = "GPU-";
  for (int i = 0; i < 16; ++i) {
    info.uuid += fmt::format("{:02x}", static_cast<unsigned char>(p.uuid.bytes[i]));
    if (i == 3 || i == 5 || i == 7 || i == 9) info.uuid += '-';
  }
  char bus[32] = {};
  CUDA_CHECK(cudaDeviceGetPCIBusId(bus, sizeof(bus), d));
  info.pci_bus_id = bus;
  info.memory_bytes = p.totalGlobalMem;
  info.sm_count = p.multiProcessorCount;
  info.cc_major = p.major;
  info.cc_minor = p.minor;
  info.l2_bytes = static_cast<size_t>(p.l2CacheSize);
  info.smem_per_block_optin = p.sharedMemPerBlockOptin;
  info.memory_bus_bits = p.memoryBusWidth;
  CUDA_CHECK(cudaDeviceGetAttribute(&info.memory_clock_khz, cudaDevAttrMemoryClockRate, d));
  CUDA_CHECK(cudaDeviceGetAttribute(&info.sm_clock_khz, cudaDevAttrClockRate, d));
  info.ecc = p.ECCEnabled != 0;
  info.unified_addressing = p.unifiedAddressing != 0;
  info.pageable_memory_access = p.pageableMemoryAccess != 0;
  int host_page_tables = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&host_page_tables, cudaDevAttrPageableMemoryAccessUsesHostPageTables, d));
  info.pageable_memory_uses_host_page_tables = host_page_tables != 0;
  return info;
}

// The architectures this build carries (CMAKE_CUDA_ARCHITECTURES, set by cmake/GcbCudaArch.cmake).
constexpr std::string_view kBuildArchitectures = GCB_CUDA_ARCHITECTURES_LIST;

// Devices the build has no code for, decided from the compute capability without creating a
// context; "" when every device can run it. CMake's "all", "all-major" and "native" cannot be
// read back: those builds are left to the probe at the first timer (probe_kernel_image).
std::string devices_without_image(const std::vector<DeviceInfo>& devices) {
  std::vector<CudaArch> archs;
  try {
    archs = parse_cuda_architectures(kBuildArchitectures);
  } catch (const UsageError&) {
    return {};
  }
  std::string reasons;
  for (const DeviceInfo& d : devices)
    if (!archs_run_on(archs, d.cc_major, d.cc_minor))
      reasons += (reasons.empty() ? "" : "; ") +
                 no_kernel_image_reason(d.index, d.name, d.cc_major, d.cc_minor, kBuildArchitectures);
  return reasons;
}

Runtime query_runtime() {
  Runtime r;
  r.built = true;
  cudaRuntimeGetVersion(&r.runtime_version);
  if (cudaDriverGetVersion(&r.driver_version) != cudaSuccess || r.driver_version == 0) {
    r.unavailable_reason = "no NVIDIA driver found";
    return r;
  }
  if (std::string why = driver_too_old_reason(r.driver_version, r.runtime_version); !why.empty()) {
    r.unavailable_reason = why;
    return r;
  }
  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess) {
    r.unavailable_reason = fmt::format("no usable CUDA device ({})", cudaGetErrorString(e));
    cudaGetLastError();  // clear the sticky-free error so later calls start clean
    return r;
  }
  if (count == 0) {
    r.unavailable_reason = "no CUDA device present";
    return r;
  }
  try {
    for (int d = 0; d < count; ++d) r.devices.push_back(query_device(d));
  } catch (const Fault& f) {
    r.devices.clear();
    r.unavailable_reason = f.what();
  }
  // A node whose GPUs this build cannot run has no usable GPU: every GPU case is WAIVED with the
  // remedy (one build serves one node; a node of mixed architectures is refused as a whole).
  if (std::string why = devices_without_image(r.devices); !why.empty()) {
    r.devices.clear();
    r.unavailable_reason = why;
  }
  return r;
}

class EventTimer final : public Timer {
 public:
  EventTimer(int device, Stream stream, Latch latch)
      : device_(device), stream_(as_stream(stream)), latched_(latch == Latch::on) {
    CUDA_CHECK(cudaSetDevice(device_));
    // The first use of a device: the build's list may not say (CMake's "native", "all"), so ask
    // the device whether it has an image of ours before anything is launched.
    if (const cudaError_t e = probe_kernel_image(device_);
        e == cudaErrorNoKernelImageForDevice || e == cudaErrorInvalidDeviceFunction) {
      const DeviceInfo& d = runtime().devices.at(static_cast<size_t>(device_));
      throw Fault(no_kernel_image_reason(d.index, d.name, d.cc_major, d.cc_minor, kBuildArchitectures));
    }
    CUDA_CHECK(cudaEventCreate(&start_));
    CUDA_CHECK(cudaEventCreate(&stop_));
    CUDA_CHECK(cudaHostAlloc(reinterpret_cast<void**>(&words_), sizeof(LatchWords),
                             cudaHostAllocMapped | cudaHostAllocPortable));
    CUDA_CHECK(cudaHostGetDevicePointer(reinterpret_cast<void**>(&device_words_), words_, 0));
    const DeviceInfo& info = runtime().devices.at(static_cast<size_t>(device_));
    scratch_bytes_ = std::max<size_t>(2 * info.l2_bytes, size_t{8} << 20);
    timeout_cycles_ = static_cast<unsigned long long>(std::max(info.sm_clock_khz, 1000000)) * 10000ull;
  }
  ~EventTimer() override {
    cudaEventDestroy(start_);
    cudaEventDestroy(stop_);
    cudaFreeHost(words_);
    if (scratch_) cudaFree(scratch_);
  }
  std::string_view kind() const override {
    return latched_ ? "cuda events (blocking kernel)" : "cuda events (host-synchronous, no blocking kernel)";
  }

  void prime(const std::function<void()>& launch) override {
    CUDA_CHECK(cudaSetDevice(device_));
    launch();
    CUDA_CHECK(cudaStreamSynchronize(stream_));
  }

  double time_batch(const std::function<void()>& launch, int batch) override {
    CUDA_CHECK(cudaSetDevice(device_));
    std::atomic_ref<int>(words_->release).store(0);
    std::atomic_ref<int>(words_->timed_out).store(0);
    LatchSteps steps;
    if (latched_) {
      steps.hold = [this] { launch_blocking_kernel(device_words_, timeout_cycles_, stream_); };
      steps.release = [this] { std::atomic_ref<int>(words_->release).store(1); };
    }
    steps.record_start = [this] { CUDA_CHECK(cudaEventRecord(start_, stream_)); };
    steps.record_stop = [this] { CUDA_CHECK(cudaEventRecord(stop_, stream_)); };
    enqueue_latched_batch(steps, launch, batch);
    CUDA_CHECK(cudaEventSynchronize(stop_));
    timed_out_ = latched_ && std::atomic_ref<int>(words_->timed_out).load() != 0;
    float ms = 0;
    CUDA_CHECK(cudaEventElapsedTime(&ms, start_, stop_));
    return static_cast<double>(ms) * 1e-3;
  }

  bool latch_timed_out() const override { return timed_out_; }

  void flush() override {
    CUDA_CHECK(cudaSetDevice(device_));
    if (!scratch_) CUDA_CHECK(cudaMalloc(&scratch_, scratch_bytes_));
    CUDA_CHECK(cudaMemsetAsync(scratch_, ++flush_value_ & 0xFF, scratch_bytes_, stream_));
    CUDA_CHECK(cudaStreamSynchronize(stream_));
  }

 private:
  int device_;
  cudaStream_t stream_;
  bool latched_;
  cudaEvent_t start_{}, stop_{};
  LatchWords* words_ = nullptr;         // host-mapped, shared with the blocking kernel
  LatchWords* device_words_ = nullptr;  // the same words as the kernel addresses them
  bool timed_out_ = false;
  void* scratch_ = nullptr;
  size_t scratch_bytes_ = 0;
  int flush_value_ = 0;
  unsigned long long timeout_cycles_ = 0;
};

cudaMemcpyKind to_cuda(CopyKind k) {
  switch (k) {
    case CopyKind::host_to_device: return cudaMemcpyHostToDevice;
    case CopyKind::device_to_host: return cudaMemcpyDeviceToHost;
    case CopyKind::device_to_device: return cudaMemcpyDeviceToDevice;
    case CopyKind::default_kind: return cudaMemcpyDefault;
  }
  return cudaMemcpyDefault;
}

}  // namespace

const Runtime& runtime() {
  static const Runtime r = query_runtime();
  return r;
}

Stream create_stream(int device) {
  CUDA_CHECK(cudaSetDevice(device));
  cudaStream_t s{};
  CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  return s;
}
void destroy_stream(Stream s) {
  if (s) cudaStreamDestroy(as_stream(s));
}
void synchronize(Stream s) { CUDA_CHECK(cudaStreamSynchronize(as_stream(s))); }

void* device_alloc(int device, size_t bytes) {
  CUDA_CHECK(cudaSetDevice(device));
  void* p = nullptr;
  CUDA_CHECK(cudaMalloc(&p, bytes));
  return p;
}
void device_free(void* p) {
  if (p) cudaFree(p);
}
void* host_alloc_pinned(size_t bytes) {
  void* p = nullptr;
  CUDA_CHECK(cudaHostAlloc(&p, bytes, cudaHostAllocPortable | cudaHostAllocMapped));
  return p;
}
void host_free_pinned(void* p) {
  if (p) cudaFreeHost(p);
}
void host_register(void* p, size_t bytes) {
  CUDA_CHECK(cudaHostRegister(p, bytes, cudaHostRegisterPortable | cudaHostRegisterMapped));
}
void host_unregister(void* p) {
  if (p) cudaHostUnregister(p);
}
void* host_device_pointer(void* host) {
  void* device = nullptr;
  CUDA_CHECK(cudaHostGetDevicePointer(&device, host, 0));
  return device;
}
void copy_async(void* dst, const void* src, size_t bytes, CopyKind kind, Stream s) {
  CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, to_cuda(kind), as_stream(s)));
}
void copy_peer_async(void* dst, int dst_device, const void* src, int src_device, size_t bytes, Stream s) {
  CUDA_CHECK(cudaMemcpyPeerAsync(dst, dst_device, src, src_device, bytes, as_stream(s)));
}
void memset_async(void* p, int value, size_t bytes, Stream s) {
  CUDA_CHECK(cudaMemsetAsync(p, value, bytes, as_stream(s)));
}
bool can_access_peer(int device, int peer) {
  int ok = 0;
  CUDA_CHECK(cudaDeviceCanAccessPeer(&ok, device, peer));
  return ok != 0;
}
void enable_peer_access(int device, int peer) {
  CUDA_CHECK(cudaSetDevice(device));
  const cudaError_t e = cudaDeviceEnablePeerAccess(peer, 0);
  if (e == cudaErrorPeerAccessAlreadyEnabled) {
    (void)cudaGetLastError();  // "already enabled" is the state we want; clear the (non-sticky) error
    return;
  }
  CUDA_CHECK(e);
}
void disable_peer_access(int device, int peer) {
  CUDA_CHECK(cudaSetDevice(device));
  const cudaError_t e = cudaDeviceDisablePeerAccess(peer);
  if (e == cudaErrorPeerAccessNotEnabled) {
    (void)cudaGetLastError();
    return;
  }
  CUDA_CHECK(e);
}
Event create_event(int device) {
  CUDA_CHECK(cudaSetDevice(device));
  cudaEvent_t e{};
  CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
  return e;
}
void destroy_event(Event e) {
  if (e) cudaEventDestroy(static_cast<cudaEvent_t>(e));
}
void record_event(Event e, Stream s) { CUDA_CHECK(cudaEventRecord(static_cast<cudaEvent_t>(e), as_stream(s))); }
void stream_wait_event(Stream s, Event e) {
  CUDA_CHECK(cudaStreamWaitEvent(as_stream(s), static_cast<cudaEvent_t>(e), 0));
}
std::unique_ptr<Timer> make_event_timer(int device, Stream stream, Latch latch) {
  return std::make_unique<EventTimer>(device, stream, latch);
}
void profiler_start() { CUDA_CHECK(cudaProfilerStart()); }
void profiler_stop() { CUDA_CHECK(cudaProfilerStop()); }

}  // namespace gcb::gpu
