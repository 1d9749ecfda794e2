// DeviceBackend (device_backend.hpp), the host side of a device compute backend over DeviceOps: stream-ordered
// allocation with per-category peaks, host copies, ordering against communicators' streams, the event timeline.
#include "models/backend/device/device_backend.hpp"

#include <algorithm>
#include <cstring>

#include "collectives/communicator.hpp"

namespace gcb::models {
namespace {
// The constructing thread becomes the device's thread before the first event is created.
DeviceOps& bound_to_this_thread(DeviceOps& ops) {
  ops.bind_thread();
  return ops;
}
}  // namespace

DeviceBackend::DeviceBackend(DeviceOps& ops, DeviceStream compute)
    : ops_(bound_to_this_thread(ops)),
      compute_(compute),
      compute_done_(ops.create_event(false)),
      timeline_(ops, compute) {}

DeviceBackend::~DeviceBackend() {
  ops_.synchronize(compute_);
  for (Staging& s : staging_) {
    if (s.host != nullptr) ops_.host_free(s.host);
    if (s.done != nullptr) ops_.destroy_event(s.done);
  }
  for (const auto& [stream, event] : comm_done_) ops_.destroy_event(event);
  ops_.destroy_event(compute_done_);
}

void* DeviceBackend::raw_alloc(size_t bytes, MemCategory cat, AllocInit init) {
  // At least one 16-byte vector, so that empty tensors still have a distinct address.
  const size_t rounded = std::max<size_t>(16, (bytes + 15) / 16 * 16);
  const size_t before = ops_.pool_used();
  void* p = ops_.alloc_async(rounded, compute_);
  const size_t after = ops_.pool_used();
  const Taken t{cat, after > before ? after - before : 0};
  taken_.emplace(p, t);
  device_mem_.add(cat, t.bytes);
  if (init == AllocInit::zeros) ops_.zero_async(p, rounded, compute_);
  return p;
}

void DeviceBackend::raw_free(void* p) {
  const auto it = taken_.find(p);
  if (it != taken_.end()) {
    device_mem_.remove(it->second.cat, it->second.bytes);
    taken_.erase(it);
  }
  ops_.free_async(p, compute_);
}

void* DeviceBackend::raw_alloc_host(size_t bytes) {
  void* p = ops_.host_alloc(std::max<size_t>(bytes, 16));
  std::memset(p, 0, bytes);
  return p;
}

void DeviceBackend::raw_free_host(void* p) {
  ops_.synchronize(compute_);
  ops_.host_free(p);
}

void DeviceBackend::reset_peaks() {
  Backend::reset_peaks();
  device_mem_.reset_peaks();
}

void DeviceBackend::copy_to_host(void* host_dst, const void* src, size_t bytes) {
  ops_.copy_async(host_dst, src, bytes, compute_);
  ops_.synchronize(compute_);
}

void DeviceBackend::download_async(void* host_dst, const void* src, size_t bytes) {
  ops_.copy_async(host_dst, src, bytes, compute_);
}

void DeviceBackend::upload_async(void* dst, const void* host_src, size_t bytes) {
  ops_.copy_async(dst, host_src, bytes, compute_);
}

void DeviceBackend::copy_from_host(void* dst, const void* host_src, size_t bytes) {
  if (bytes > kStagingBytes) {
    ops_.copy_async(dst, host_src, bytes, compute_);
    ops_.synchronize(compute_);
    return;
  }
  Staging& s = staging_[next_slot_];
  next_slot_ = (next_slot_ + 1) % kStagingSlots;
  if (s.host == nullptr) {
    s.host = ops_.host_alloc(kStagingBytes);
    s.done = ops_.create_event(false);
  } else if (s.used) {
    ops_.event_synchronize(s.done);  // the slot's previous upload has read it
  }
  std::memcpy(s.host, host_src, bytes);
  ops_.copy_async(dst, s.host, bytes, compute_);
  ops_.record(s.done, compute_);
  s.used = true;
}

void DeviceBackend::synchronize() { ops_.synchronize(compute_); }

DeviceEvent DeviceBackend::comm_event(DeviceStream s) {
  auto it = comm_done_.find(s);
  if (it == comm_done_.end()) it = comm_done_.emplace(s, ops_.create_event(false)).first;
  return it->second;
}

void DeviceBackend::comm_begin(Communicator& c) {
  auto* s = static_cast<DeviceStream>(c.stream());
  if (s == nullptr) {
    ops_.synchronize(compute_);  // c reads device memory from the calling thread
    return;
  }
  // cudaStreamWaitEvent waits for the event's most recent record at the time of the call, so one
  // event serves every communicator and every collective.
  ops_.record(compute_done_, compute_);
  ops_.wait(s, compute_done_);
}

void DeviceBackend::comm_end(Communicator& c) {
  auto* s = static_cast<DeviceStream>(c.stream());
  if (s == nullptr) return;  // c completed on the calling thread
  const DeviceEvent e = comm_event(s);
  ops_.record(e, s);
  ops_.wait(compute_, e);
}

}  // namespace gcb::models
