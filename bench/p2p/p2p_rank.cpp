// Rank pairs of `gcbench p2p`: send/recv bandwidth (uni, bidirectional) and small-message
// ping-pong latency between every ordered pair of ranks, over whatever Communicator the World
// gave us — NCCL (NVLink/PCIe inside a node, InfiniBand between nodes), MPI on host memory
// (host-to-host paths), or threads in one process (memcpy through the ThreadCommunicator).
// Every pair is timed in turn while the other ranks wait at the barrier of the RankTimer; each
// sample is the maximum over ranks, so both ends of the pair agree.
#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <optional>
#include <vector>

#include "collectives/rank_timer.hpp"
#include "bench/common/transfer_metrics.hpp"
#include "bench/p2p/p2p.hpp"
#include "bench/p2p/p2p_links.hpp"
#include "bench/common/runner.hpp"
#include "collectives/factory.hpp"
#include "collectives/thread_communicator.hpp"
#include "core/buffer.hpp"
#include "core/error.hpp"
#include "core/gpu.hpp"
#include "kernels/mem/stream_ops.hpp"

namespace gcb::bench {

namespace {

enum class Measure { bandwidth, bidir_bandwidth, latency };

const char* measure_key(Measure m) {
  switch (m) {
    case Measure::bandwidth: return "p2p/bandwidth";
    case Measure::bidir_bandwidth: return "p2p/bidir_bandwidth";
    case Measure::latency: return "p2p/latency";
  }
  return "p2p/bandwidth";
}

// What the numbers of a backend are a measurement of (shown in the matrix titles).
std::string path_label(std::string_view backend, bool processes) {
  const CommunicatorBackend& b = communicator_backend(backend);
  return processes && b.spans_processes ? fmt::format("{}, between processes", b.link) : std::string(b.link);
}

uint8_t pattern(uint64_t seed, int rank, size_t i) {
  return static_cast<uint8_t>(kernels::mix64(seed + static_cast<uint64_t>(rank) * 0x9E3779B97F4A7C15ull + i) >> 56);
}

// A message buffer in the backend's memory space: device memory for NCCL, host otherwise.
class MessageBuffer {
 public:
  MessageBuffer(bool device, int gpu, size_t bytes) : bytes_(bytes) {
    if (device)
      dev_ = DeviceBuffer(gpu, bytes);
    else
      host_.resize(bytes);
  }
  void* data() { return dev_.data() ? dev_.data() : host_.data(); }
  void write(const std::vector<uint8_t>& v) {
    if (dev_.data()) {
      gpu::copy_async(dev_.data(), v.data(), bytes_, gpu::CopyKind::default_kind, nullptr);
      gpu::synchronize(nullptr);
    } else {
      std::memcpy(host_.data(), v.data(), bytes_);
    }
  }
  std::vector<uint8_t> read() {
    if (!dev_.data()) return host_;
    std::vector<uint8_t> v(bytes_);
    gpu::copy_async(v.data(), dev_.data(), bytes_, gpu::CopyKind::default_kind, nullptr);
    gpu::synchronize(nullptr);
    return v;
  }

 private:
  size_t bytes_;
  DeviceBuffer dev_;
  std::vector<uint8_t> host_;
};

class RankPairs {
 public:
  RankPairs(const P2pOptions& o, const HarnessOptions& h, RankContext& ctx, Runner* runner, uint64_t seed)
      : o_(o), h_(h), ctx_(ctx), runner_(ctx.rank == 0 ? runner : nullptr), seed_(seed) {}

