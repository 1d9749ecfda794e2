// MpiCommunicator under mpirun (ctest cases mpi_np2, mpi_np4): the same exact checks as the
// threads backend over MPI_COMM_WORLD and a split, in both reduction orders, plus bitwise
// equality with ThreadCommunicator for non-integer fp32/fp16/bf16 reductions (rank order). Exit code 0 only if every
// rank saw no mismatch.
#include <mpi.h>

#include <cstdio>
#include <cstring>
#include <exception>
#include <fmt/format.h>

#include "collectives/factory.hpp"
#include "collectives/mpi_communicator.hpp"
#include "collectives/thread_communicator.hpp"
#include "collectives/world.hpp"
#include "core/error.hpp"
#include "tests/collectives/collective_checks.hpp"

namespace {

using gcb::Communicator;
using gcb::DType;
using gcb::ReduceOp;
using Bytes = std::vector<std::byte>;

enum class Kind { all_reduce, reduce_scatter, reduce };

// Rank `rank`'s input for a cross-backend comparison, as dtype `t`.
Bytes cross_input(DType t, int rank, size_t n) {
  const auto x = gcb::test::fractional_input(rank, n);
  Bytes b(n * gcb::dtype_size(t));
  for (size_t i = 0; i < n; ++i) gcb::store_as(t, b.data(), i, x[i]);
  return b;
}

// Runs one reduction on `c`; returns this rank's output (empty for non-roots of reduce).
Bytes run_reduction(Communicator& c, Kind kind, DType t, ReduceOp op, size_t count) {
  const size_t es = gcb::dtype_size(t);
  const size_t n = static_cast<size_t>(c.size());
  switch (kind) {
    case Kind::all_reduce: {
      Bytes b = cross_input(t, c.rank(), count);
      c.all_reduce(b.data(), b.data(), count, t, op);
      return b;
    }
    case Kind::reduce_scatter: {
      Bytes send = cross_input(t, c.rank(), count * n);
      Bytes recv(count * es);
      c.reduce_scatter(send.data(), recv.data(), count, t, op);
      return recv;
    }
    case Kind::reduce: {
      Bytes send = cross_input(t, c.rank(), count);
      Bytes recv(count * es);
      c.reduce(send.data(), recv.data(), count, t, op, 0);
      return c.rank() == 0 ? recv : Bytes{};
    }
  }
  return {};
}

// Bitwise: MPI result on this rank == threads result of the same rank, same inputs.
gcb::test::CheckTally check_matches_threads(gcb::MpiCommunicator& world) {
  gcb::test::CheckTally tally;
  const char* names[] = {"all_reduce", "reduce_scatter", "reduce"};
  // 101 elements take the small (gather) path of every reduction, 5003 the Alltoallv path.
  for (size_t count : {size_t{101}, size_t{5003}}) {
    for (Kind kind : {Kind::all_reduce, Kind::reduce_scatter, Kind::reduce}) {
      for (DType t : {DType::f32, DType::f16, DType::bf16}) {
        for (ReduceOp op : {ReduceOp::sum, ReduceOp::avg}) {
          const Bytes via_mpi = run_reduction(world, kind, t, op, count);
          Bytes via_threads;
          gcb::run_ranks(world.size(), [&](Communicator& c) {
            Bytes out = run_reduction(c, kind, t, op, count);
            if (c.rank() == world.rank()) via_threads = std::move(out);
          });
          if (via_mpi == via_threads) {
            ++tally.passed;
          } else {
            ++tally.failed;
            tally.failures.push_back(std::string("mpi != threads bitwise: ") + names[static_cast<int>(kind)] + " " +
                                     std::string(gcb::dtype_name(t)) + " " + std::string(gcb::reduce_op_name(op)) +
                                     " count " + std::to_string(count) + " on rank " + std::to_string(world.rank()));
          }
        }
      }
    }
  }
  return tally;
}

gcb::test::CheckTally run_all_checks(gcb::MpiCommunicator& world) {
  gcb::test::CheckTally tally;
  // 1 and 37 elements: the small-message path of every reduction; 5000 elements exceed
  // kSmallReductionBytes for every dtype (int8 included): the Alltoallv path.
  static_assert(gcb::MpiCommunicator::kSmallReductionBytes < 5000);
  for (size_t count : {size_t{1}, size_t{37}, size_t{5000}}) tally.add(gcb::test::check_collectives(world, count));
  tally.add(gcb::test::check_ring_shift(world, 29));
  // Parity split: sub-communicators with their own ordering (key reversed).
  auto half = world.split(world.rank() % 2, -world.rank());
  tally.add(gcb::test::check_collectives(*half, 5));
  tally.add(gcb::test::check_ring_shift(*half, 3));
  auto none = world.split(-1, 0);
  if (none != nullptr) {
    ++tally.failed;
    tally.failures.emplace_back("split with a negative color returned a communicator");
  }
  tally.add(check_matches_threads(world));
  // Self-description: host memory, no stream, the library named; MPI_Init (not _thread) gives
  // MPI_THREAD_SINGLE, so only the creating thread may call it.
  const bool described = world.memory() == gcb::MemorySpace::host && world.stream() == nullptr &&
                         !world.library_version().empty() &&
                         world.thread_support() == gcb::ThreadSupport::creating_thread;
  ++(described ? tally.passed : tally.failed);
  if (!described) tally.failures.emplace_back("MpiCommunicator describes itself wrongly");
  return tally;
}

// The library order (MPI_Allreduce, MPI_Reduce_scatter_block, MPI_Reduce; a user-defined op for
// fp16/bf16): the same exact checks — their small-integer inputs make any summation order exact.
gcb::test::CheckTally run_library_checks() {
  gcb::test::CheckTally tally;
  gcb::MpiCommunicator world(MPI_COMM_WORLD, false, gcb::ReductionOrder::library);
  for (size_t count : {size_t{1}, size_t{37}, size_t{5000}}) tally.add(gcb::test::check_collectives(world, count));
  auto half = world.split(world.rank() % 2, -world.rank());
  if (half == nullptr || static_cast<gcb::MpiCommunicator&>(*half).reduction_order() != gcb::ReductionOrder::library) {
    ++tally.failed;
    tally.failures.emplace_back("a split of a library-order communicator lost its order");
    return tally;
  }
  tally.add(gcb::test::check_collectives(*half, 5));
  // The bound path `gcbench coll` times: the same checks, every call through bind(), and each of
  // them resolved into the bare MPI call (so watched per batch by the caller, not per call).
  for (size_t count : {size_t{1}, size_t{37}, size_t{5000}}) {
    gcb::test::BoundCalls bound(world);
    tally.add(gcb::test::check_collectives(bound, count));
    const bool all_direct = bound.bound_calls > 0 && bound.watched == bound.bound_calls;
    ++(all_direct ? tally.passed : tally.failed);
    if (!all_direct)
      tally.failures.push_back(fmt::format("library order, count {}: {} of {} bound calls are the bare MPI call", count,
                                           bound.watched, bound.bound_calls));
  }
  return tally;
}

// Rank order: bind() keeps the rank-ordered reductions (the methods) and binds data movement.
gcb::test::CheckTally run_ranked_bound_checks() {
  gcb::test::CheckTally tally;
  gcb::MpiCommunicator world(MPI_COMM_WORLD, false, gcb::ReductionOrder::rank_ordered);
  for (size_t count : {size_t{1}, size_t{37}, size_t{5000}}) {
    gcb::test::BoundCalls bound(world);
    tally.add(gcb::test::check_collectives(bound, count));
  }
  return tally;
}

// Under mpirun the World makes the data communicator of the row it was asked for: every built
// row started by MPI's launcher world, and every host row made over a host communicator (a host
// row once ran on MPI instead of its own library). MPI is already initialised (main), which the
// World leaves to its owner.
gcb::test::CheckTally run_world_row_checks() {
  gcb::test::CheckTally tally;
  for (const gcb::CommunicatorBackend& b : gcb::communicator_backends()) {
    const bool here = b.bootstrap == gcb::Bootstrap::launcher_world ||
                      (b.bootstrap == gcb::Bootstrap::over_host && b.memory == gcb::MemorySpace::host);
    if (!b.built() || !here) continue;
    gcb::WorldOptions o;
    o.backend = std::string(b.name);
    std::string data, host;
    gcb::run_world(o, [&](gcb::RankContext& ctx) {
      data = std::string(ctx.world_comm.backend());
      host = std::string(ctx.host_comm.backend());
      return 0;
    });
    const std::string want_host(gcb::host_communicator_for(b, true, false).name);
    if (data == b.name && host == want_host) {
      ++tally.passed;
    } else {
      ++tally.failed;
      tally.failures.push_back(fmt::format("run_world --backend {}: data communicator {}, host {} (want {}, {})",
                                           b.name, data, host, b.name, want_host));
    }
  }
  return tally;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  gcb::set_error_rank(rank);
  gcb::test::CheckTally tally;
  try {
    gcb::MpiCommunicator world(MPI_COMM_WORLD);
    tally = run_all_checks(world);
    tally.add(run_library_checks());
    tally.add(run_ranked_bound_checks());
    tally.add(run_world_row_checks());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "rank %d: %s\n", rank, e.what());
    MPI_Abort(MPI_COMM_WORLD, gcb::kExitFault);
  }
  for (size_t i = 0; i < tally.failures.size() && i < 5; ++i)
    std::fprintf(stderr, "FAIL %s\n", tally.failures[i].c_str());
  int local[2] = {tally.passed, tally.failed};
  int total[2] = {0, 0};
  MPI_Allreduce(local, total, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) std::printf("mpi collectives: %d passed, %d failed\n", total[0], total[1]);
  MPI_Finalize();
  return total[1] == 0 ? gcb::kExitOk : gcb::kExitVerifyFailed;
}
