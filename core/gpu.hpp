// What the rest of the suite may ask of the GPU runtime, without including CUDA headers.
// Two implementations: gpu_cuda.cpp (CUDA built; static cudart) and gpu_none.cpp (CUDA not
// built). On a machine without a driver or device, the CUDA one reports count 0 with the
// reason, so GPU cases are WAIVED, never crashed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/harness.hpp"

namespace gcb::gpu {

struct DeviceInfo {
  int index = 0;
  std::string name, uuid, pci_bus_id;
  size_t memory_bytes = 0;
  int sm_count = 0;
  int cc_major = 0, cc_minor = 0;
  size_t l2_bytes = 0;
  // Shared memory one block may opt in to (cudaDevAttrMaxSharedMemoryPerBlockOptin): 227 KB on
  // sm_90 and sm_100, 163 KB on sm_80, 99 KB on sm_86/89/120.
  size_t smem_per_block_optin = 0;
  int memory_bus_bits = 0;
  int memory_clock_khz = 0;  // peak, from the runtime
  int sm_clock_khz = 0;      // peak, from the runtime
  bool ecc = false;
  bool unified_addressing = false;
  bool pageable_memory_access = false;
  // cudaDevAttrPageableMemoryAccessUsesHostPageTables: the GPU reads pageable memory through the
  // host's page tables (ATS) instead of migrating the pages (HMM).
  bool pageable_memory_uses_host_page_tables = false;
};

struct Runtime {
  bool built = false;              // CUDA support compiled in
  std::string unavailable_reason;  // why count is 0 ("" when devices exist)
  int driver_version = 0;          // e.g. 13000
  int runtime_version = 0;
  std::vector<DeviceInfo> devices;
};

// Queried once, cached. Never throws.
const Runtime& runtime();
inline int device_count() { return static_cast<int>(runtime().devices.size()); }

// An opaque CUDA stream owned by the caller (cudaStream_t underneath).
using Stream = void*;
Stream create_stream(int device);
void destroy_stream(Stream s);
void synchronize(Stream s);

// Memory. Device allocations are plain cudaMalloc (never managed memory).
void* device_alloc(int device, size_t bytes);
void device_free(void* p);
void* host_alloc_pinned(size_t bytes);
void host_free_pinned(void* p);
void host_register(void* p, size_t bytes);
void host_unregister(void* p);
// The device address of pinned or registered host memory (cudaHostGetDevicePointer): what a
// kernel must use. For registered memory it may differ from the host address unless the device
// can use host pointers for registered memory (cudaDevAttrCanUseHostPointerForRegisteredMem).
void* host_device_pointer(void* host);
enum class CopyKind { host_to_device, device_to_host, device_to_device, default_kind };
void copy_async(void* dst, const void* src, size_t bytes, CopyKind kind, Stream s);
void copy_peer_async(void* dst, int dst_device, const void* src, int src_device, size_t bytes, Stream s);
void memset_async(void* p, int value, size_t bytes, Stream s);

// Peer access (cudaDeviceCanAccessPeer / cudaDeviceEnablePeerAccess): lets kernels and copies on
// `device` read and write `peer`'s memory directly. Enabling twice or disabling what is not
// enabled is not an error (the state is what was asked for). Blocking, process-wide.
bool can_access_peer(int device, int peer);
void enable_peer_access(int device, int peer);
void disable_peer_access(int device, int peer);

// Events order work across streams (bidirectional copies start together on two streams).
using Event = void*;
Event create_event(int device);
void destroy_event(Event e);
void record_event(Event e, Stream s);
void stream_wait_event(Stream s, Event e);

// A timer of CUDA events on `stream`. With Latch::on a blocking kernel holds the stream while the
// first launches of a batch are enqueued, so launch overhead stays out of the measurement
// (nvbench / nvbandwidth method; core/latched_batch.hpp has the order and why only a couple of
// launches wait behind it). The latch gives up after about 10 s and says so through
// Timer::latch_timed_out(). Latch::off is for work that blocks the host by nature (pageable
// cudaMemcpyAsync is host-synchronous: behind a held stream it would wait for the timeout every
// sample). prime() runs one launch and synchronizes; flush() overwrites an L2-sized scratch
// buffer (2 × L2) before cold samples.
enum class Latch { on, off };
std::unique_ptr<Timer> make_event_timer(int device, Stream stream, Latch latch = Latch::on);

// cudaProfilerStart/Stop, for nsys --capture-range=cudaProfilerApi.
void profiler_start();
void profiler_stop();

}  // namespace gcb::gpu