  uint64_t run() {
    gather_places();
    if (ctx_.size < 2) {
      if (runner_)
        for (Measure m : {Measure::bandwidth, Measure::bidir_bandwidth, Measure::latency}) {
          Result r;
          r.key = measure_key(m);
          r.params = {{"scope", "rank"}, {"backend", std::string(ctx_.world_comm.backend())}};
          r.status = Status::waived;
          r.reason = "needs two ranks";
          runner_->add(std::move(r));
        }
      return 0;
    }
    uint64_t wrong = 0;
    for (Measure m : {Measure::bandwidth, Measure::bidir_bandwidth, Measure::latency}) {
      const std::string name = std::string(measure_key(m)).substr(4);  // "p2p/latency" → "latency"
      if (std::find(o_.rank_measures.begin(), o_.rank_measures.end(), name) == o_.rank_measures.end()) continue;
      const bool once = o_.symmetric_once && m != Measure::bandwidth;
      for (int s = 0; s < ctx_.size; ++s)
        for (int d = 0; d < ctx_.size; ++d)
          if (s != d && (!once || s < d)) wrong += measure_pair(m, s, d);
    }
    return wrong;
  }

 private:
  bool device_memory() const { return ctx_.world_comm.memory() == MemorySpace::device; }

  // Every rank's host name and device, for the link a pair crosses.
  void gather_places() {
    constexpr size_t kHostBytes = 64;
    std::vector<char> mine(kHostBytes, '\0');
    std::memcpy(mine.data(), ctx_.host.data(), std::min(ctx_.host.size(), kHostBytes - 1));
    std::vector<char> all(kHostBytes * static_cast<size_t>(ctx_.size));
    ctx_.host_comm.all_gather(mine.data(), all.data(), kHostBytes, DType::i8);
    for (int r = 0; r < ctx_.size; ++r) hosts_.emplace_back(all.data() + static_cast<size_t>(r) * kHostBytes);
    devices_.resize(static_cast<size_t>(ctx_.size));
    const int32_t dev = ctx_.device;
    ctx_.host_comm.all_gather(&dev, devices_.data(), 1, DType::i32);
  }

  // The link between ranks s and d as seen from rank 0's host (homogeneous nodes assumed):
  // different hosts → the network port; same host with NCCL → the GPUs' link; else unknown
  // (host memory copies cross no measured link).
  LinkRate link(int s, int d) const {
    if (hosts_[static_cast<size_t>(s)] != hosts_[static_cast<size_t>(d)]) return host_network_link();
    if (device_memory())
      return device_pair_link(devices_[static_cast<size_t>(s)], devices_[static_cast<size_t>(d)], true);
    return {};
  }

  uint64_t measure_pair(Measure m, int s, int d) {
    const bool in_pair = ctx_.rank == s || ctx_.rank == d;
    const int peer = ctx_.rank == s ? d : s;
    const size_t bytes = static_cast<size_t>(m == Measure::latency ? o_.latency_size : o_.size);
    Communicator& comm = ctx_.world_comm;
    std::optional<MessageBuffer> send, recv;
    if (in_pair) {
      send.emplace(device_memory(), ctx_.device, bytes);
      recv.emplace(device_memory(), ctx_.device, bytes);
      std::vector<uint8_t> p(bytes);
      for (size_t i = 0; i < bytes; ++i) p[i] = pattern(seed_, ctx_.rank, i);
      send->write(p);
    }
    std::function<void()> launch = [] {};
    if (in_pair) {
      void* sb = send->data();
      void* rb = recv->data();
      switch (m) {
        case Measure::bandwidth:
          if (ctx_.rank == s)
            launch = [&comm, sb, bytes, d] { comm.send(sb, bytes, DType::i8, d); };
          else
            launch = [&comm, rb, bytes, s] { comm.recv(rb, bytes, DType::i8, s); };
          break;
        case Measure::bidir_bandwidth:
          launch = [&comm, sb, rb, bytes, peer] {
            comm.group_start();
            comm.send(sb, bytes, DType::i8, peer);
            comm.recv(rb, bytes, DType::i8, peer);
            comm.group_end();
          };
          break;
        case Measure::latency:  // one launch = one round trip; one-way = RTT / 2 (osu_latency)
          if (ctx_.rank == s)
            launch = [&comm, sb, rb, bytes, d] {
              comm.send(sb, bytes, DType::i8, d);
              comm.recv(rb, bytes, DType::i8, d);
            };
          else
            launch = [&comm, sb, rb, bytes, s] {
              comm.recv(rb, bytes, DType::i8, s);
              comm.send(sb, bytes, DType::i8, s);
            };
          break;
      }
    }
    // Rank threads each on a CPU of their own while the pair is timed, as coll's cells keep them
    // (RanksKeptApart; docs/readme-p2p.md): let go, two rank threads met on one CPU in some
    // processes, and the same 8 B latency read 1.9 µs in one process and 109 µs (the spin) in the
    // next; kept apart, 1.9–2.05 µs in 12 processes. Recorded in extra.rank_cpus (-1: not pinned).
    std::optional<RanksKeptApart> apart;
    if (!ctx_.processes) apart.emplace(ctx_.host_comm);
    const std::vector<int32_t> cpus = apart ? apart->all_cpus() : std::vector<int32_t>{};
    RankTimer timer(comm, ctx_.host_comm, TimingMode::pipelined, RankCombine::max, false);
    AgreedClock clock(ctx_.host_comm);
    const Measurement meas = measure(timer, launch, h_, {}, clock);
    comm.synchronize();

    // Whoever received checks every byte against the sender's pattern.
    double local_wrong = 0;
    const bool received = in_pair && (m != Measure::bandwidth || ctx_.rank == d);
    if (received) {
      const std::vector<uint8_t> got = recv->read();
      for (size_t i = 0; i < bytes; ++i) local_wrong += got[i] != pattern(seed_, peer, i) ? 1 : 0;
    }
    double wrong = 0;
    ctx_.host_comm.all_reduce(&local_wrong, &wrong, 1, DType::f64, ReduceOp::sum);
    if (runner_) {
      Result r = to_result(m, s, d, bytes, meas, static_cast<uint64_t>(wrong));
      if (!cpus.empty()) r.extra["rank_cpus"] = cpus;
      runner_->add(std::move(r));
    }
    return static_cast<uint64_t>(wrong);
  }

