// Owned memory: host (pageable, pinned, registered; optionally bound to a NUMA node) and
// device. RAII, move-only. Host pages are never touched by the allocator, so the first writer
// places them (first-touch) unless a NUMA node was requested.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace gcb {

enum class HostMemory { pageable, pinned, registered };
std::string_view host_memory_name(HostMemory m);

// Where a component's buffers live: what a communicator moves and a compute backend allocates.
enum class MemorySpace : uint8_t { host, device };
std::string_view memory_space_name(MemorySpace m);

class HostBuffer {
 public:
  HostBuffer() = default;
  // numa_node ≥ 0 binds the pages to that node (mbind, MPOL_BIND) before first touch; valid for
  // pageable and registered memory. pinned memory (cudaHostAlloc) lands where the allocating
  // thread runs. Throws gcb::Fault on failure.
  HostBuffer(size_t bytes, HostMemory kind, int numa_node = -1);
  ~HostBuffer();
  HostBuffer(HostBuffer&& o) noexcept;
  HostBuffer& operator=(HostBuffer&& o) noexcept;
  HostBuffer(const HostBuffer&) = delete;
  HostBuffer& operator=(const HostBuffer&) = delete;

  void* data() const { return data_; }
  size_t size() const { return bytes_; }
  HostMemory kind() const { return kind_; }
  int numa_node() const { return numa_node_; }
  template <typename T>
  T* as() const {
    return static_cast<T*>(data_);
  }

 private:
  void release() noexcept;
  void* data_ = nullptr;
  size_t bytes_ = 0;
  HostMemory kind_ = HostMemory::pageable;
  int numa_node_ = -1;
};

class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  DeviceBuffer(int device, size_t bytes);
  ~DeviceBuffer();
  DeviceBuffer(DeviceBuffer&& o) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  void* data() const { return data_; }
  size_t size() const { return bytes_; }
  int device() const { return device_; }
  template <typename T>
  T* as() const {
    return static_cast<T*>(data_);
  }

 private:
  void* data_ = nullptr;
  size_t bytes_ = 0;
  int device_ = -1;
};

// Whether pages can be bound to `node` here (mbind works and the node exists); the reason
// otherwise. Used to WAIVE NUMA-remote cases on single-node machines and in containers.
bool numa_binding_available(int node, std::string* reason);

}  // namespace gcb
