// The few runtime calls a device backend's bookkeeping makes — stream-ordered allocation from a
// pool, copies, events and waits — behind one small interface, so that the host side of the CUDA
// backend (device_backend.hpp: memory, ordering against communicators, copies, the event timeline)
// is plain C++ that tests drive with a fake device (tests/models/backend/fake_device.hpp). The CUDA one
// (cuda_device_ops.cpp) is one runtime call per function. Streams and events are opaque handles
// (cudaStream_t, cudaEvent_t).
#pragma once

#include <cstddef>

#include "core/gpu.hpp"

namespace gcb::models {

using DeviceStream = gpu::Stream;  // core/gpu.hpp: the one stream type of the kernel interfaces
using DeviceEvent = void*;

// The device allocator's own counters (cudaMemPoolAttrUsedMemCurrent / High, ReservedMemHigh):
// what it handed out, rounded to its granularity, and what it holds from the driver.
struct PoolCounters {
  size_t used_current = 0, used_high = 0, reserved_high = 0;
};
// The driver's view of the whole device (cudaMemGetInfo): every context and process on it.
struct DeviceMemoryInfo {
  size_t free = 0, total = 0;
};

class DeviceOps {
 public:
  virtual ~DeviceOps() = default;
  virtual int device() const = 0;
  // Makes this device the calling thread's current one (cudaSetDevice). CUDA keeps the current
  // device per host thread, so when one process drives every GPU of a node as rank threads each
  // thread binds its own device before it creates or enqueues anything there; DeviceBackend's
  // constructor does, and the backend is then used only by the thread that made it.
  virtual void bind_thread() = 0;
  // cudaMallocFromPoolAsync / cudaFreeAsync / cudaMemsetAsync(0) on `s`.
  virtual void* alloc_async(size_t bytes, DeviceStream s) = 0;
  virtual void free_async(void* p, DeviceStream s) = 0;
  virtual void zero_async(void* p, size_t bytes, DeviceStream s) = 0;
  // cudaMemcpyAsync(cudaMemcpyDefault) on `s` (unified addressing tells host from device).
  virtual void copy_async(void* dst, const void* src, size_t bytes, DeviceStream s) = 0;
  // Page-locked host memory (cudaHostAlloc / cudaFreeHost), for asynchronous uploads.
  virtual void* host_alloc(size_t bytes) = 0;
  virtual void host_free(void* p) = 0;
  // Events: timing ones can be subtracted (elapsed_seconds), the others only order streams.
  virtual DeviceEvent create_event(bool timing) = 0;
  virtual void destroy_event(DeviceEvent e) = 0;
  virtual void record(DeviceEvent e, DeviceStream s) = 0;  // cudaEventRecord
  virtual void wait(DeviceStream s, DeviceEvent e) = 0;    // cudaStreamWaitEvent
  virtual void event_synchronize(DeviceEvent e) = 0;
  virtual void synchronize(DeviceStream s) = 0;
  // Seconds between two recorded timing events; waits for `to`.
  virtual double elapsed_seconds(DeviceEvent from, DeviceEvent to) = 0;
  virtual PoolCounters pool() const = 0;
  // The pool's bytes in use now (cudaMemPoolAttrUsedMemCurrent, its rounding included): read
  // around each allocation, the difference is what that allocation took from the device.
  virtual size_t pool_used() const = 0;
  virtual DeviceMemoryInfo memory_info() const = 0;
};

}  // namespace gcb::models