  Result to_result(Measure m, int s, int d, size_t bytes, const Measurement& meas, uint64_t wrong) const {
    Result r;
    r.key = measure_key(m);
    r.params = {{"src", s},
                {"dst", d},
                {"scope", "rank"},
                {"backend", std::string(ctx_.world_comm.backend())},
                {"path", path_label(ctx_.world_comm.backend(), ctx_.processes)},
                {"bytes", bytes}};
    r.take(meas);
    if (m == Measure::latency) {
      r.metrics = latency_metrics(meas.stats, 2);  // RTT / 2
      r.model = {{"one_way", "round-trip time / 2 (osu_latency)"}};
    } else {
      const bool bidir = m == Measure::bidir_bandwidth;
      LinkRate l = link(s, d);
      if (bidir && l.gbps) {
        *l.gbps *= 2;
        l.source += " x2 directions";
      }
      const double counted = static_cast<double>(bytes) * (bidir ? 2 : 1);
      r.metrics = bandwidth_metrics(counted, meas.stats, l.gbps, l.source);
      if (r.metrics.front().value) r.extra = link_extra(*r.metrics.front().value, l);
      r.model = {{"bytes", counted}, {"bytes_counted", bidir ? "sum of both directions" : "bytes sent once"}};
    }
    r.extra["src_host"] = hosts_[static_cast<size_t>(s)];
    r.extra["dst_host"] = hosts_[static_cast<size_t>(d)];
    if (device_memory()) {
      r.extra["src_device"] = devices_[static_cast<size_t>(s)];
      r.extra["dst_device"] = devices_[static_cast<size_t>(d)];
    }
    if (wrong > 0) {
      r.status = Status::fail;
      r.reason = fmt::format("verification failed: {} bytes received wrong", wrong);
    }
    return r;
  }

  const P2pOptions& o_;
  const HarnessOptions& h_;
  RankContext& ctx_;
  Runner* runner_;
  uint64_t seed_;
  std::vector<std::string> hosts_;
  std::vector<int32_t> devices_;
};

}  // namespace

uint64_t run_p2p_ranks_on_rank(const P2pOptions& o, const HarnessOptions& harness, RankContext& ctx, Runner* runner,
                               uint64_t seed) {
  return RankPairs(o, harness, ctx, runner, seed).run();
}

}  // namespace gcb::bench
