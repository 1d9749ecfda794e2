// Device-pair and host-aggregate cases of `gcbench p2p` (CUDA builds): copy-engine and SM
// copies between two GPUs with peer access on and off, uni- and bidirectional, the flag
// ping-pong one-way latency, p2pBandwidthLatencyTest's per-copy-call latency, and all GPUs
// copying to/from pinned host memory at once. Timing is the harness's (event timer on the
// source GPU's stream; a second stream joined with events for the other side).
#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "bench/common/transfer_metrics.hpp"
#include "bench/p2p/p2p_internal.hpp"
#include "bench/p2p/p2p_links.hpp"
#include "core/buffer.hpp"
#include "core/error.hpp"
#include "core/gpu.hpp"
#include "kernels/mem/gpu_mem.hpp"
#include "kernels/p2p/gpu_p2p.hpp"
#include "kernels/p2p/p2p_pingpong.hpp"
#include "kernels/mem/stream_ops.hpp"

namespace gcb::bench {

namespace {

cudaStream_t cuda(gpu::Stream s) { return static_cast<cudaStream_t>(s); }

uint8_t pattern(uint64_t seed, size_t i) { return static_cast<uint8_t>(kernels::mix64(seed + i) >> 56); }

void fill(void* device_dst, size_t bytes, uint64_t seed, gpu::Stream s) {
  std::vector<uint8_t> p(bytes);
  for (size_t i = 0; i < bytes; ++i) p[i] = pattern(seed, i);
  gpu::copy_async(device_dst, p.data(), bytes, gpu::CopyKind::default_kind, s);
  gpu::synchronize(s);
}

std::string check(const void* device_src, size_t bytes, uint64_t seed, gpu::Stream s, const char* what) {
  std::vector<uint8_t> got(bytes);
  gpu::copy_async(got.data(), device_src, bytes, gpu::CopyKind::default_kind, s);
  gpu::synchronize(s);
  for (size_t i = 0; i < bytes; ++i)
    if (got[i] != pattern(seed, i))
      return fmt::format("{} byte {} = {} (expected {})", what, i, got[i], pattern(seed, i));
  return {};
}

const char* on_off(bool b) { return b ? "on" : "off"; }

// Sets the process-wide peer state of both directions between a and b.
void set_peer_access(int a, int b, bool on) {
  if (on) {
    gpu::enable_peer_access(a, b);
    gpu::enable_peer_access(b, a);
  } else {
    gpu::disable_peer_access(a, b);
    gpu::disable_peer_access(b, a);
  }
}

// A case between GPUs src and dst: the primary stream on src (timed), a second on dst.
class PairCase : public Case {
 public:
  PairCase(int src, int dst, bool peer_access) : src_(src), dst_(dst), peer_(peer_access) {}
  int gpu() const override { return src_; }
  gpu::Stream stream() const override { return stream_; }
  std::string waived_reason() const override {
    if (peer_ && !(gpu::can_access_peer(src_, dst_) && gpu::can_access_peer(dst_, src_)))
      return fmt::format("GPU{} and GPU{} cannot access each other's memory (no peer access)", src_, dst_);
    return {};
  }
  void teardown() override {
    release();
    gpu::destroy_event(start_);
    gpu::destroy_event(done2_);
    gpu::destroy_stream(stream2_);
    gpu::destroy_stream(stream_);
    start_ = done2_ = nullptr;
    stream_ = stream2_ = nullptr;
  }

