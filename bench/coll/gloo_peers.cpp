// gcb_gloo_peers: the gloo backend against a bare Gloo all-reduce, same run (a benchmark, not a
// test). Every rank is a process started with torchrun's variables (scripts/envrun.sh): they
// meet through the same store and transport as gcbench's World (collectives/tcp_store.hpp,
// GlooCommunicator), and for each size from 8 B up by ×8 time, in interleaved rounds (the order
// alternating): the bare call, `gloo::allreduce` with gloo::sum<float> on one buffer in a plain
// loop, as a Gloo user writes it (facebookincubator/gloo gloo/allreduce.h), and
// GlooCommunicator::all_reduce in library order on fp32 (what `gcbench coll --backend gloo`
// times). A sample is `ops` calls after a barrier, the max over ranks of its seconds per call.
// Rank 0 prints per size the medians and the median over rounds of bare ÷ ours (≥ 1: ours is as
// fast as the bare call) and checks ours' result exactly (integer inputs; exit 1 if wrong).
//   scripts/envrun.sh -n 2 -- ... is for gcbench; run this one as
//   GCBENCH=build/bench/coll/gcb_gloo_peers scripts/envrun.sh -n 2 -- [rounds] [max_bytes] [ops]
#include <fmt/format.h>
#include <gloo/allreduce.h>
#include <gloo/math.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/prefix_store.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <string>
#include <vector>

#include "collectives/gloo_communicator.hpp"
#include "collectives/tcp_store.hpp"
#include "collectives/world.hpp"
#include "core/error.hpp"

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace gcb;
  using clock = std::chrono::steady_clock;
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 5;
  const size_t max_bytes = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : size_t{1} << 20;
  const int ops = argc > 3 ? std::atoi(argv[3]) : 20;
  const LauncherInfo l = detect_launcher();
  if (!l.launched || l.store_host.empty()) {
    fmt::print(stderr, "gcb_gloo_peers: start it with torchrun's variables (scripts/envrun.sh)\n");
    return 2;
  }
  try {
    auto world = std::make_shared<GlooWorld>();
    world->timeout = std::chrono::seconds(60);
    world->store = std::make_shared<TcpStore>(l.store_host, l.store_port, l.rank == 0, world->timeout);
    world->device = gloo_tcp_device(local_address_towards(l.store_host));
    GlooCommunicator ours(world, "ours", l.rank, l.size, ReductionOrder::library);
    GlooCommunicator control(world, "control", l.rank, l.size, ReductionOrder::library);
    // The bare side: its own context on the same store and device, as a Gloo program makes one.
    auto bare_ctx = std::make_shared<gloo::rendezvous::Context>(l.rank, l.size);
    bare_ctx->setTimeout(world->timeout);
    {
      gloo::rendezvous::PrefixStore store("bare-ctx", *world->store);
      bare_ctx->connectFullMesh(store, world->device);
    }
    int wrong = 0;
    if (l.rank == 0)
      fmt::print(
          "# gcb_gloo_peers: {} ranks, {} rounds, {} ops per sample; us per all_reduce (fp32 sum), max over "
          "ranks\n#      bytes     bare     ours  bare/ours\n",
          l.size, rounds, ops);
    for (size_t bytes = 8; bytes <= max_bytes; bytes *= 8) {
      const size_t count = bytes / sizeof(float);
      std::vector<float> a(count), b(count);
      std::vector<double> bare_t, ours_t, ratio;
      auto sample = [&](bool bare) {
        control.barrier();
        const auto t0 = clock::now();
        for (int i = 0; i < ops; ++i) {
          if (bare) {
            gloo::AllreduceOptions opts(bare_ctx);
            opts.setOutput(a.data(), count);
            opts.setReduceFunction(static_cast<void (*)(void*, const void*, const void*, size_t)>(&gloo::sum<float>));
            gloo::allreduce(opts);
          } else {
            ours.all_reduce(b.data(), b.data(), count, DType::f32, ReduceOp::sum);
          }
        }
        double s = std::chrono::duration<double>(clock::now() - t0).count() / ops, worst = 0;
        control.all_reduce(&s, &worst, 1, DType::f64, ReduceOp::max);
        return worst;
      };
      for (int r = 0; r < rounds; ++r) {
        double tb = 0, to = 0;
        if (r % 2 == 0) {
          tb = sample(true);
          to = sample(false);
        } else {
          to = sample(false);
          tb = sample(true);
        }
        bare_t.push_back(tb * 1e6);
        ours_t.push_back(to * 1e6);
        ratio.push_back(tb / to);
      }
      // Exactness of ours on integer data: every rank contributes rank + 1.
      std::fill(b.begin(), b.end(), static_cast<float>(l.rank + 1));
      ours.all_reduce(b.data(), b.data(), count, DType::f32, ReduceOp::sum);
      const float want = static_cast<float>(l.size * (l.size + 1) / 2);
      for (float x : b) wrong += x != want ? 1 : 0;
      if (l.rank == 0)
        fmt::print("{:12} {:8.1f} {:8.1f} {:10.3f}\n", bytes, median(bare_t), median(ours_t), median(ratio));
    }
    int total = 0;
    control.all_reduce(&wrong, &total, 1, DType::i32, ReduceOp::sum);
    if (l.rank == 0 && total > 0) fmt::print("#wrong {}\n", total);
    control.barrier();
    return total > 0 ? 1 : 0;
  } catch (const std::exception& e) {
    fmt::print(stderr, "gcb_gloo_peers: rank {}: {}\n", l.rank, e.what());
    return 3;
  }
}
