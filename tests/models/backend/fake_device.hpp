// A fake device for the host side of device backends (models/backend/device/device_backend.hpp): its memory is
// host memory and every call completes at once, but it keeps what a GPU would enforce — which
// operation happens before which — as vector clocks over streams, events and host waits. The
// checks then ask, of a run of the real engine, whether every collective saw all compute issued
// before it and whether any memory was freed before a collective that used it was done. It also
// keeps CUDA's current device per host thread (cudaSetDevice is per thread) and lists every
// operation a thread issued while another device, or none, was its current one. Its allocations
// hold NaN (every byte 0xFF: NaN in f64, f32, bf16 and fp16, −1 in int32) until written, so a
// buffer allocated AllocInit::unset that some op reads before writing turns the losses into NaN, or
// its tokens into out-of-range ids, instead of passing on zeros a GPU does not promise.
//   FakeDeviceOps       DeviceOps with the happens-before bookkeeping and the three checks
//   FakeStreamComm      a host communicator that claims device memory and a stream of its own
//   FakeDeviceBackend   DeviceBackend whose ops are the CPU oracle's, each logged as one kernel
#pragma once

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "collectives/communicator.hpp"
#include "kernels/train/adamw_math.hpp"
#include "models/backend/cpu/cpu_backend.hpp"
#include "models/backend/device/device_backend.hpp"
#include "models/engine/parallel_groups.hpp"

namespace gcb::models::test {

// The calling thread's current fake device (-1: none bound), as cudaSetDevice keeps it per thread.
inline thread_local int fake_current_device = -1;

class FakeDeviceOps final : public DeviceOps {
 public:
  using Clock = std::map<DeviceStream, uint64_t>;
  struct Op {
    enum Kind { compute, collective, free } kind;
    DeviceStream stream;
    Clock ts;
    std::vector<std::pair<const char*, size_t>> ranges;  // a collective's buffers, a free's allocation
    uint64_t compute_before = 0;                         // compute-stream ops issued before this one
    std::string what;
  };

  explicit FakeDeviceOps(DeviceStream compute, int device = 0) : compute_(compute), device_(device) {}
  ~FakeDeviceOps() override {
    for (auto& [p, bytes] : live_) std::free(p);
    for (void* p : freed_) std::free(p);
  }

  int device() const override { return device_; }
  void bind_thread() override { fake_current_device = device_; }
  void* alloc_async(size_t bytes, DeviceStream s) override {
    void* p = std::aligned_alloc(64, (bytes + 63) / 64 * 64);
    std::memset(p, 0xFF, bytes);
    live_[p] = bytes;
    used_ += taken(bytes);
    high_ = std::max(high_, used_);
    issue(Op::compute, s, {}, "alloc");
    return p;
  }
  void free_async(void* p, DeviceStream s) override {
    const size_t bytes = live_.at(p);
    issue(Op::free, s, {{static_cast<const char*>(p), bytes}}, "free");
    freed_.push_back(p);  // kept, so that a later allocation cannot reuse the address
    live_.erase(p);
    used_ -= taken(bytes);
  }
  void zero_async(void* p, size_t bytes, DeviceStream s) override {
    if (!skip_zeroing) std::memset(p, 0, bytes);
    issue(Op::compute, s, {}, "zero");
  }
  // Leaves even AllocInit::zeros allocations NaN: the control that shows the NaN fill reaches the
  // losses when a buffer that needs its zeros misses them.
  bool skip_zeroing = false;
  void copy_async(void* dst, const void* src, size_t bytes, DeviceStream s) override {
    std::memcpy(dst, src, bytes);
    issue(Op::compute, s, {}, "copy");
  }
  void* host_alloc(size_t bytes) override { return std::malloc(bytes); }
  void host_free(void* p) override { std::free(p); }
  DeviceEvent create_event(bool) override {
    check_thread("create_event");
    events_.emplace_back();
    times_.push_back(0);
    return reinterpret_cast<DeviceEvent>(events_.size());  // 1-based ids
  }
  void destroy_event(DeviceEvent) override {}
  void record(DeviceEvent e, DeviceStream s) override {
    check_thread("record");
    merge(clock_[s], host_);
    event(e) = clock_[s];
    times_[id(e)] = static_cast<double>(++records);
  }
  void wait(DeviceStream s, DeviceEvent e) override {
    check_thread("wait");
    merge(clock_[s], event(e));
  }
  void event_synchronize(DeviceEvent e) override { merge(host_, event(e)); }
  void synchronize(DeviceStream s) override {
    ++syncs;
    merge(host_, clock_[s]);
  }
  double elapsed_seconds(DeviceEvent from, DeviceEvent to) override {
    return 1e-3 * (times_[id(to)] - times_[id(from)]);
  }
  PoolCounters pool() const override { return {used_, high_, high_}; }
  size_t pool_used() const override { return used_; }
  DeviceMemoryInfo memory_info() const override { return {kTotal - used_, kTotal}; }
  static constexpr size_t kTotal = size_t{80} << 30;
  size_t granularity = 1;  // the fake pool's allocation unit, set before the first allocation
  size_t taken(size_t bytes) const { return (bytes + granularity - 1) / granularity * granularity; }