 protected:
  void make_streams() {
    set_peer_access(src_, dst_, peer_);
    stream_ = gpu::create_stream(src_);
    stream2_ = gpu::create_stream(dst_);
    start_ = gpu::create_event(src_);
    done2_ = gpu::create_event(dst_);
  }
  // Work enqueued between begin_join() and end_join() on stream2_ starts with stream_'s next
  // work and stream_ waits for it: the timer on stream_ spans both (p2pBandwidthLatencyTest's
  // bidirectional method, bench/mem/mem_gpu.cpp GpuCopyCase).
  void begin_join() {
    gpu::record_event(start_, stream_);
    gpu::stream_wait_event(stream2_, start_);
  }
  void end_join() {
    gpu::record_event(done2_, stream2_);
    gpu::stream_wait_event(stream_, done2_);
  }
  nlohmann::json pair_params(const char* engine) const {
    return {{"src", src_}, {"dst", dst_}, {"engine", engine}, {"peer_access", on_off(peer_)}, {"scope", "device"}};
  }
  virtual void release() {}
  int src_, dst_;
  bool peer_;
  gpu::Stream stream_ = nullptr, stream2_ = nullptr;
  gpu::Event start_ = nullptr, done2_ = nullptr;
};

enum class Engine { ce, sm };

class PairCopyCase final : public PairCase {
 public:
  PairCopyCase(int src, int dst, Engine e, bool peer_access, bool bidirectional, size_t bytes, uint64_t seed)
      : PairCase(src, dst, peer_access), engine_(e), bidir_(bidirectional), bytes_(bytes), seed_(seed) {}
  std::string key() const override { return bidir_ ? "p2p/bidir_bandwidth" : "p2p/bandwidth"; }
  nlohmann::json params() const override {
    auto p = pair_params(engine_ == Engine::ce ? "ce" : "sm");
    p["bytes"] = bytes_;
    return p;
  }
  std::string waived_reason() const override {
    if (engine_ == Engine::sm && !peer_)
      return "an SM copy kernel dereferences the peer's memory: it needs peer access";
    if (auto r = PairCase::waived_reason(); !r.empty()) return r;
    const size_t per_device = bytes_ * (bidir_ ? 2 : 1);
    for (int g : {src_, dst_})
      if (per_device > gpu::runtime().devices[static_cast<size_t>(g)].memory_bytes / 2)
        return fmt::format("{} B per GPU does not fit in half of GPU{}'s memory", per_device, g);
    return {};
  }
  nlohmann::json model() const override {
    return {{"bytes", bytes_counted()},
            {"bytes_counted", bidir_ ? "sum of both directions (p2pBandwidthLatencyTest)" : "bytes copied once"}};
  }
  void setup() override {
    make_streams();
    src_buf_ = DeviceBuffer(src_, bytes_);
    dst_buf_ = DeviceBuffer(dst_, bytes_);
    fill(src_buf_.data(), bytes_, seed_, stream_);
    if (bidir_) {
      back_src_ = DeviceBuffer(dst_, bytes_);
      back_dst_ = DeviceBuffer(src_, bytes_);
      fill(back_src_.data(), bytes_, seed_ + 1, stream2_);
    }
  }
  void launch() override {
    if (!bidir_) {
      copy(dst_buf_.data(), dst_, src_buf_.data(), src_, stream_);
      return;
    }
    begin_join();
    copy(dst_buf_.data(), dst_, src_buf_.data(), src_, stream_);
    copy(back_dst_.data(), src_, back_src_.data(), dst_, stream2_);
    end_join();
  }
  std::string verify() override {
    gpu::synchronize(stream_);
    if (auto w = check(dst_buf_.data(), bytes_, seed_, stream_, "destination"); !w.empty()) return w;
    if (bidir_) return check(back_dst_.data(), bytes_, seed_ + 1, stream_, "reverse destination");
    return {};
  }
  std::vector<Metric> metrics(const Statistics& s) const override {
    LinkRate link = device_pair_link(src_, dst_, peer_);
    if (bidir_ && link.gbps) {
      *link.gbps *= 2;  // both directions at once
      link.source += " x2 directions";
    }
    auto m = bandwidth_metrics(bytes_counted(), s, link.gbps, link.source);
    extra_ = m.front().value ? link_extra(*m.front().value, link) : nlohmann::json::object();
    return m;
  }
  nlohmann::json extra() override { return extra_; }

