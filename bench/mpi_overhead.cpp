// How much MpiCommunicator adds to a bare MPI call: in one run, an 8-byte all-reduce through
// MPI_Allreduce and through MpiCommunicator::all_reduce, both timed by the one harness in
// isolated mode (untimed barrier, one op, max over ranks per sample), interleaved in rounds so
// that drift hits both alike. Prints the ratio of medians (target ≤ 1.10). Run under mpirun:
//   mpirun -np 2 build/bench/gcb_mpi_overhead [rounds]
#include <mpi.h>

#include <fmt/format.h>

#include <cstdlib>
#include <vector>

#include "bench/coll_timing.hpp"
#include "collectives/mpi_communicator.hpp"
#include "core/error.hpp"
#include "core/stats.hpp"

int main(int argc, char** argv) {
  using namespace gcb;
  using namespace gcb::bench;
  MPI_Init(&argc, &argv);
  int code = 0;
  try {
    const int rounds = argc > 1 ? std::atoi(argv[1]) : 5;
    MpiCommunicator comm(MPI_COMM_WORLD);
    set_error_rank(comm.rank());
    double in = comm.rank() + 1.0, out = 0;
    HarnessOptions h;
    h.warmup = 100;
    h.batch = 1;
    h.min_samples = h.max_samples = 2000;  // fixed count: identical stopping on every rank
    h.max_time = 1e9;
    h.min_time = 0;
    std::vector<double> bare, ours;
    for (int round = 0; round < rounds; ++round) {
      RankTimer t1(comm, comm, TimingMode::isolated, RankCombine::max, false);
      const Measurement a = measure(
          t1, [&] { MPI_CHECK(MPI_Allreduce(&in, &out, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD)); }, h);
      RankTimer t2(comm, comm, TimingMode::isolated, RankCombine::max, false);
      const Measurement b = measure(t2, [&] { comm.all_reduce(&in, &out, 1, DType::f64, ReduceOp::sum); }, h);
      bare.push_back(a.stats.median);
      ours.push_back(b.stats.median);
    }
    const double bare_med = percentile(bare, 0.5), ours_med = percentile(ours, 0.5);
    if (comm.rank() == 0) {
      fmt::print("# mpi_overhead: 8 B all-reduce, isolated mode, {} ranks, {} rounds × {} samples (median of round medians)\n",
                 comm.size(), rounds, h.min_samples);
      fmt::print("bare MPI_Allreduce           {:8.3f} us\n", bare_med * 1e6);
      fmt::print("MpiCommunicator::all_reduce  {:8.3f} us\n", ours_med * 1e6);
      fmt::print("ratio (target <= 1.10)       {:8.3f}\n", ours_med / bare_med);
    }
  } catch (const std::exception& e) {
    fmt::print(stderr, "mpi_overhead: {}\n", e.what());
    code = 3;
  }
  MPI_Finalize();
  return code;
}