  // A kernel on `s` (the fake backend's ops) and a collective on a communicator's stream.
  void kernel(DeviceStream s, const char* what) { issue(Op::compute, s, {}, what); }
  void collective(DeviceStream s, std::vector<std::pair<const char*, size_t>> buffers, const char* what) {
    issue(Op::collective, s, std::move(buffers), what);
  }

  // Every collective happens after every compute-stream operation issued before it.
  std::vector<std::string> collectives_missing_compute() const {
    std::vector<std::string> bad;
    for (size_t i = 0; i < log_.size(); ++i) {
      const Op& c = log_[i];
      if (c.kind != Op::collective) continue;
      const auto it = c.ts.find(compute_);
      const uint64_t seen = it == c.ts.end() ? 0 : it->second;
      if (seen < c.compute_before)
        bad.push_back(c.what + " #" + std::to_string(i) + " sees " + std::to_string(seen) + " of " +
                      std::to_string(c.compute_before) + " compute ops issued before it");
    }
    return bad;
  }
  // No memory is freed before every earlier collective that used it has happened.
  std::vector<std::string> frees_racing_collectives() const {
    std::vector<std::string> bad;
    for (size_t f = 0; f < log_.size(); ++f) {
      if (log_[f].kind != Op::free) continue;
      const auto [p, bytes] = log_[f].ranges[0];
      for (size_t c = 0; c < f; ++c) {
        const Op& op = log_[c];
        if (op.kind != Op::collective) continue;
        const bool overlaps = std::any_of(op.ranges.begin(), op.ranges.end(), [&](const auto& r) {
          return r.second > 0 && r.first < p + bytes && p < r.first + r.second;
        });
        const auto seen = log_[f].ts.find(op.stream);
        if (overlaps && (seen == log_[f].ts.end() || seen->second < op.ts.at(op.stream)))
          bad.push_back("free #" + std::to_string(f) + " before " + op.what + " #" + std::to_string(c) + " is done");
      }
    }
    return bad;
  }
  // Operations issued by a thread whose current device was not this one (CUDA would run them on
  // that other device, or fail: a stream and an event belong to one device).
  const std::vector<std::string>& wrong_thread() const { return wrong_thread_; }
  size_t collectives() const {
    return static_cast<size_t>(
        std::count_if(log_.begin(), log_.end(), [](const Op& o) { return o.kind == Op::collective; }));
  }
  const std::vector<Op>& log() const { return log_; }
  int syncs = 0;
  uint64_t records = 0;

 private:
  static void merge(Clock& into, const Clock& from) {
    for (const auto& [s, n] : from) into[s] = std::max(into[s], n);
  }
  static size_t id(DeviceEvent e) { return reinterpret_cast<size_t>(e) - 1; }
  Clock& event(DeviceEvent e) { return events_.at(id(e)); }
  void check_thread(const std::string& what) {
    if (fake_current_device != device_)
      wrong_thread_.push_back(what + " for device " + std::to_string(device_) + " on a thread bound to " +
                              std::to_string(fake_current_device));
  }
  void issue(Op::Kind kind, DeviceStream s, std::vector<std::pair<const char*, size_t>> ranges, std::string what) {
    check_thread(what);
    Clock& c = clock_[s];
    merge(c, host_);  // what the host has waited for happened before anything it issues next
    ++c[s];
    log_.push_back({kind, s, c, std::move(ranges), compute_issued_, std::move(what)});
    if (s == compute_) ++compute_issued_;
  }