 private:
  void release() override {
    src_buf_ = DeviceBuffer();
    dst_buf_ = DeviceBuffer();
    back_src_ = DeviceBuffer();
    back_dst_ = DeviceBuffer();
  }
  double bytes_counted() const { return static_cast<double>(bytes_) * (bidir_ ? 2 : 1); }
  // Copy engine: cudaMemcpyPeerAsync (staged through the host when peer access is off). SM: a
  // kernel on the sending GPU stores into the receiver's memory (a push, "P2P writes").
  void copy(void* dst, int dst_device, const void* src, int src_device, gpu::Stream s) {
    if (engine_ == Engine::ce) {
      gpu::copy_peer_async(dst, dst_device, src, src_device, bytes_, s);
      return;
    }
    CUDA_CHECK(cudaSetDevice(src_device));
    kernels::gpu_sm_copy(dst, src, bytes_, cuda(s));
  }
  Engine engine_;
  bool bidir_;
  size_t bytes_;
  uint64_t seed_;
  DeviceBuffer src_buf_, dst_buf_, back_src_, back_dst_;
  mutable nlohmann::json extra_ = nlohmann::json::object();
};

// One-way latency = (time of `round_trips` GPU-initiated round trips) / (2 × round_trips).
class PingPongCase final : public PairCase {
 public:
  PingPongCase(int src, int dst, uint32_t round_trips) : PairCase(src, dst, true), round_trips_(round_trips) {}
  std::string key() const override { return "p2p/latency"; }
  nlohmann::json params() const override {
    auto p = pair_params("sm");
    p["method"] = "flag ping-pong";
    p["round_trips"] = round_trips_;
    return p;
  }
  nlohmann::json model() const override {
    return {{"one_way", "launch time / (2 x round_trips), launch overhead amortised over the round trips"}};
  }
  void setup() override {
    make_streams();
    src_mem_ = DeviceBuffer(src_, 64);
    dst_mem_ = DeviceBuffer(dst_, 64);
    gpu::memset_async(src_mem_.data(), 0, 64, stream_);
    gpu::memset_async(dst_mem_.data(), 0, 64, stream2_);
    gpu::synchronize(stream_);
    gpu::synchronize(stream2_);
    auto* s = static_cast<char*>(src_mem_.data());
    p_ = {src_,
          dst_,
          reinterpret_cast<unsigned long long*>(s),
          static_cast<unsigned long long*>(dst_mem_.data()),
          reinterpret_cast<long long*>(s + 8),
          reinterpret_cast<int*>(s + 16)};
  }
  void launch() override {
    begin_join();
    kernels::gpu_pingpong_launch(p_, base_, round_trips_, cuda(stream_), cuda(stream2_));
    base_ += round_trips_;
    end_join();
  }
  std::string verify() override {
    gpu::synchronize(stream_);
    gpu::synchronize(stream2_);
    const auto st = read_state();
    if (st.timed_out) return "a ping-pong kernel gave up waiting for its partner (timeout)";
    const uint64_t want = kernels::pingpong_final_flag(base_ - round_trips_, round_trips_);
    if (st.initiator_flag != want || st.responder_flag != want)
      return fmt::format("flags {} / {} after the last launch, expected {}", st.initiator_flag, st.responder_flag,
                         want);
    return {};
  }
  std::vector<Metric> metrics(const Statistics& s) const override { return latency_metrics(s, 2ull * round_trips_); }
  // The same launch timed inside the kernel with %globaltimer (launch overhead excluded).
  nlohmann::json extra() override {
    launch();
    gpu::synchronize(stream_);
    const auto st = read_state();
    if (st.timed_out || st.elapsed_ns <= 0) return nlohmann::json::object();
    return {{"one_way_globaltimer_ns", static_cast<double>(st.elapsed_ns) / (2.0 * round_trips_)}};
  }

