// gcbench's collective backends against the MPI library in one run. Under mpirun -np N, for each
// collective and size, in interleaved rounds (the order alternating, so drift hits every side):
//   bare       the MPI call itself (MPI_Allreduce, MPI_Allgather, …) in a loop: the peer
//   library    `gcbench coll --backend mpi`'s own timed launch (CollCase::bound on MpiCommunicator in library
//              order, seeded inputs; its result is checked exactly after the rounds: #wrong)
//   ranked     MpiCommunicator in rank order (what the training engines use: bitwise = threads)
//   threads    ThreadCommunicator with N rank threads inside rank 0's process, the other
//              processes parked in a sleeping MPI_Ibarrier so they take no core
// Bare, library and ranked run on the same buffers. Every side is timed by the same harness and
// RankTimer (pipelined, max over ranks, the same warm-up and sample count); a sample of bare and
// library is one plain loop over the call (BoundCall::repeat), of ranked and threads a
// Communicator call per op through the harness' launch. Printed: the
// median per op of each side and, as median of per-round ratios, bare ÷ library and bare ÷ ranked
// (≥ 1 means gcbench is as fast as the bare loop) and MPI's time ÷ threads' time (≥ 1 means the
// threads backend is faster; for sizes ≥ 1 MiB this is also the busbw ratio threads ÷ MPI).
//   mpirun --bind-to none -np 2 build/bench/coll/gcb_coll_peers [rounds] [max_bytes]
// (--bind-to none: Open MPI binds each rank to one core by default, which would put the threads
// backend's rank threads of rank 0's process on a single core and time context switches.)
#include <mpi.h>
#include <time.h>

#include <fmt/format.h>

#include <chrono>
#include <cstdlib>
#include <functional>
#include <map>
#include <vector>

#include "bench/coll/coll.hpp"
#include "collectives/rank_timer.hpp"
#include "collectives/mpi_communicator.hpp"
#include "collectives/thread_communicator.hpp"
#include "collectives/verifiable_case.hpp"
#include "collectives/world.hpp"
#include "core/error.hpp"
#include "core/stats.hpp"
#include "core/watchdog.hpp"