  DeviceStream compute_;
  int device_;
  std::vector<std::string> wrong_thread_;
  std::map<DeviceStream, Clock> clock_;
  Clock host_;
  std::vector<Clock> events_;
  std::vector<double> times_;
  std::vector<Op> log_;
  std::map<void*, size_t> live_;
  std::vector<void*> freed_;
  size_t used_ = 0, high_ = 0;
  uint64_t compute_issued_ = 0;
};

// A host communicator (threads) presented as a device one with its own stream: each call is
// logged on that stream with its buffers, then run at once.
class FakeStreamComm final : public Communicator {
 public:
  // `world` (borrowed) with stream id `first_stream`; each split gets the next id.
  static std::unique_ptr<FakeStreamComm> wrap(Communicator& world, FakeDeviceOps& ops, uintptr_t first_stream) {
    return std::unique_ptr<FakeStreamComm>(
        new FakeStreamComm(nullptr, world, ops, std::make_shared<uintptr_t>(first_stream)));
  }

  int rank() const override { return inner_.rank(); }
  int size() const override { return inner_.size(); }
  std::string_view backend() const override { return "fake-stream"; }
  MemorySpace memory() const override { return MemorySpace::device; }
  void* stream() const override { return stream_; }
  void all_reduce(const void* s, void* r, size_t n, DType t, ReduceOp op) override {
    log({{s, n * dtype_size(t)}, {r, n * dtype_size(t)}}, "all_reduce");
    inner_.all_reduce(s, r, n, t, op);
  }
  void all_gather(const void* s, void* r, size_t n, DType t) override {
    log({{s, n * dtype_size(t)}, {r, n * dtype_size(t) * static_cast<size_t>(size())}}, "all_gather");
    inner_.all_gather(s, r, n, t);
  }
  void reduce_scatter(const void* s, void* r, size_t n, DType t, ReduceOp op) override {
    log({{s, n * dtype_size(t) * static_cast<size_t>(size())}, {r, n * dtype_size(t)}}, "reduce_scatter");
    inner_.reduce_scatter(s, r, n, t, op);
  }
  void broadcast(const void* s, void* r, size_t n, DType t, int root) override {
    log({{s, n * dtype_size(t)}, {r, n * dtype_size(t)}}, "broadcast");
    inner_.broadcast(s, r, n, t, root);
  }
  void reduce(const void* s, void* r, size_t n, DType t, ReduceOp op, int root) override {
    log({{s, n * dtype_size(t)}, {r, n * dtype_size(t)}}, "reduce");
    inner_.reduce(s, r, n, t, op, root);
  }
  void all_to_all(const void* s, void* r, size_t n, DType t) override {
    const size_t b = n * dtype_size(t) * static_cast<size_t>(size());
    log({{s, b}, {r, b}}, "all_to_all");
    inner_.all_to_all(s, r, n, t);
  }
  void group_start() override { inner_.group_start(); }
  void group_end() override { inner_.group_end(); }
  void send(const void* b, size_t n, DType t, int peer) override {
    log({{b, n * dtype_size(t)}}, "send");
    inner_.send(b, n, t, peer);
  }
  void recv(void* b, size_t n, DType t, int peer) override {
    log({{b, n * dtype_size(t)}}, "recv");
    inner_.recv(b, n, t, peer);
  }
  void barrier() override { inner_.barrier(); }
  void synchronize() override {
    ops_.synchronize(stream_);
    inner_.synchronize();
  }
  std::unique_ptr<Communicator> split(int color, int key) override {
    std::unique_ptr<Communicator> child = inner_.split(color, key);
    Communicator& ref = *child;
    return std::unique_ptr<Communicator>(new FakeStreamComm(std::move(child), ref, ops_, next_));
  }
  ThreadSupport thread_support() const override { return inner_.thread_support(); }

