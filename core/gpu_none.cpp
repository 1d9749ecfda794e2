// The GPU runtime when gcbench was built without CUDA: no devices, every call is a fault.
#include "core/error.hpp"
#include "core/gpu.hpp"

namespace gcb::gpu {

namespace {
[[noreturn]] void not_built(const char* what) {
  check_failed("gcbench", what, "this gcbench was built without CUDA (GCB_CUDA=OFF or no nvcc)", __FILE__, __LINE__);
}
}  // namespace

const Runtime& runtime() {
  static const Runtime r{false, "gcbench was built without CUDA", 0, 0, {}};
  return r;
}
Stream create_stream(int) { not_built("create_stream"); }
void destroy_stream(Stream) {}
void synchronize(Stream) { not_built("synchronize"); }
void* device_alloc(int, size_t) { not_built("device_alloc"); }
void device_free(void*) {}
void* host_alloc_pinned(size_t) { not_built("host_alloc_pinned"); }
void host_free_pinned(void*) {}
void host_register(void*, size_t) { not_built("host_register"); }
void host_unregister(void*) {}
void* host_device_pointer(void*) { not_built("host_device_pointer"); }
void copy_async(void*, const void*, size_t, CopyKind, Stream) { not_built("copy_async"); }
void copy_peer_async(void*, int, const void*, int, size_t, Stream) { not_built("copy_peer_async"); }
void memset_async(void*, int, size_t, Stream) { not_built("memset_async"); }
bool can_access_peer(int, int) { return false; }
void enable_peer_access(int, int) { not_built("enable_peer_access"); }
void disable_peer_access(int, int) {}
Event create_event(int) { not_built("create_event"); }
void destroy_event(Event) {}
void record_event(Event, Stream) { not_built("record_event"); }
void stream_wait_event(Stream, Event) { not_built("stream_wait_event"); }
std::unique_ptr<Timer> make_event_timer(int, Stream, Latch) { not_built("make_event_timer"); }
void profiler_start() {}
void profiler_stop() {}

}  // namespace gcb::gpu
