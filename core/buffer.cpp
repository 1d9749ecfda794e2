// HostBuffer and DeviceBuffer (buffer.hpp): pageable, pinned and registered host memory, mapped untouched (first-touch)
// or bound to a NUMA node with mbind, and device memory; the names of memory spaces and kinds.
#include "core/buffer.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fmt/format.h>
#include <utility>

#include "core/context.hpp"
#include "gcb/config.hpp"
#if GCB_HAVE_NUMA
#include <numa.h>
#include <numaif.h>
#endif

#include "core/error.hpp"
#include "core/gpu.hpp"

namespace gcb {

namespace {

#if GCB_HAVE_NUMA
// Binds [p, p + bytes) to `node` with MPOL_BIND; MPOL_MF_STRICT makes mbind fail instead of
// leaving pages elsewhere (mbind(2)). Returns mbind's result; errno says why on failure.
int bind_to_node(void* p, size_t bytes, int node) {
  struct bitmask* mask = numa_allocate_nodemask();
  numa_bitmask_setbit(mask, static_cast<unsigned>(node));
  const long rc = mbind(p, bytes, MPOL_BIND, mask->maskp, mask->size + 1, MPOL_MF_STRICT);
  const int err = errno;
  numa_bitmask_free(mask);
  errno = err;
  return static_cast<int>(rc);
}
#else
int bind_to_node(void*, size_t, int) {
  errno = ENOSYS;
  return -1;
}
#endif

void* map_pages(size_t bytes) {
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED)
    check_failed("mmap", "mmap", fmt::format("cannot map {} bytes: {}", bytes, std::strerror(errno)), __FILE__,
                 __LINE__);
  return p;
}

}  // namespace

std::string_view memory_space_name(MemorySpace m) { return m == MemorySpace::device ? "device" : "host"; }

std::string_view host_memory_name(HostMemory m) {
  switch (m) {
    case HostMemory::pageable: return "pageable";
    case HostMemory::pinned: return "pinned";
    case HostMemory::registered: return "registered";
  }
  return "?";
}

bool numa_binding_available(int node, std::string* reason) {
  auto fail = [&](std::string why) {
    if (reason) *reason = std::move(why);
    return false;
  };
#if !GCB_HAVE_NUMA
  return fail("gcbench was built without libnuma (install libnuma-dev)");
#endif
  if (node < 0 || node >= numa_node_count())
    return fail(fmt::format("NUMA node {} does not exist ({} node(s))", node, numa_node_count()));
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGE_SIZE));
  void* p = map_pages(page);
  const int rc = bind_to_node(p, page, node);
  const int err = errno;
  munmap(p, page);
  if (rc != 0) return fail(fmt::format("mbind refused: {}", std::strerror(err)));
  return true;
}

HostBuffer::HostBuffer(size_t bytes, HostMemory kind, int numa_node)
    : bytes_(bytes), kind_(kind), numa_node_(numa_node) {
  GCB_CHECK(bytes > 0, "zero-byte host buffer");
  if (kind == HostMemory::pinned) {
    GCB_CHECK(numa_node < 0, "pinned (cudaHostAlloc) memory cannot be bound to a NUMA node; use registered");
    data_ = gpu::host_alloc_pinned(bytes);
    return;
  }
  data_ = map_pages(bytes);
  if (numa_node >= 0 && bind_to_node(data_, bytes, numa_node) != 0) {
    const int err = errno;
    munmap(data_, bytes);
    data_ = nullptr;
    check_failed("mbind", "bind_to_node", fmt::format("cannot bind to NUMA node {}: {}", numa_node, std::strerror(err)),
                 __FILE__, __LINE__);
  }
  if (kind == HostMemory::registered) {
    try {
      gpu::host_register(data_, bytes);
    } catch (...) {
      munmap(data_, bytes);
      data_ = nullptr;
      throw;
    }
  }
}

void HostBuffer::release() noexcept {
  if (!data_) return;
  switch (kind_) {
    case HostMemory::pinned: gpu::host_free_pinned(data_); break;
    case HostMemory::registered:
      gpu::host_unregister(data_);
      munmap(data_, bytes_);
      break;
    case HostMemory::pageable: munmap(data_, bytes_); break;
  }
  data_ = nullptr;
}

HostBuffer::~HostBuffer() { release(); }

HostBuffer::HostBuffer(HostBuffer&& o) noexcept
    : data_(std::exchange(o.data_, nullptr)), bytes_(o.bytes_), kind_(o.kind_), numa_node_(o.numa_node_) {}

HostBuffer& HostBuffer::operator=(HostBuffer&& o) noexcept {
  if (this != &o) {
    release();
    data_ = std::exchange(o.data_, nullptr);
    bytes_ = o.bytes_;
    kind_ = o.kind_;
    numa_node_ = o.numa_node_;
  }
  return *this;
}

DeviceBuffer::DeviceBuffer(int device, size_t bytes)
    : data_(gpu::device_alloc(device, bytes)), bytes_(bytes), device_(device) {}

DeviceBuffer::~DeviceBuffer() { gpu::device_free(data_); }

DeviceBuffer::DeviceBuffer(DeviceBuffer&& o) noexcept
    : data_(std::exchange(o.data_, nullptr)), bytes_(o.bytes_), device_(o.device_) {}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& o) noexcept {
  if (this != &o) {
    gpu::device_free(data_);
    data_ = std::exchange(o.data_, nullptr);
    bytes_ = o.bytes_;
    device_ = o.device_;
  }
  return *this;
}

}  // namespace gcb