 private:
  FakeStreamComm(std::unique_ptr<Communicator> owned, Communicator& inner, FakeDeviceOps& ops,
                 std::shared_ptr<uintptr_t> next)
      : own_(std::move(owned)),
        inner_(inner),
        ops_(ops),
        stream_(reinterpret_cast<DeviceStream>((*next)++)),
        next_(std::move(next)) {}
  void log(std::vector<std::pair<const void*, size_t>> b, const char* what) {
    std::vector<std::pair<const char*, size_t>> ranges;
    for (const auto& [p, n] : b) ranges.emplace_back(static_cast<const char*>(p), n);
    ops_.collective(stream_, std::move(ranges), what);
  }
  std::unique_ptr<Communicator> own_;
  Communicator& inner_;
  FakeDeviceOps& ops_;
  DeviceStream stream_;
  std::shared_ptr<uintptr_t> next_;
};

// What every rank thread of an engine test on fake devices sets up first: its own fake device, its
// world on that device's streams, and its place in `lay`.
struct FakeRankDevice {
  FakeRankDevice(Communicator& w, const ParallelLayout& lay, DeviceStream compute, uintptr_t first_comm_stream)
      : ops(compute), world(FakeStreamComm::wrap(w, ops, first_comm_stream)), ctx(make_parallel_groups(*world, lay)) {}
  FakeDeviceOps ops;
  std::unique_ptr<FakeStreamComm> world;
  ParallelGroups ctx;
};

// DeviceBackend bookkeeping over the fake device, computing with the CPU oracle: each op is one
// kernel on the compute stream, so a run's results equal the CPU backend's and its ordering is
// checkable. `broken` drops one half of the ordering plan, to show that the checks catch it.
class FakeDeviceBackend final : public DeviceBackend {
 public:
  enum class Broken { none, comm_begin, comm_end };
  FakeDeviceBackend(FakeDeviceOps& ops, DeviceStream compute, Broken broken = Broken::none)
      : DeviceBackend(ops, compute), fake_(ops), broken_(broken) {}
  std::string_view name() const override { return "fake-device"; }
  void comm_begin(Communicator& c) override {
    if (broken_ != Broken::comm_begin) DeviceBackend::comm_begin(c);
  }
  void comm_end(Communicator& c) override {
    if (broken_ != Broken::comm_end) DeviceBackend::comm_end(c);
  }