 private:
  struct State {
    uint64_t initiator_flag = 0, responder_flag = 0;
    long long elapsed_ns = 0;
    int timed_out = 0;
  };
  State read_state() {
    unsigned char host[24];
    gpu::copy_async(host, src_mem_.data(), sizeof(host), gpu::CopyKind::default_kind, stream_);
    gpu::synchronize(stream_);
    State st;
    unsigned long long f = 0;
    std::memcpy(&f, host, 8);
    st.initiator_flag = f;
    std::memcpy(&st.elapsed_ns, host + 8, 8);
    std::memcpy(&st.timed_out, host + 16, 4);
    gpu::copy_async(&f, dst_mem_.data(), 8, gpu::CopyKind::default_kind, stream2_);
    gpu::synchronize(stream2_);
    st.responder_flag = f;
    return st;
  }
  void release() override {
    src_mem_ = DeviceBuffer();
    dst_mem_ = DeviceBuffer();
  }
  uint32_t round_trips_;
  uint64_t base_ = 0;
  DeviceBuffer src_mem_, dst_mem_;
  kernels::GpuPingPong p_;
};

// p2pBandwidthLatencyTest's "latency": what one 16 B cudaMemcpyPeerAsync costs, 100 per launch.
class CopyCallLatencyCase final : public PairCase {
 public:
  CopyCallLatencyCase(int src, int dst, bool peer_access) : PairCase(src, dst, peer_access) {}
  std::string key() const override { return "p2p/copy_call_latency"; }
  nlohmann::json params() const override {
    auto p = pair_params("ce");
    p["bytes"] = kCopyCallBytes;
    return p;
  }
  nlohmann::json model() const override { return {{"copies_per_launch", kCopyCallsPerLaunch}}; }
  void setup() override {
    make_streams();
    src_buf_ = DeviceBuffer(src_, kCopyCallBytes);
    dst_buf_ = DeviceBuffer(dst_, kCopyCallBytes);
    fill(src_buf_.data(), kCopyCallBytes, 7, stream_);
  }
  void launch() override {
    for (int i = 0; i < kCopyCallsPerLaunch; ++i)
      gpu::copy_peer_async(dst_buf_.data(), dst_, src_buf_.data(), src_, kCopyCallBytes, stream_);
  }
  std::string verify() override {
    gpu::synchronize(stream_);
    return check(dst_buf_.data(), kCopyCallBytes, 7, stream_, "destination");
  }
  std::vector<Metric> metrics(const Statistics& s) const override {
    auto m = latency_metrics(s, kCopyCallsPerLaunch);
    for (auto& x : m)
      if (x.value) *x.value /= 1e3;  // ns → us, the unit p2pBandwidthLatencyTest prints
    for (auto& x : m) x.unit = "us";
    return m;
  }

 private:
  void release() override {
    src_buf_ = DeviceBuffer();
    dst_buf_ = DeviceBuffer();
  }
  DeviceBuffer src_buf_, dst_buf_;
};

// Every GPU copies `bytes` to (or from) its own pinned host buffer at the same time; bandwidth =
// Σ bytes / time of the slowest (a true aggregate, not nvbandwidth's all_to_host, which reports
// one GPU's bandwidth while the others interfere — NVIDIA/nvbandwidth all_to_host tests).
class HostAggregateCase final : public Case {
 public:
  HostAggregateCase(std::vector<int> gpus, bool to_host, size_t bytes, uint64_t seed)
      : gpus_(std::move(gpus)), to_host_(to_host), bytes_(bytes), seed_(seed) {}
  std::string key() const override { return "p2p/host_aggregate"; }
  int gpu() const override { return gpus_.front(); }
  gpu::Stream stream() const override { return streams_.empty() ? nullptr : streams_.front(); }
  nlohmann::json params() const override {
    return {{"direction", to_host_ ? "all_to_host" : "host_to_all"},
            {"gpus", gpus_.size()},
            {"engine", "ce"},
            {"scope", "host"},
            {"bytes", bytes_}};
  }
  std::string waived_reason() const override {
    for (int g : gpus_)
      if (bytes_ > gpu::runtime().devices[static_cast<size_t>(g)].memory_bytes / 2)
        return fmt::format("{} B does not fit in half of GPU{}'s memory", bytes_, g);
    return {};
  }
  nlohmann::json model() const override {
    return {{"bytes", bytes_counted()},
            {"bytes_counted", "sum over GPUs of bytes over each GPU's link"},
            {"host_memory", "pinned, allocated by the calling thread (no NUMA binding)"}};
  }
  void setup() override {
    for (int g : gpus_) {
      streams_.push_back(gpu::create_stream(g));
      done_.push_back(gpu::create_event(g));
      device_.emplace_back(g, bytes_);
      host_.emplace_back(bytes_, HostMemory::pinned);
      if (to_host_)
        fill(device_.back().data(), bytes_, seed_ + static_cast<uint64_t>(g), streams_.back());
      else
        for (size_t i = 0; i < bytes_; ++i)
          host_.back().as<uint8_t>()[i] = pattern(seed_ + static_cast<uint64_t>(g), i);
    }
    start_ = gpu::create_event(gpus_.front());
  }
  void launch() override {
    gpu::record_event(start_, streams_[0]);
    for (size_t i = 1; i < gpus_.size(); ++i) gpu::stream_wait_event(streams_[i], start_);
    for (size_t i = 0; i < gpus_.size(); ++i) {
      if (to_host_)
        gpu::copy_async(host_[i].data(), device_[i].data(), bytes_, gpu::CopyKind::device_to_host, streams_[i]);
      else
        gpu::copy_async(device_[i].data(), host_[i].data(), bytes_, gpu::CopyKind::host_to_device, streams_[i]);
    }
    for (size_t i = 1; i < gpus_.size(); ++i) {
      gpu::record_event(done_[i], streams_[i]);
      gpu::stream_wait_event(streams_[0], done_[i]);
    }
  }
  std::string verify() override {
    for (size_t i = 0; i < gpus_.size(); ++i) {
      gpu::synchronize(streams_[i]);
      const uint64_t seed = seed_ + static_cast<uint64_t>(gpus_[i]);
      if (to_host_) {
        for (size_t k = 0; k < bytes_; ++k)
          if (host_[i].as<uint8_t>()[k] != pattern(seed, k))
            return fmt::format("GPU{}: host byte {} = {} (expected {})", gpus_[i], k, host_[i].as<uint8_t>()[k],
                               pattern(seed, k));
      } else if (auto w = check(device_[i].data(), bytes_, seed, streams_[i], "device"); !w.empty()) {
        return fmt::format("GPU{}: {}", gpus_[i], w);
      }
    }
    return {};
  }
  std::vector<Metric> metrics(const Statistics& s) const override {
    LinkRate sum{0.0, ""};
    for (int g : gpus_) {
      const LinkRate l = device_host_link(g);
      if (!l.gbps) {
        sum = {};
        break;
      }
      *sum.gbps += *l.gbps;
      sum.source += (sum.source.empty() ? "" : " + ") + l.source;
    }
    auto m = bandwidth_metrics(bytes_counted(), s, sum.gbps, sum.source);
    extra_ = m.front().value ? link_extra(*m.front().value, sum) : nlohmann::json::object();
    return m;
  }
  nlohmann::json extra() override { return extra_; }
  void teardown() override {
    device_.clear();
    host_.clear();
    for (auto e : done_) gpu::destroy_event(e);
    gpu::destroy_event(start_);
    for (auto s : streams_) gpu::destroy_stream(s);
    done_.clear();
    streams_.clear();
    start_ = nullptr;
  }