namespace {

using namespace gcb;
using namespace gcb::bench;

constexpr int kOpsPerSample = 20;

HarnessOptions fixed_samples() {
  HarnessOptions h;
  h.warmup = 3;
  h.batch = kOpsPerSample;
  h.min_samples = h.max_samples = 15;  // a fixed count: every rank stops together
  h.min_time = 0;
  h.max_time = 1e9;
  return h;
}

// Buffers of one op at one size (float elements, coll_shape's nccl-tests conventions).
struct Buffers {
  explicit Buffers(const CollShape& s)
      : send(std::max<size_t>(s.send_count, 1), 1.0f), recv(std::max<size_t>(s.recv_count, 1)) {}
  std::vector<float> send, recv;
};

// `op` as a bare MPI program calls it, on `in` and `out`: a timed batch is a plain loop of the
// MPI call (bound_loop), as in OSU's osu_allreduce and the other OSU collective tests.
BoundCall bare_call(CollOp op, const CollShape& s, float* in, float* out, MPI_Comm comm) {
  const int n = static_cast<int>(s.count);
  switch (op) {
    case CollOp::all_reduce: return bound_loop([=] { MPI_CHECK(MPI_Allreduce(in, out, n, MPI_FLOAT, MPI_SUM, comm)); });
    case CollOp::all_gather:
      return bound_loop([=] { MPI_CHECK(MPI_Allgather(in, n, MPI_FLOAT, out, n, MPI_FLOAT, comm)); });
    case CollOp::reduce_scatter:
      return bound_loop([=] { MPI_CHECK(MPI_Reduce_scatter_block(in, out, n, MPI_FLOAT, MPI_SUM, comm)); });
    case CollOp::broadcast: return bound_loop([=] { MPI_CHECK(MPI_Bcast(out, n, MPI_FLOAT, 0, comm)); });
    case CollOp::reduce: return bound_loop([=] { MPI_CHECK(MPI_Reduce(in, out, n, MPI_FLOAT, MPI_SUM, 0, comm)); });
    case CollOp::alltoall:
      return bound_loop([=] { MPI_CHECK(MPI_Alltoall(in, n, MPI_FLOAT, out, n, MPI_FLOAT, comm)); });
    default: break;
  }
  GCB_CHECK(false, fmt::format("coll_peers: no bare call for {}", coll_op_name(op)));  // main() lists the ops
  return {};
}

// The same launch through a Communicator (broadcast in place, as MPI_Bcast is).
std::function<void()> comm_call(CollOp op, const CollShape& s, float* in, float* out, Communicator& c) {
  const size_t n = s.count;
  switch (op) {
    case CollOp::all_reduce: return [=, &c] { c.all_reduce(in, out, n, DType::f32, ReduceOp::sum); };
    case CollOp::all_gather: return [=, &c] { c.all_gather(in, out, n, DType::f32); };
    case CollOp::reduce_scatter: return [=, &c] { c.reduce_scatter(in, out, n, DType::f32, ReduceOp::sum); };
    case CollOp::broadcast: return [=, &c] { c.broadcast(out, out, n, DType::f32, 0); };
    case CollOp::reduce: return [=, &c] { c.reduce(in, out, n, DType::f32, ReduceOp::sum, 0); };
    case CollOp::alltoall: return [=, &c] { c.all_to_all(in, out, n, DType::f32); };
    default: break;
  }
  GCB_CHECK(false, fmt::format("coll_peers: no call for {}", coll_op_name(op)));  // main() lists the ops
  return {};
}

// Median seconds per op of `call` on every rank of `comm` (a batch is call.repeat where set).
double time_on(Communicator& comm, const BoundCall& call) {
  RankTimer timer(comm, comm, TimingMode::pipelined, RankCombine::max, false);
  timer.use_bound(call);
  AgreedClock clock(comm);
  return measure(timer, call.launch, fixed_samples(), {}, clock).stats.median;
}

// MPI ranks other than 0 sleep until rank 0 has timed the threads backend: a sleeping
// MPI_Test loop on an MPI_Ibarrier, so the parked processes leave every core to the threads.
void park_until(bool measuring_here, const std::function<void()>& measure_threads) {
  MPI_Request request = MPI_REQUEST_NULL;
  if (measuring_here) {
    measure_threads();
    MPI_CHECK(MPI_Ibarrier(MPI_COMM_WORLD, &request));
    MPI_CHECK(MPI_Wait(&request, MPI_STATUS_IGNORE));
    return;
  }
  MPI_CHECK(MPI_Ibarrier(MPI_COMM_WORLD, &request));
  for (int done = 0; !done;) {
    MPI_CHECK(MPI_Test(&request, &done, MPI_STATUS_IGNORE));
    const timespec pause{0, 200'000};
    nanosleep(&pause, nullptr);
  }
}

double threads_time(CollOp op, uint64_t bytes, int ranks) {
  double seconds = 0;
  ThreadWorld world(ranks);
  std::vector<std::unique_ptr<ThreadCommunicator>> comms;
  for (int r = 0; r < ranks; ++r) comms.push_back(world.communicator(r));
  run_rank_threads(world, [&](int r) {
    Communicator& c = *comms[static_cast<size_t>(r)];
    const CollShape s = coll_shape(op, bytes, DType::f32, ranks);
    Buffers b(s);
    spread_rank_threads(c);  // a fresh world per cell, as run_threads does once per run
    const double t = time_on(c, BoundCall{comm_call(op, s, b.send.data(), b.recv.data(), c), {}, nullptr});
    if (r == 0) seconds = t;
  });
  return seconds;
}

struct Row {
  std::vector<double> bare, library, ranked, threads;
};

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  // Armed as in every gcbench run (collectives/world.cpp): the library and ranked sides then pay
  // what `gcbench coll --backend mpi` pays per call, watched scopes included.
  arm_watchdog(std::chrono::minutes(10), [](const WatchExpiry& e) { exit_on_expiry(e); });
  int code = 0;
  try {
    const int rounds = argc > 1 ? std::atoi(argv[1]) : 3;
    const uint64_t max_bytes = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : uint64_t{16} << 20;
    MpiCommunicator library(MPI_COMM_WORLD, false, ReductionOrder::library);
    MpiCommunicator ranked(MPI_COMM_WORLD, false, ReductionOrder::rank_ordered);
    const int rank = library.rank(), size = library.size();
    set_error_rank(rank);
    RankContext lib_ctx{rank, size, rank, size, 1, -1, host_name(), true, library, library};
    const std::vector<CollOp> ops = {CollOp::all_reduce, CollOp::all_gather, CollOp::reduce_scatter,
                                     CollOp::broadcast,  CollOp::reduce,     CollOp::alltoall};
    std::vector<uint64_t> sizes;
    for (uint64_t b = 8; b <= max_bytes; b *= 8) sizes.push_back(b);
    if (rank == 0)
      fmt::print(
          "# coll_peers: {} MPI ranks (threads backend: {} threads in one process), fp32 sum, {} rounds, "
          "{} samples × {} ops per side, pipelined, max over ranks; medians of per-round values\n",
          size, size, rounds, fixed_samples().max_samples, kOpsPerSample);
    if (rank == 0)
      fmt::print("{:>15} {:>10} {:>10} {:>10} {:>10} {:>10} {:>11} {:>11} {:>12}\n", "op", "bytes", "bare(us)",
                 "library", "ranked", "threads", "bare/lib", "bare/rank", "mpi/threads");
    for (CollOp op : ops) {
      for (uint64_t bytes : sizes) {
        const CollShape s = coll_shape(op, bytes, DType::f32, size);
        if (s.count == 0) continue;
        // The library side is `gcbench coll --backend mpi`'s own launch (CollCase, its seeded
        // inputs, root 0; broadcast in place as MPI_Bcast is); the bare and ranked sides run on
        // its buffers.
        const CollCaseSpec spec{op, DType::f32, ReduceOp::sum, 0, s, op == CollOp::broadcast, 1};
        CollCase lib_case(lib_ctx, spec);
        lib_case.init_inputs();
        auto* in = reinterpret_cast<float*>(lib_case.send_ptr());
        auto* out = reinterpret_cast<float*>(lib_case.recv_ptr());
        const auto bare = bare_call(op, s, in, out, MPI_COMM_WORLD);
        const BoundCall& lib = lib_case.bound();  // what `gcbench coll` times (bench/coll/coll.cpp)
        const BoundCall rk{comm_call(op, s, in, out, ranked), {}, nullptr};  // a virtual call per op, as training
        Row row;
        std::vector<double> lib_ratio, rank_ratio, thread_ratio;
        for (int round = 0; round < rounds; ++round) {
          // Alternate the order so that slow drift cannot favour one side.
          double t_bare = 0, t_lib = 0, t_rank = 0, t_threads = 0;
          auto threads = [&] { park_until(rank == 0, [&] { t_threads = threads_time(op, bytes, size); }); };
          if (round % 2 == 0) {
            t_bare = time_on(library, bare);
            t_lib = time_on(library, lib);
            t_rank = time_on(library, rk);
            threads();
          } else {
            threads();
            t_rank = time_on(library, rk);
            t_lib = time_on(library, lib);
            t_bare = time_on(library, bare);
          }
          row.bare.push_back(t_bare);
          row.library.push_back(t_lib);
          row.ranked.push_back(t_rank);
          row.threads.push_back(t_threads);
          lib_ratio.push_back(t_bare / t_lib);
          rank_ratio.push_back(t_bare / t_rank);
          thread_ratio.push_back(std::min(t_bare, t_lib) / t_threads);
        }
        // The library side's result, checked exactly as `gcbench coll` checks it (#wrong, all ranks).
        double wrong_here = static_cast<double>(lib_case.check()), wrong = 0;
        library.all_reduce(&wrong_here, &wrong, 1, DType::f64, ReduceOp::sum);
        if (rank == 0)
          fmt::print("{:>15} {:>10} {:10.2f} {:10.2f} {:10.2f} {:10.2f} {:11.3f} {:11.3f} {:12.3f}{}\n",
                     coll_op_name(op), s.bytes, percentile(row.bare, 0.5) * 1e6, percentile(row.library, 0.5) * 1e6,
                     percentile(row.ranked, 0.5) * 1e6, percentile(row.threads, 0.5) * 1e6, percentile(lib_ratio, 0.5),
                     percentile(rank_ratio, 0.5), percentile(thread_ratio, 0.5),
                     wrong > 0 ? fmt::format("  #wrong {}", wrong) : std::string());
        if (wrong > 0) code = kExitVerifyFailed;
        std::fflush(stdout);
      }
    }
  } catch (const std::exception& e) {
    fmt::print(stderr, "coll_peers: {}\n", e.what());
    code = kExitFault;
  }
  MPI_Finalize();
  return code;
}