  void fill(View x, size_t n, float v) override {
    k("fill");
    cpu_.fill(x, n, v);
  }
  void copy(View d, View s, size_t n) override {
    k("copy");
    cpu_.copy(d, s, n);
  }
  void add(View o, View a, View b, size_t n) override {
    k("add");
    cpu_.add(o, a, b, n);
  }
  void scale(View x, double s, size_t n) override {
    k("scale");
    cpu_.scale(x, s, n);
  }
  void init_normal(View x, size_t n, uint64_t seed, uint64_t st, uint64_t first, float sd) override {
    k("init");
    cpu_.init_normal(x, n, seed, st, first, sd);
  }
  void sum(View o, View in, size_t n, bool acc) override {
    k("sum");
    cpu_.sum(o, in, n, acc);
  }
  void sum_squares(View o, View in, size_t n, bool acc) override {
    k("sum_squares");
    cpu_.sum_squares(o, in, n, acc);
  }
  void gemm(const GemmArgs& a) override {
    k("gemm");
    cpu_.gemm(a);
  }
  void bias_backward(View db, View d, int M, int N) override {
    k("bias_backward");
    cpu_.bias_backward(db, d, M, N);
  }
  void layernorm_forward(View o, float* m, float* r, View x, View w, View b, int rows, int C) override {
    k("layernorm_forward");
    cpu_.layernorm_forward(o, m, r, x, w, b, rows, C);
  }
  void layernorm_backward(View dx, View dw, View db, View d, View x, View w, const float* m, const float* r, int rows,
                          int C) override {
    k("layernorm_backward");
    cpu_.layernorm_backward(dx, dw, db, d, x, w, m, r, rows, C);
  }
  void gelu_forward(View o, View x, size_t n) override {
    k("gelu_forward");
    cpu_.gelu_forward(o, x, n);
  }
  void gelu_backward(View dx, View x, View d, size_t n) override {
    k("gelu_backward");
    cpu_.gelu_backward(dx, x, d, n);
  }
  void attention_forward(View o, float* lse, View qkv, int B, int T, int C, int NH) override {
    k(attention_kernel("attention_forward").c_str());
    cpu_.attention_forward(o, lse, qkv, B, T, C, NH);
  }
  void attention_backward(View dqkv, View d, View qkv, View o, const float* lse, int B, int T, int C, int NH) override {
    k(attention_kernel("attention_backward").c_str());
    cpu_.attention_backward(dqkv, d, qkv, o, lse, B, T, C, NH);
  }
  // --attn auto on a fake device: the times this rank measures (nullopt: nothing to measure), and
  // the choice made from the agreed times as a bf16 run makes it (choose_attention), which the
  // attention kernels then log as the path they run and notes() records.
  std::optional<AttentionTimes> fake_attention_times;
  std::optional<AttentionChoice> adopted;
  int adopted_calls = 0;
  std::optional<AttentionTimes> measure_attention(DType, int, int, int, int) override { return fake_attention_times; }
  void adopt_attention(DType, int, int, int, int, const AttentionTimes& agreed, int ranks) override {
    std::map<AttnImplId, std::string> usable;  // every row that trains takes the problem
    for (const AttnImplId id : kernels::attn::training_attention_impls()) usable[id] = "";
    adopted = choose_attention(AttentionRequest::automatic, DType::bf16, usable, agreed, ranks);
    ++adopted_calls;
  }
  BackendNotes notes() const override {
    BackendNotes n;
    if (adopted) n.text.emplace_back("attention", attention_choice_name(*adopted) + " (" + adopted->why + ")");
    return n;
  }
  void embedding_forward(View o, const int32_t* t, View wte, int v0, int V, View wpe, int B, int T, int C) override {
    k("embedding_forward");
    cpu_.embedding_forward(o, t, wte, v0, V, wpe, B, T, C);
  }
  void embedding_backward(View dwte, View dwpe, View d, const int32_t* t, int v0, int V, int B, int T, int C) override {
    k("embedding_backward");
    cpu_.embedding_backward(dwte, dwpe, d, t, v0, V, B, T, C);
  }
  void cross_entropy_max(float* m, View l, int rows, int V, int valid) override {
    k("ce_max");
    cpu_.cross_entropy_max(m, l, rows, V, valid);
  }
  void cross_entropy_sums(float* s, View l, const float* m, const int32_t* t, int v0, int rows, int V,
                          int valid) override {
    k("ce_sums");
    cpu_.cross_entropy_sums(s, l, m, t, v0, rows, V, valid);
  }
  void cross_entropy_finish(float* loss, View p, View l, const float* m, const float* s, int rows, int V,
                            int valid) override {
    k("ce_finish");
    cpu_.cross_entropy_finish(loss, p, l, m, s, rows, V, valid);
  }
  void cross_entropy_backward(View d, View p, const int32_t* t, int v0, int rows, int V, float dl) override {
    k("ce_backward");
    cpu_.cross_entropy_backward(d, p, t, v0, rows, V, dl);
  }
  void adamw(View p, View g, float* m, float* v, float* master, size_t n, const AdamWArgs& a) override {
    k("adamw");
    cpu_.adamw(p, g, m, v, master, n, a);
  }
  // The multi-tensor kernel's CPU reference walking the kernel's own chunk table (small limits, so
  // that a run has several launches and tensors split between them), one logged kernel per launch.
  // As CudaBackend: the decaying tensors, then the others with weight decay 0.
  void adamw_multi(const std::vector<AdamWBuffers>& list, const AdamWArgs& a) override {
    namespace kt = kernels::train;
    for (const bool decay : {true, false}) {
      std::vector<kt::AdamWTensor> tensors;
      std::vector<size_t> sizes;
      for (const AdamWBuffers& x : list) {
        if (x.decay != decay) continue;
        tensors.push_back({x.params.data, x.grads.data, x.m, x.v, x.master, x.n});
        sizes.push_back(x.n);
      }
      if (tensors.empty()) continue;
      const auto plan = kt::plan_multi_tensor(sizes, kMultiTensorLimits);
      for (size_t l = 0; l < plan.size(); ++l) k("adamw_multi");
      const kt::AdamWStep step =
          kt::adamw_step(a.lr, a.beta1, a.beta2, a.eps, decay ? a.weight_decay : 0.0f, a.step, a.grad_scale);
      kt::adamw_multi_tensor_host(list.front().params.dtype, tensors, plan, step);
    }
  }
  static constexpr kernels::train::MultiTensorLimits kMultiTensorLimits{3, 5, 64};

 private:
  void k(const char* what) { fake_.kernel(compute_stream(), what); }
  std::string attention_kernel(const char* op) const {
    return adopted ? std::string(op) + ":" + attention_choice_name(*adopted) : std::string(op);
  }
  FakeDeviceOps& fake_;
  Broken broken_;
  CpuBackend cpu_;
};

}  // namespace gcb::models::test