 private:
  double bytes_counted() const { return static_cast<double>(bytes_) * static_cast<double>(gpus_.size()); }
  std::vector<int> gpus_;
  bool to_host_;
  size_t bytes_;
  uint64_t seed_;
  std::vector<gpu::Stream> streams_;
  std::vector<gpu::Event> done_;
  gpu::Event start_ = nullptr;
  std::vector<DeviceBuffer> device_;
  std::vector<HostBuffer> host_;
  mutable nlohmann::json extra_ = nlohmann::json::object();
};

}  // namespace

CaseList p2p_device_cases(const P2pOptions& o, const std::vector<int>& gpus, const std::string& no_gpu_reason,
                          uint64_t seed) {
  if (gpus.size() < 2) return waived_p2p_device_cases(o, no_gpu_reason.empty() ? "needs two GPUs" : no_gpu_reason);
  CaseList cases;
  const size_t bytes = static_cast<size_t>(o.size);
  for (bool bidir : {false, true})
    for (Engine e : {Engine::ce, Engine::sm})
      for (bool peer : {true, false})
        for (int s : gpus)
          for (int d : gpus)
            if (s != d) cases.push_back(std::make_unique<PairCopyCase>(s, d, e, peer, bidir, bytes, seed));
  for (int s : gpus)
    for (int d : gpus)
      if (s != d) cases.push_back(std::make_unique<PingPongCase>(s, d, static_cast<uint32_t>(o.iters)));
  for (bool peer : {true, false})
    for (int s : gpus)
      for (int d : gpus)
        if (s != d) cases.push_back(std::make_unique<CopyCallLatencyCase>(s, d, peer));
  return cases;
}

CaseList p2p_host_cases(const P2pOptions& o, const std::vector<int>& gpus, const std::string& no_gpu_reason) {
  if (gpus.empty()) return waived_p2p_host_cases(o, no_gpu_reason.empty() ? "needs a GPU" : no_gpu_reason);
  CaseList cases;
  for (bool to_host : {true, false})
    cases.push_back(std::make_unique<HostAggregateCase>(gpus, to_host, static_cast<size_t>(o.size), 11));
  return cases;
}

}  // namespace gcb::bench
