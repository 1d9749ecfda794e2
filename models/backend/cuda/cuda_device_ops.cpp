// CUDA runtime calls of the device backend's bookkeeping; compiles, unvalidated.
#include "models/backend/cuda/cuda_device_ops.hpp"

#include <cuda_runtime.h>

#include <cstdint>
#include <limits>
#include <vector>

#include "core/error.hpp"
#include "models/backend/device/pool_access.hpp"

namespace gcb::models {
namespace {

cudaStream_t st(DeviceStream s) { return static_cast<cudaStream_t>(s); }
cudaEvent_t ev(DeviceEvent e) { return static_cast<cudaEvent_t>(e); }

class CudaDeviceOps final : public DeviceOps {
 public:
  CudaDeviceOps(int device, const std::vector<int>& process_devices) : device_(device) {
    bind_thread();
    cudaMemPoolProps props{};
    props.allocType = cudaMemAllocationTypePinned;
    props.location.type = cudaMemLocationTypeDevice;
    props.location.id = device;
    CUDA_CHECK(cudaMemPoolCreate(&pool_, &props));
    uint64_t keep = std::numeric_limits<uint64_t>::max();
    CUDA_CHECK(cudaMemPoolSetAttribute(pool_, cudaMemPoolAttrReleaseThreshold, &keep));
    // Peers of this process read and write this pool's buffers directly (NCCL's P2P transport).
    const std::vector<int> peers = pool_access_peers(device, process_devices, [](int peer, int owner) {
      int ok = 0;
      CUDA_CHECK(cudaDeviceCanAccessPeer(&ok, peer, owner));
      return ok != 0;
    });
    std::vector<cudaMemAccessDesc> access;
    for (int peer : peers) {
      cudaMemAccessDesc d{};
      d.location.type = cudaMemLocationTypeDevice;
      d.location.id = peer;
      d.flags = cudaMemAccessFlagsProtReadWrite;
      access.push_back(d);
    }
    if (!access.empty()) CUDA_CHECK(cudaMemPoolSetAccess(pool_, access.data(), access.size()));
    CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
  }
  ~CudaDeviceOps() override {
    cudaStreamSynchronize(stream_);
    cudaStreamDestroy(stream_);
    cudaMemPoolDestroy(pool_);
  }
  int device() const override { return device_; }
  void bind_thread() override { CUDA_CHECK(cudaSetDevice(device_)); }
  DeviceStream stream() const { return stream_; }

  void* alloc_async(size_t bytes, DeviceStream s) override {
    void* p = nullptr;
    CUDA_CHECK(cudaMallocFromPoolAsync(&p, bytes, pool_, st(s)));
    return p;
  }
  void free_async(void* p, DeviceStream s) override { CUDA_CHECK(cudaFreeAsync(p, st(s))); }
  void zero_async(void* p, size_t bytes, DeviceStream s) override { CUDA_CHECK(cudaMemsetAsync(p, 0, bytes, st(s))); }
  void copy_async(void* dst, const void* src, size_t bytes, DeviceStream s) override {
    CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, st(s)));
  }
  void* host_alloc(size_t bytes) override {
    void* p = nullptr;
    CUDA_CHECK(cudaHostAlloc(&p, bytes, cudaHostAllocDefault));
    return p;
  }
  void host_free(void* p) override { CUDA_CHECK(cudaFreeHost(p)); }
  DeviceEvent create_event(bool timing) override {
    cudaEvent_t e = nullptr;
    CUDA_CHECK(cudaEventCreateWithFlags(&e, timing ? cudaEventDefault : cudaEventDisableTiming));
    return e;
  }
  void destroy_event(DeviceEvent e) override { CUDA_CHECK(cudaEventDestroy(ev(e))); }
  void record(DeviceEvent e, DeviceStream s) override { CUDA_CHECK(cudaEventRecord(ev(e), st(s))); }
  void wait(DeviceStream s, DeviceEvent e) override { CUDA_CHECK(cudaStreamWaitEvent(st(s), ev(e), 0)); }
  void event_synchronize(DeviceEvent e) override { CUDA_CHECK(cudaEventSynchronize(ev(e))); }
  void synchronize(DeviceStream s) override { CUDA_CHECK(cudaStreamSynchronize(st(s))); }
  double elapsed_seconds(DeviceEvent from, DeviceEvent to) override {
    CUDA_CHECK(cudaEventSynchronize(ev(to)));
    float ms = 0.0f;
    CUDA_CHECK(cudaEventElapsedTime(&ms, ev(from), ev(to)));
    return 1e-3 * static_cast<double>(ms);
  }
  size_t pool_used() const override {
    uint64_t v = 0;
    CUDA_CHECK(cudaMemPoolGetAttribute(pool_, cudaMemPoolAttrUsedMemCurrent, &v));
    return v;
  }
  DeviceMemoryInfo memory_info() const override {
    DeviceMemoryInfo m;
    CUDA_CHECK(cudaMemGetInfo(&m.free, &m.total));
    return m;
  }
  PoolCounters pool() const override {
    PoolCounters c;
    uint64_t v = 0;
    CUDA_CHECK(cudaMemPoolGetAttribute(pool_, cudaMemPoolAttrUsedMemCurrent, &v));
    c.used_current = v;
    CUDA_CHECK(cudaMemPoolGetAttribute(pool_, cudaMemPoolAttrUsedMemHigh, &v));
    c.used_high = v;
    CUDA_CHECK(cudaMemPoolGetAttribute(pool_, cudaMemPoolAttrReservedMemHigh, &v));
    c.reserved_high = v;
    return c;
  }

 private:
  int device_;
  cudaMemPool_t pool_ = nullptr;
  cudaStream_t stream_ = nullptr;
};

}  // namespace

std::unique_ptr<DeviceOps> make_cuda_device_ops(int device, const std::vector<int>& process_devices) {
  return std::make_unique<CudaDeviceOps>(device, process_devices);
}

DeviceStream cuda_compute_stream(const DeviceOps& ops) { return static_cast<const CudaDeviceOps&>(ops).stream(); }

}  // namespace gcb::models
