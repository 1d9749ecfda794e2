// The host side of a device compute backend, shared by every one (the CUDA backend is the only
// one today) and tested on the CPU with a fake device: stream-ordered memory, the ordering of the
// compute stream against communicators' streams, copies to and from the host, and the event
// timeline. Everything goes through DeviceOps (device_ops.hpp); a subclass adds the ops, each
// enqueued on compute_stream().
//
// Ordering plan (backend.hpp comm_begin / comm_end): comm_begin(c) records one event on the
// compute stream and makes c's stream wait for it, so a collective sees every value computed
// before it; comm_end(c) records c's event on c's stream and makes the compute stream wait, so
// later compute sees the collective's result. The host never blocks. A communicator without a
// stream (it reads memory on the calling thread) gets a synchronised compute stream instead.
// Memory is freed in stream order on the compute stream: a buffer a collective used is freed after
// the comm_end that follows it, so its memory is reused only after the collective is done.
// Memory per category is measured on the device: each allocation's bytes are what the pool's
// used-bytes counter grew by when it was made (DeviceOps::pool_used), kept under the category the
// engine allocated it for (device_memory), beside the requested bytes Backend::memory() counts.
#pragma once

#include <array>
#include <map>
#include <unordered_map>

#include "models/backend/backend.hpp"
#include "models/backend/device/device_ops.hpp"
#include "models/backend/device/device_timeline.hpp"

namespace gcb::models {

class DeviceBackend : public Backend {
 public:
  // `ops` outlives the backend; every op of the subclass runs on `compute`. Binds the calling
  // thread to ops.device() (DeviceOps::bind_thread): only this thread may use the backend.
  DeviceBackend(DeviceOps& ops, DeviceStream compute);
  ~DeviceBackend() override;
  DeviceBackend(const DeviceBackend&) = delete;
  DeviceBackend& operator=(const DeviceBackend&) = delete;

  MemorySpace memory_space() const override { return MemorySpace::device; }
  // Waits for the compute stream, then copies (the host reads the result at once).
  void copy_to_host(void* host_dst, const void* src, size_t bytes) override;
  // Up to kStagingBytes: copied into a page-locked staging slot and uploaded asynchronously on the
  // compute stream (the host's buffer may be reused at once, and the upload of a micro-batch's
  // tokens does not drain the stream); larger copies are synchronous.
  void copy_from_host(void* dst, const void* host_src, size_t bytes) override;
  void download_async(void* host_dst, const void* src, size_t bytes) override;
  void upload_async(void* dst, const void* host_src, size_t bytes) override;
  void synchronize() override;
  void comm_begin(Communicator& c) override;
  void comm_end(Communicator& c) override;
  Timeline& timeline() override { return timeline_; }
  const MemoryStats* device_memory() const override { return &device_mem_; }
  void reset_peaks() override;

  static constexpr size_t kStagingBytes = size_t{1} << 20;
  static constexpr size_t kStagingSlots = 4;

 protected:
  // Allocated, zeroed when `init` asks (a memset enqueued behind the allocation) and freed on the
  // compute stream.
  void* raw_alloc(size_t bytes, MemCategory cat, AllocInit init) override;
  void raw_free(void* p) override;
  // Page-locked (DeviceOps::host_alloc), zeroed on the host; freed after the compute stream drained,
  // since an enqueued copy may still read it.
  void* raw_alloc_host(size_t bytes) override;
  void raw_free_host(void* p) override;
  DeviceOps& ops() const { return ops_; }
  DeviceStream compute_stream() const { return compute_; }

 private:
  struct Staging {
    void* host = nullptr;
    DeviceEvent done = nullptr;  // recorded after the upload that read this slot
    bool used = false;
  };
  DeviceEvent comm_event(DeviceStream s);

  DeviceOps& ops_;
  DeviceStream compute_;
  DeviceEvent compute_done_ = nullptr;
  std::map<DeviceStream, DeviceEvent> comm_done_;  // one per communicator stream
  std::array<Staging, kStagingSlots> staging_{};
  size_t next_slot_ = 0;
  DeviceTimeline timeline_;
  struct Taken {
    MemCategory cat;
    size_t bytes;  // what the pool's used counter grew by
  };
  std::unordered_map<void*, Taken> taken_;
  MemoryStats device_mem_;
};

}  // namespace gcb::models
